// Every compiled quantized-GEMM variant against its _ref twin over ragged
// shapes (rows not a multiple of the 16-row tile, tokens not a multiple of the
// register tile, K from one group up), and the _ref against float math.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ops/kernels.h"
#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/packed.h"
#include "quant/quantize.h"
#include "support/simd_isas.h"
#include "support/skip.h"

using namespace ember;

namespace {

// Every array of two quantized activations, byte for byte.
void CheckSameActs(const QuantizedActs& got, const QuantizedActs& want) {
  CHECK(got.m == want.m);
  CHECK(got.k == want.k);
  CHECK(got.q == want.q);
  CHECK(got.d == want.d);
  CHECK(got.qsum == want.qsum);
  CHECK(got.sm == want.sm);
  CHECK(got.qsum16 == want.qsum16);
  CHECK(got.dqsum == want.dqsum);
}

struct Case {
  GgmlType type;
  int64_t n, k, m;
};

std::vector<uint8_t> RandomGguf(GgmlType type, int64_t n, int64_t k, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n * k));
  for (float& v : x) v = d(rng);
  const size_t rb = GgmlRowBytes(type, static_cast<uint64_t>(k));
  std::vector<uint8_t> bytes(rb * static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) QuantizeRow(type, &x[r * k], &bytes[r * rb], k);
  return bytes;
}

QGemmFn Pick(const Kernels& k, const PackedMatrix& w) { return k.qgemm_for(w.layout); }

// One GGUF type per native layout and min form: Q4x16 without / with mins,
// Q5x16 without / with mins (Q5_0, Q5_1), Q8x16, IQ4x16 from both its sources
// (IQ4_NL: blocks of 32; IQ4_XS: super-blocks of 256), and the K layouts
// Q4Kx16 (Q4_K), Q5Kx16 (Q5_K), Q3Kx16 (Q3_K), Q2Kx16 (Q2_K) and Q6Kx16 (Q6_K).
constexpr GgmlType kLayoutTypes[] = {GgmlType::kQ4_0,   GgmlType::kQ4_1, GgmlType::kQ5_0,
                                     GgmlType::kQ5_1,   GgmlType::kQ8_0, GgmlType::kQ6_K,
                                     GgmlType::kQ2_K,   GgmlType::kQ3_K, GgmlType::kIQ4_NL,
                                     GgmlType::kIQ4_XS, GgmlType::kQ4_K, GgmlType::kQ5_K};

int64_t BlockElems(GgmlType type) { return FindGgmlType(static_cast<uint32_t>(type))->block_elems; }

// `k` for blocks of 32, or the next multiple of 256 for K-quant super-blocks.
int64_t Cols(GgmlType type, int64_t k) {
  const int64_t b = BlockElems(type);
  return (k + b - 1) / b * b;
}

}  // namespace

TEST_CASE("repack: native layouts keep every weight exactly", "[qgemm]") {
  std::mt19937 rng(5);
  for (GgmlType type : kLayoutTypes) {
    if (!RepackIsExact(type)) continue;  // IQ4_XS: tests/quant/repack_test.cpp
    const int64_t n = 37, k = Cols(type, 96);
    auto src = RandomGguf(type, n, k, rng);
    PackedMatrix w;
    REQUIRE(Repack(type, src.data(), n, k, &w).ok());
    CHECK(w.n_tiles == 3);
    std::vector<float> row(k);
    const size_t rb = GgmlRowBytes(type, k);
    for (int64_t r = 0; r < n; ++r) {
      DequantizeRow(type, &src[r * rb], row.data(), k);
      for (int64_t c = 0; c < k; ++c) {
        INFO(GgmlTypeName(type) << " row " << r << " col " << c);
        REQUIRE(PackedWeight(w, r, c) == row[c]);
      }
    }
  }
  PackedMatrix w;
  std::vector<uint8_t> junk(1000);
  CHECK(Repack(GgmlType::kIQ2_S, junk.data(), 4, 256, &w).code() == Code::kUnsupported);
  CHECK(Repack(GgmlType::kQ8_0, junk.data(), 4, 48, &w).code() == Code::kInvalidArgument);
}

TEST_CASE("qgemm: the reference equals float math on dequantized operands", "[qgemm]") {
  std::mt19937 rng(9);
  for (GgmlType type : kLayoutTypes) {
    const int64_t n = 21, k = Cols(type, 128), m = 3;
    auto src = RandomGguf(type, n, k, rng);
    PackedMatrix w;
    REQUIRE(Repack(type, src.data(), n, k, &w).ok());
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> x(m * k);
    for (float& v : x) v = d(rng);
    QuantizedActs a;
    QuantizeActs_ref(x.data(), m, k, &a);
    std::vector<float> y(m * n);
    Pick(KernelsFor(Isa::kRef), w)(w, 0, w.n_tiles, a, y.data(), n);
    for (int64_t t = 0; t < m; ++t) {
      for (int64_t r = 0; r < n; ++r) {
        double expect = 0, scale = 0, fp16_slack = 0;
        for (int64_t c = 0; c < k; ++c) {
          const double xa = a.q_row(t)[c] * double(a.d_row(t)[c / 32]);
          expect += PackedWeight(w, r, c) * xa;
          scale += std::fabs(PackedWeight(w, r, c) * xa);
        }
        if (w.has_min) {
          // Q4_1's min multiplies sum(x) rounded to fp16 (as ggml's Q8_1.s):
          // allow that rounding, |m| * |s| * 2^-11 per group, |m| <= max |w|.
          for (int64_t g = 0; g < k / 32; ++g) {
            double wmax = 0;
            for (int c = 0; c < 32; ++c)
              wmax = std::max(wmax, double(std::fabs(PackedWeight(w, r, g * 32 + c))));
            fp16_slack += wmax * std::fabs(a.qsum_row(t)[g] * a.d_row(t)[g]) * 1e-3;
          }
        }
        INFO(GgmlTypeName(type) << " t " << t << " r " << r);
        REQUIRE(std::fabs(y[t * n + r] - expect) <= 1e-5 * scale + fp16_slack + 1e-6);
      }
    }
  }
}

TEST_CASE("qgemm: every ISA variant matches _ref over ragged shapes", "[qgemm][isa]") {
  std::vector<Isa> isas = test::SimdIsasToTest();
  if (isas.empty()) EMBER_SKIP("no SIMD variants for this CPU");
  std::mt19937 rng(13);
  const Kernels ref = KernelsFor(Isa::kRef);
  for (Isa isa : isas) {
    const Kernels kern = KernelsFor(isa);
    for (GgmlType type : kLayoutTypes) {
      for (int64_t n : {1, 5, 16, 17, 40}) {
        // Q6_K, IQ4_XS: one and three super-blocks (8 and 24 groups of 32).
        for (int64_t k : BlockElems(type) == 256 ? std::vector<int64_t>{256, 768}
                                                 : std::vector<int64_t>{32, 64, 160}) {
          auto src = RandomGguf(type, n, k, rng);
          PackedMatrix w;
          REQUIRE(Repack(type, src.data(), n, k, &w).ok());
          // Up to 16 tokens the AVX-512 kernels go one tile at a time, in
          // groups of up to 8 tokens (8, 13, 16); from 17 in tile pairs of 4-token
          // groups (17, 18, 19: every size of the last token group).
          for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 8, 13, 16, 17, 18, 19}) {
            std::normal_distribution<float> d(0.0f, 2.0f);
            std::vector<float> x(m * k);
            for (float& v : x) v = d(rng);
            QuantizedActs a;
            QuantizeActs_ref(x.data(), m, k, &a);
            const int64_t ldy = n + 3;  // odd stride; the gap must stay untouched
            std::vector<float> want(m * ldy, -7.0f);
            Pick(ref, w)(w, 0, w.n_tiles, a, want.data(), ldy);
            // Whole, and in two calls split at tile 1 as threads split the
            // tiles: a kernel that pairs tiles must handle odd starts and counts.
            // One and two tokens with and without the software prefetch
            // (ForceOneTokenPrefetch), whichever this CPU would choose.
            for (int prefetch : m <= 2 ? std::vector<int>{1, 0} : std::vector<int>{-1}) {
              ForceOneTokenPrefetch(prefetch);
              for (int64_t split : {int64_t{0}, std::min<int64_t>(1, w.n_tiles)}) {
                std::vector<float> got(m * ldy, -7.0f);
                Pick(kern, w)(w, 0, split, a, got.data(), ldy);
                Pick(kern, w)(w, split, w.n_tiles, a, got.data(), ldy);
                for (int64_t i = 0; i < m * ldy; ++i) {
                  INFO(IsaName(isa)
                       << " " << GgmlTypeName(type) << " n=" << n << " k=" << k << " m=" << m
                       << " split=" << split << " prefetch " << prefetch << " i=" << i);
                  // Same integer sums and the same fma order: the same bits.
                  REQUIRE(std::memcmp(&got[i], &want[i], sizeof(float)) == 0);
                }
              }
            }
            ForceOneTokenPrefetch(-1);
          }
        }
      }
    }
  }
}

TEST_CASE("qgemm: one token over many tiles gives _ref's bits", "[qgemm][isa]") {
  // Decode reads a call's tiles as several streams (the AVX2 kernels: 4
  // consecutive parts of the range, a group of each in turn, the remainder
  // one tile at a time): ranges of 4-13 tiles, ragged last rows, and calls
  // starting at odd tiles, as threads take grains of a matrix.
  std::vector<Isa> isas = test::SimdIsasToTest();
  if (isas.empty()) EMBER_SKIP("no SIMD variants for this CPU");
  std::mt19937 rng(31);
  const Kernels ref = KernelsFor(Isa::kRef);
  for (GgmlType type : kLayoutTypes) {
    for (int64_t n : {64, 149, 208}) {
      const int64_t k = BlockElems(type) == 256 ? 256 : 96;
      auto src = RandomGguf(type, n, k, rng);
      PackedMatrix w;
      REQUIRE(Repack(type, src.data(), n, k, &w).ok());
      std::normal_distribution<float> d(0.0f, 2.0f);
      std::vector<float> x(k);
      for (float& v : x) v = d(rng);
      QuantizedActs a;
      QuantizeActs_ref(x.data(), 1, k, &a);
      std::vector<float> want(n, -7.0f);
      Pick(ref, w)(w, 0, w.n_tiles, a, want.data(), n);
      for (Isa isa : isas) {
        // With and without the software prefetch (ForceOneTokenPrefetch),
        // whichever this CPU would choose.
        for (int prefetch : {1, 0}) {
          ForceOneTokenPrefetch(prefetch);
          for (int64_t split : {int64_t{0}, int64_t{1}, int64_t{3}}) {
            std::vector<float> got(n, -7.0f);
            Pick(KernelsFor(isa), w)(w, 0, split, a, got.data(), n);
            Pick(KernelsFor(isa), w)(w, split, w.n_tiles, a, got.data(), n);
            for (int64_t i = 0; i < n; ++i) {
              INFO(IsaName(isa) << " " << GgmlTypeName(type) << " n=" << n << " split=" << split
                                << " prefetch " << prefetch << " row " << i);
              REQUIRE(std::memcmp(&got[i], &want[i], sizeof(float)) == 0);
            }
          }
        }
        ForceOneTokenPrefetch(-1);
      }
    }
  }
}

TEST_CASE("qgemm: one token prefetches in software except on Zen 4", "[qgemm]") {
  CpuFeatures cpu;
  CHECK(OneTokenPrefetchFor(cpu));  // not an AMD CPU
  cpu.amd = true;
  cpu.family = 0x19;  // Zen 3 / Zen 4: only Zen 4 runs the AVX-512 kernels
  CHECK_FALSE(OneTokenPrefetchFor(cpu));
  cpu.family = 0x1A;  // Zen 5, where the prefetch was measured to pay
  CHECK(OneTokenPrefetchFor(cpu));
  ForceOneTokenPrefetch(0);
  CHECK_FALSE(OneTokenPrefetch());
  ForceOneTokenPrefetch(1);
  CHECK(OneTokenPrefetch());
  ForceOneTokenPrefetch(-1);
}

TEST_CASE("qgemm: IQ4x16 gives the bits of the int8 layout it replaced", "[qgemm][isa]") {
  // IQ4_NL and IQ4_XS went to Q8x16 before (the grid values as int8 quants,
  // the same fp16 scale per 32). IQ4x16 keeps the indices and looks the values
  // up in the kernel: the integer sums and the fma order are the int8
  // layout's, so every ISA gives the same bits as through Q8x16 (and so the
  // same logits as before the layout existed).
  std::mt19937 rng(23);
  std::vector<Isa> isas = test::SimdIsasToTest();
  isas.insert(isas.begin(), Isa::kRef);
  for (GgmlType type : {GgmlType::kIQ4_NL, GgmlType::kIQ4_XS}) {
    const int64_t n = 45, k = 768, m = 7;
    auto src = RandomGguf(type, n, k, rng);
    PackedMatrix w;
    REQUIRE(Repack(type, src.data(), n, k, &w).ok());
    REQUIRE(w.layout == PackedLayout::kIQ4x16);
    // The same weights as Q8_0 blocks: the scale as packed (d[16] after the
    // nibbles of each TileGroup), the grid values as quants.
    std::vector<BlockQ8_0> q8(static_cast<size_t>(n * k / 32));
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t g = 0; g < k / 32; ++g) {
        BlockQ8_0& b = q8[r * (k / 32) + g];
        const uint8_t* group = w.tile(r / 16) + g * w.group_bytes;
        std::memcpy(&b.d, group + PackedQuantBytes(w.layout) + 2 * (r % 16), 2);
        const float d = Fp16ToFp32(b.d);
        for (int c = 0; c < 32; ++c) {
          const float v = PackedWeight(w, r, g * 32 + c);
          b.qs[c] = static_cast<int8_t>(d != 0.0f ? v / d : 0.0f);
          REQUIRE(b.qs[c] * d == v);
        }
      }
    }
    PackedMatrix w8;
    REQUIRE(Repack(GgmlType::kQ8_0, reinterpret_cast<const uint8_t*>(q8.data()), n, k, &w8).ok());
    REQUIRE(w8.layout == PackedLayout::kQ8x16);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> x(m * k);
    for (float& v : x) v = d(rng);
    QuantizedActs a;
    QuantizeActs_ref(x.data(), m, k, &a);
    for (Isa isa : isas) {
      const Kernels kern = KernelsFor(isa);
      std::vector<float> want(m * n), got(m * n);
      Pick(kern, w8)(w8, 0, w8.n_tiles, a, want.data(), n);
      Pick(kern, w)(w, 0, w.n_tiles, a, got.data(), n);
      INFO(IsaName(isa) << " " << GgmlTypeName(type));
      CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("kernels: EMBER_ISA names are parsed and checked", "[qgemm][isa]") {
  Isa isa;
  CHECK(ParseIsa("avx2", &isa));
  CHECK(isa == Isa::kAvx2);
  CHECK_FALSE(ParseIsa("sse9", &isa));
  CHECK(HostCpu().Supports(Isa::kRef));
  CHECK(HostCpu().Supports(HostCpu().Best()));
}

TEST_CASE("qgemm: every ISA variant quantizes activations exactly as _ref", "[qgemm][isa]") {
  std::vector<Isa> isas = test::SimdIsasToTest();
  if (isas.empty()) EMBER_SKIP("no SIMD variants for this CPU");
  std::mt19937 rng(17);
  // 8 groups a row; 19 and 32 (the AVX-512 quantizer takes 16 groups at a
  // time: a whole pass and a short one, two whole ones).
  for (const int64_t k : {256, 608, 1024})
    for (float scale : {1e-6f, 1e-3f, 1.0f, 300.0f, 6e4f}) {
      const int64_t m = 5;
      std::vector<float> x(m * k);
      std::normal_distribution<float> d(0.0f, scale);
      for (float& v : x) v = d(rng);
      for (int j = 0; j < 32; ++j) x[32 + j] = 0.0f;             // an all-zero group
      for (int j = 0; j < 32; ++j) x[64 + j] = 0.5f * (j - 16);  // halves: ties round to even
      x[100] = -x[101];                                          // the max on a negative value
      QuantizedActs want;
      QuantizeActs_ref(x.data(), m, k, &want);
      for (Isa isa : isas) {
        QuantizedActs got;
        QuantizeActs(KernelsFor(isa).quantize_act_rows, x.data(), m, k, &got);
        INFO(IsaName(isa) << " k " << k << " scale " << scale);
        CheckSameActs(got, want);
        // Tokens quantized apart (as a batch's threads do, ops/matmul.cpp):
        // the same bytes, in the opposite order.
        QuantizedActs parts;
        parts.Resize(m, k);
        KernelsFor(isa).quantize_act_rows(x.data(), 2, m, &parts);
        KernelsFor(isa).quantize_act_rows(x.data(), 0, 2, &parts);
        CheckSameActs(parts, want);
      }
    }
}

TEST_CASE("qgemm: a group with a NaN or an infinity gets NaN scales, in every variant", "[qgemm]") {
  // Found by gguf_fuzz (tests/fuzz): a model whose weights make an activation
  // infinite gave x * (127 / inf) = NaN, whose int32 conversion overflowed the
  // AVX2 group sum (UB) and whose int8 cast is UB in _ref. Such a group now
  // has q = 0 and NaN scales (QuantizedActs::SetNonFinite): the products it
  // enters are NaN, and the finite groups are quantized as before.
  const int64_t m = 2, k = 640;  // 20 groups: one whole AVX-512 pass of 16 and a short one
  std::vector<float> x(m * k);
  for (int64_t i = 0; i < m * k; ++i) x[i] = 0.01f * static_cast<float>(i % 37) - 0.2f;
  x[3] = std::numeric_limits<float>::quiet_NaN();            // row 0, group 0
  x[32 + 7] = std::numeric_limits<float>::infinity();        // row 0, group 1
  x[k + 64 + 31] = -std::numeric_limits<float>::infinity();  // row 1, group 2
  x[k + 17 * 32 + 5] = std::numeric_limits<float>::quiet_NaN();  // row 1, group 17
  std::vector<float> finite = x;
  finite[3] = finite[32 + 7] = finite[k + 64 + 31] = finite[k + 17 * 32 + 5] = 0.0f;
  QuantizedActs clean;
  QuantizeActs_ref(finite.data(), m, k, &clean);
  std::vector<Isa> isas = test::SimdIsasToTest();
  isas.insert(isas.begin(), Isa::kRef);
  for (Isa isa : isas) {
    INFO(IsaName(isa));
    QuantizedActs a;
    QuantizeActs(KernelsFor(isa).quantize_act_rows, x.data(), m, k, &a);
    for (int64_t t = 0; t < m; ++t) {
      for (int64_t g = 0; g < k / 32; ++g) {
        INFO("row " << t << " group " << g);
        const bool bad = (t == 0 && g < 2) || (t == 1 && (g == 2 || g == 17));
        const size_t i = static_cast<size_t>(t * (k / 32) + g);
        if (bad) {
          CHECK(std::isnan(a.d[i]));
          CHECK(std::isnan(a.sm[i]));
          CHECK(std::isnan(a.dqsum[i]));
          CHECK(a.qsum[i] == 0);
          CHECK(a.qsum16[2 * i] == 0);
          CHECK(a.qsum16[2 * i + 1] == 0);
          for (int j = 0; j < 32; ++j) CHECK(a.q[t * k + g * 32 + j] == 0);
        } else {
          CHECK(a.d[i] == clean.d[i]);
          CHECK(a.qsum[i] == clean.qsum[i]);
          for (int j = 0; j < 32; ++j)
            CHECK(a.q[t * k + g * 32 + j] == clean.q[t * k + g * 32 + j]);
        }
      }
    }
  }
}

TEST_CASE("qgemm: a matrix larger than the cache block gives the same result", "[qgemm][isa]") {
  // Big tiles (k = 8192: 80 KiB each) make the AVX2 kernel split the tiles
  // into several cache blocks; every output must still equal _ref's.
  std::vector<Isa> isas = test::SimdIsasToTest();
  if (isas.empty()) EMBER_SKIP("no SIMD variants for this CPU");
  std::mt19937 rng(19);
  const Kernels ref = KernelsFor(Isa::kRef);
  for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ5_0, GgmlType::kQ8_0, GgmlType::kQ6_K,
                        GgmlType::kIQ4_NL, GgmlType::kQ4_K, GgmlType::kQ3_K, GgmlType::kQ2_K}) {
    const int64_t n = 70, k = 8192, m = 6;
    auto src = RandomGguf(type, n, k, rng);
    PackedMatrix w;
    REQUIRE(Repack(type, src.data(), n, k, &w).ok());
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> x(m * k);
    for (float& v : x) v = d(rng);
    QuantizedActs a;
    QuantizeActs_ref(x.data(), m, k, &a);
    std::vector<float> want(m * n), got(m * n);
    Pick(ref, w)(w, 0, w.n_tiles, a, want.data(), n);
    for (Isa isa : isas) {
      std::fill(got.begin(), got.end(), -7.0f);
      Pick(KernelsFor(isa), w)(w, 0, w.n_tiles, a, got.data(), n);
      for (int64_t i = 0; i < m * n; ++i) {
        INFO(IsaName(isa) << " " << GgmlTypeName(type) << " i=" << i);
        REQUIRE(std::fabs(got[i] - want[i]) <= 1e-4f * (1.0f + std::fabs(want[i])));
      }
    }
  }
}

TEST_CASE("qgemm: the largest quants times the largest activations do not overflow",
          "[qgemm][isa]") {
  // Every weight at its layout's largest quant (int4 15, int5 31, int8 127 and
  // -127, Q6_K's 63 and 0 with int8 scales 127 and -128, the IQ4 grid's ends
  // -127 and 113, Q4_K / Q5_K's 15 / 31 with scales and mins 63, Q3_K's 7 and 0
  // with scales 31 and -32, Q2_K's 3 with scales and mins 15) and every
  // activation at +-127: the integer sums at their extremes, where a kernel
  // that keeps too many products in int16 saturates (AVX2's maddubs path
  // widens int5 sums every two sub-chunks for this, int6 and the IQ4 grid's
  // int8 sums after every one), or one that packs the halves' sums into int16
  // would. Every variant gives _ref's bits here too.
  const int64_t n = 16, k = 256;
  std::vector<Isa> isas = test::SimdIsasToTest();
  isas.insert(isas.begin(), Isa::kRef);
  for (GgmlType type : kLayoutTypes) {
    std::vector<float> wf(static_cast<size_t>(n * k));
    for (int64_t i = 0; i < n * k; ++i) {
      // Blocks of -1 led by a +1 (rows alternate the sign): Q4_0 / Q5_0 scale
      // by the first value, so the others take the largest quant, 15 / 31
      // (-8 / -16 as offsets); Q8_0 takes -+127. Q4_1 / Q5_1: 0 then 1s.
      wf[i] = (i % 32 == 0 ? 1.0f : -1.0f) * ((i / k) % 2 == 0 ? 1.0f : -1.0f);
      if (type == GgmlType::kQ4_1 || type == GgmlType::kQ5_1) wf[i] = (i % 32 == 0) ? 0.0f : 1.0f;
    }
    const size_t rb = GgmlRowBytes(type, static_cast<uint64_t>(k));
    std::vector<uint8_t> src(rb * n);
    for (int64_t r = 0; r < n; ++r) QuantizeRow(type, &wf[r * k], &src[r * rb], k);
    if (type == GgmlType::kIQ4_NL) {
      // By hand: every index 0 (grid -127: AVX2's sign trick makes int16 pairs
      // of 2 * 127 * 127 = 32258 of 32767) in even rows, every index 15 (113:
      // 241 after AVX-512's + 128) in odd rows. (IQ4_XS from the values above
      // mixes -127 and 113 in each block.)
      REQUIRE(rb == 8 * sizeof(BlockIQ4_NL));
      for (int64_t r = 0; r < n; ++r) {
        for (int64_t b = 0; b < 8; ++b) {
          BlockIQ4_NL blk{};
          blk.d = Fp32ToFp16(1.0f / 1024);
          std::memset(blk.qs, r % 2 == 0 ? 0x00 : 0xFF, sizeof(blk.qs));
          std::memcpy(&src[r * rb + b * sizeof(blk)], &blk, sizeof(blk));
        }
      }
    }
    if (type == GgmlType::kQ6_K) {
      // By hand: quants 63 (even rows; 31 after the offset) or 0 (odd rows:
      // -32). Rows 0-3 mod 8: every scale 127 (even) or -128 (odd), so a
      // group's integer sum reaches 2 * 128 * 16 * 32 * 127 = 16646144, the
      // bound below 2^24 that qgemm_ref.cpp's exactness rests on; rows 4-7 mod
      // 8: scales 127 and -128 in turn per 16 columns. AVX2's int16 sums of one
      // sub-chunk reach 2 * 2 * 63 * 127 = 32004 of 32767.
      static_assert(sizeof(BlockQ6_K) == 210);
      REQUIRE(rb == sizeof(BlockQ6_K));
      for (int64_t r = 0; r < n; ++r) {
        BlockQ6_K b{};
        b.d = Fp32ToFp16(1.0f / 1024);
        std::memset(b.ql, r % 2 == 0 ? 0xFF : 0x00, sizeof(b.ql));
        std::memset(b.qh, r % 2 == 0 ? 0xFF : 0x00, sizeof(b.qh));
        for (int j = 0; j < 16; ++j) {
          const bool plus = r % 8 < 4 ? r % 2 == 0 : j % 2 == 0;
          b.scales[j] = static_cast<int8_t>(plus ? 127 : -128);
        }
        std::memcpy(&src[r * rb], &b, sizeof(b));
      }
    }
    if (type == GgmlType::kQ4_K || type == GgmlType::kQ5_K) {
      // By hand: every quant 15 / 31 (even rows) or 0 (odd rows), every 6-bit
      // scale and min 63: the group sums sc * isum reach 63 * 32 * 31 * 127,
      // AVX2's int16 sums 2 * 2 * 15 * 127 per sub-chunk (4 of them) or 2 * 2
      // * 31 * 127 (2 of them) before they widen.
      for (int64_t r = 0; r < n; ++r) {
        const uint8_t q = r % 2 == 0 ? 0xFF : 0x00;
        if (type == GgmlType::kQ4_K) {
          REQUIRE(rb == sizeof(BlockQ4_K));
          BlockQ4_K b{};
          b.d = Fp32ToFp16(1.0f / 1024);
          b.dmin = Fp32ToFp16(1.0f / 2048);
          std::memset(b.scales, 0xFF, sizeof(b.scales));
          std::memset(b.qs, q, sizeof(b.qs));
          std::memcpy(&src[r * rb], &b, sizeof(b));
        } else {
          REQUIRE(rb == sizeof(BlockQ5_K));
          BlockQ5_K b{};
          b.d = Fp32ToFp16(1.0f / 1024);
          b.dmin = Fp32ToFp16(1.0f / 2048);
          std::memset(b.scales, 0xFF, sizeof(b.scales));
          std::memset(b.qs, q, sizeof(b.qs));
          std::memset(b.qh, q, sizeof(b.qh));
          std::memcpy(&src[r * rb], &b, sizeof(b));
        }
      }
    }
    if (type == GgmlType::kQ3_K) {
      // By hand: even rows every quant 7 (3 after the - 4) with 6-bit scales 63
      // (31 after the - 32), odd rows every quant 0 (-4) with scales 0 (-32).
      REQUIRE(rb == sizeof(BlockQ3_K));
      for (int64_t r = 0; r < n; ++r) {
        const uint8_t fill = r % 2 == 0 ? 0xFF : 0x00;
        BlockQ3_K b{};
        b.d = Fp32ToFp16(1.0f / 1024);
        std::memset(b.hmask, fill, sizeof(b.hmask));
        std::memset(b.qs, fill, sizeof(b.qs));
        std::memset(b.scales, fill, sizeof(b.scales));
        std::memcpy(&src[r * rb], &b, sizeof(b));
      }
    }
    if (type == GgmlType::kQ2_K) {
      // By hand: every quant 3, every 4-bit scale and min 15.
      REQUIRE(rb == sizeof(BlockQ2_K));
      for (int64_t r = 0; r < n; ++r) {
        BlockQ2_K b{};
        b.d = Fp32ToFp16(1.0f / 1024);
        b.dmin = Fp32ToFp16(1.0f / 2048);
        std::memset(b.qs, 0xFF, sizeof(b.qs));
        std::memset(b.scales, 0xFF, sizeof(b.scales));
        std::memcpy(&src[r * rb], &b, sizeof(b));
      }
    }
    PackedMatrix w;
    REQUIRE(Repack(type, src.data(), n, k, &w).ok());
    for (float sign : {1.0f, -1.0f}) {
      std::vector<float> x(static_cast<size_t>(k), sign);
      QuantizedActs a;
      QuantizeActs_ref(x.data(), 1, k, &a);
      std::vector<float> y_ref(static_cast<size_t>(n));
      for (Isa isa : isas) {
        std::vector<float> y(static_cast<size_t>(n));
        Pick(KernelsFor(isa), w)(w, 0, w.n_tiles, a, y.data(), n);
        if (isa == Isa::kRef) y_ref = y;
        INFO(IsaName(isa) << " " << GgmlTypeName(type) << " sign " << sign);
        CHECK(std::memcmp(y.data(), y_ref.data(), y.size() * sizeof(float)) == 0);
        for (int64_t r = 0; r < n; ++r) {
          double expect = 0;
          for (int64_t c = 0; c < k; ++c) {
            expect += double(PackedWeight(w, r, c)) * a.q_row(0)[c] * a.d_row(0)[c / 32];
          }
          INFO(IsaName(isa) << " " << GgmlTypeName(type) << " sign " << sign << " row " << r);
          REQUIRE(std::fabs(y[r] - expect) <= 1e-3 * (1.0 + std::fabs(expect)));
        }
      }
    }
  }
}
