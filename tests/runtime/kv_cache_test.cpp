// KvCache: where a row's heads are kept (head-major, so one KV head's rows are
// end to end for attention) and the stored form of a row (session state
// files), for each cache type.
#include "runtime/kv/kv_cache.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

#include "quant/fp16.h"
#include "quant/quantize.h"

using namespace ember;

namespace {

constexpr int64_t kHeads = 3, kHeadDim = 16, kKvDim = kHeads * kHeadDim;

// Token t's key / value in layer l: [kv_dim] values that differ per element.
std::vector<float> RowValues(int64_t l, int64_t t, bool value) {
  std::vector<float> x(kKvDim);
  for (int64_t i = 0; i < kKvDim; ++i) {
    x[i] = 0.01f * static_cast<float>(i + 1) + 0.5f * static_cast<float>(t) +
           0.25f * static_cast<float>(l) + (value ? -3.0f : 0.0f);
  }
  return x;
}

// Two layers of different row counts (a windowed layer's ring is smaller).
KvCache Filled(KvType type) {
  KvCache kv(std::vector<int64_t>{7, 4}, kHeads, kHeadDim, type);
  for (int64_t l = 0; l < 2; ++l) {
    for (int64_t t = 0; t < kv.n_rows(l); ++t) {
      kv.Store(l, t, RowValues(l, t, false).data(), RowValues(l, t, true).data());
    }
  }
  return kv;
}

}  // namespace

TEST_CASE("kv cache: a KV head's rows lie end to end at head_dim apart", "[kv]") {
  for (KvType type : {KvType::kF16, KvType::kF32, KvType::kQ8}) {
    INFO(KvTypeName(type));
    const KvCache kv = Filled(type);
    REQUIRE(kv.row_stride() == static_cast<size_t>(kHeadDim));
    for (int64_t l = 0; l < 2; ++l) {
      const int64_t n = kv.n_rows(l);
      for (int64_t h = 0; h < kHeads; ++h) {
        for (int64_t t = 0; t < n; ++t) {
          const std::vector<float> k = RowValues(l, t, false), v = RowValues(l, t, true);
          // The span from row 1: row t at (t - 1) * stride, as the kernels read it.
          const int64_t j = t - 1;
          if (j < 0) continue;
          for (int64_t d = 0; d < kHeadDim; ++d) {
            const size_t at = static_cast<size_t>(j) * kv.row_stride() + static_cast<size_t>(d);
            const float want_k = k[h * kHeadDim + d], want_v = v[h * kHeadDim + d];
            if (type == KvType::kF16) {
              const KvSpan s = kv.SpanF16(l, 1, n - 1, h);
              REQUIRE(s.k[at] == Fp32ToFp16(want_k));
              REQUIRE(s.v[at] == Fp32ToFp16(want_v));
            } else if (type == KvType::kF32) {
              const KvSpanF32 s = kv.SpanF32(l, 1, n - 1, h);
              REQUIRE(s.k[at] == want_k);
              REQUIRE(s.v[at] == want_v);
            } else {
              const KvSpanQ8 s = kv.SpanQ8(l, 1, n - 1, h);
              const size_t sat = static_cast<size_t>(j) * kv.scale_stride();
              // int8 with one scale per (row, head): within half a step.
              REQUIRE(std::abs(s.k_scale[sat] * s.k[at] - want_k) <= 0.5f * s.k_scale[sat] + 1e-6f);
              REQUIRE(std::abs(s.v_scale[sat] * s.v[at] - want_v) <= 0.5f * s.v_scale[sat] + 1e-6f);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("kv cache: a row's stored form is K then V in head order then the scales", "[kv]") {
  for (KvType type : {KvType::kF16, KvType::kF32, KvType::kQ8}) {
    INFO(KvTypeName(type));
    KvCache kv = Filled(type);
    std::vector<uint8_t> row(kv.RowBytes());
    const int64_t l = 1, t = 2;
    kv.ReadRow(l, t, row.data());
    const std::vector<float> k = RowValues(l, t, false), v = RowValues(l, t, true);
    if (type == KvType::kF16) {
      REQUIRE(row.size() == 2 * kKvDim * sizeof(uint16_t));
      std::vector<uint16_t> want(2 * kKvDim);
      for (int64_t i = 0; i < kKvDim; ++i) {
        want[i] = Fp32ToFp16(k[i]);
        want[kKvDim + i] = Fp32ToFp16(v[i]);
      }
      CHECK(std::memcmp(row.data(), want.data(), row.size()) == 0);
    } else if (type == KvType::kF32) {
      REQUIRE(row.size() == 2 * kKvDim * sizeof(float));
      CHECK(std::memcmp(row.data(), k.data(), kKvDim * sizeof(float)) == 0);
      CHECK(std::memcmp(row.data() + kKvDim * sizeof(float), v.data(), kKvDim * sizeof(float)) ==
            0);
    } else {
      REQUIRE(row.size() == 2 * kKvDim + 2 * kHeads * sizeof(float));
      std::vector<int8_t> q(2 * kKvDim);
      std::vector<float> scales(2 * kHeads);
      for (int64_t h = 0; h < kHeads; ++h) {
        QuantizeGroupI8(&k[h * kHeadDim], &q[h * kHeadDim], &scales[h], kHeadDim);
        QuantizeGroupI8(&v[h * kHeadDim], &q[kKvDim + h * kHeadDim], &scales[kHeads + h], kHeadDim);
      }
      CHECK(std::memcmp(row.data(), q.data(), q.size()) == 0);
      CHECK(std::memcmp(row.data() + q.size(), scales.data(), scales.size() * sizeof(float)) == 0);
    }
    // Written into another row and read back: the same bytes, and the row
    // written is the only one changed.
    std::vector<uint8_t> before(kv.RowBytes()), after(kv.RowBytes()), back(kv.RowBytes());
    kv.ReadRow(l, 3, before.data());
    kv.WriteRow(l, 0, row.data());
    kv.ReadRow(l, 0, back.data());
    kv.ReadRow(l, 3, after.data());
    CHECK(back == row);
    CHECK(after == before);
  }
}
