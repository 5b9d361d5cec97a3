// The float GEMM (ops/fgemm.h): every compiled variant gives FGemm_ref's bits
// over ragged shapes (rows not a multiple of the register block, tokens not a
// multiple of the token block, k below, at and above 16 with a tail), for F32,
// F16 and BF16 weights and a strided output; the _ref is checked against
// double-precision sums; the float libraries (ops/fgemm_library.h) within
// f32 rounding of the same sums.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "ops/fgemm.h"
#include "ops/fgemm_library.h"
#include "ops/kernels.h"
#include "quant/fp16.h"
#include "support/simd_isas.h"
#include "support/skip.h"

using namespace ember;

namespace {

// Weights [n, k] of `type` from normal floats (rounded to the type), their
// exact f32 values in `values`.
std::vector<uint8_t> RandomWeights(FloatWeight type, int64_t n, int64_t k, std::mt19937& rng,
                                   std::vector<float>* values) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  const size_t eb = type == FloatWeight::kF32 ? 4 : 2;
  std::vector<uint8_t> bytes(static_cast<size_t>(n * k) * eb);
  values->resize(static_cast<size_t>(n * k));
  for (int64_t i = 0; i < n * k; ++i) {
    const float v = d(rng);
    if (type == FloatWeight::kF32) {
      std::memcpy(&bytes[4 * i], &v, 4);
      (*values)[i] = v;
    } else {
      const uint16_t h = type == FloatWeight::kF16 ? Fp32ToFp16(v) : Fp32ToBf16(v);
      std::memcpy(&bytes[2 * i], &h, 2);
      (*values)[i] = type == FloatWeight::kF16 ? Fp16ToFp32(h) : Bf16ToFp32(h);
    }
  }
  return bytes;
}

constexpr FloatWeight kTypes[] = {FloatWeight::kF32, FloatWeight::kF16, FloatWeight::kBF16};

const char* Name(FloatWeight t) {
  return t == FloatWeight::kF32 ? "F32" : t == FloatWeight::kF16 ? "F16" : "BF16";
}

}  // namespace

TEST_CASE("fgemm: every variant gives FGemm_ref's bits on ragged shapes", "[fgemm]") {
  const std::vector<Isa> isas = test::SimdIsasToTest();
  if (isas.empty()) WARN("no SIMD variants of the float GEMM on this CPU: only _ref checked");
  std::mt19937 rng(11);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (FloatWeight type : kTypes) {
    for (int64_t n : {1, 3, 4, 5, 9, 18}) {
      for (int64_t k : {1, 15, 16, 17, 48, 100}) {
        std::vector<float> wv;
        const std::vector<uint8_t> wb = RandomWeights(type, n, k, rng, &wv);
        const FloatMatrix w{type, wb.data(), n, k};
        for (int64_t m : {1, 2, 3, 4, 5, 7}) {
          std::vector<float> x(static_cast<size_t>(m * k));
          for (float& v : x) v = d(rng);
          const int64_t ldy = n + 3;  // a strided output
          std::vector<float> want(static_cast<size_t>(m * ldy), -1.0f);
          FGemm_ref(w, 0, n, x.data(), m, want.data(), ldy);
          for (Isa isa : isas) {
            const Kernels kt = KernelsFor(isa);
            std::vector<float> got(want.size(), -1.0f);
            // Two calls over a split of the rows: the output of a row does not
            // depend on which call (thread) computes it.
            kt.fgemm(w, 0, n / 2, x.data(), m, got.data(), ldy);
            kt.fgemm(w, n / 2, n, x.data(), m, got.data(), ldy);
            INFO(IsaName(isa) << " " << Name(type) << " n=" << n << " k=" << k << " m=" << m);
            REQUIRE(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
            // One token at a time gives the same bits as the batch.
            std::vector<float> one(static_cast<size_t>(ldy), -1.0f);
            for (int64_t t = 0; t < m; ++t) {
              kt.fgemm(w, 0, n, x.data() + t * k, 1, one.data(), ldy);
              REQUIRE(std::memcmp(one.data(), want.data() + t * ldy, n * sizeof(float)) == 0);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("fgemm: rows in groups give the plain rows' bits in every variant", "[fgemm]") {
  // The order F16 / BF16 matrices get at load (FloatMatrix::group): groups
  // that match a decode block (4, 6), that do not (3, 7), a last group of
  // fewer rows, k with and without a tail; calls split at rows that are not
  // a group's start.
  std::vector<Isa> isas = test::SimdIsasToTest();
  isas.push_back(Isa::kRef);
  std::mt19937 rng(15);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (FloatWeight type : kTypes) {
    for (int64_t group : {2, 3, 4, 6, 7}) {
      for (int64_t n : {1, 5, 13, 26}) {
        for (int64_t k : {15, 16, 37, 64}) {
          std::vector<float> wv;
          const std::vector<uint8_t> wb = RandomWeights(type, n, k, rng, &wv);
          const FloatMatrix plain{type, wb.data(), n, k};
          std::vector<uint8_t> gb(wb.size(), 0xEE);
          const FloatMatrix w = GroupFloatRows(plain, group, gb.data());
          REQUIRE(w.group == group);
          REQUIRE(w.data == gb.data());
          if (n > group && k >= 32) REQUIRE(gb != wb);  // the order did change
          for (int64_t m : {1, 3}) {
            std::vector<float> x(static_cast<size_t>(m * k));
            for (float& v : x) v = d(rng);
            std::vector<float> want(static_cast<size_t>(m * n), -1.0f);
            FGemm_ref(plain, 0, n, x.data(), m, want.data(), n);
            for (Isa isa : isas) {
              const Kernels kt = KernelsFor(isa);
              std::vector<float> got(want.size(), -1.0f);
              const int64_t split = std::min<int64_t>(n, n / 2 + 1);
              kt.fgemm(w, 0, split, x.data(), m, got.data(), n);
              kt.fgemm(w, split, n, x.data(), m, got.data(), n);
              INFO(IsaName(isa) << " " << Name(type) << " group=" << group << " n=" << n
                                << " k=" << k << " m=" << m);
              REQUIRE(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
              std::vector<float> row(static_cast<size_t>(k));
              for (int64_t r = 0; r < n; ++r) {
                kt.float_row(w, r, row.data());
                REQUIRE(std::memcmp(row.data(), &wv[r * k], k * sizeof(float)) == 0);
              }
            }
          }
        }
      }
    }
  }
}

TEST_CASE("fgemm: FGemm_ref is the weights' sum within f32 rounding", "[fgemm]") {
  std::mt19937 rng(12);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (FloatWeight type : kTypes) {
    const int64_t n = 7, k = 333, m = 3;
    std::vector<float> wv;
    const std::vector<uint8_t> wb = RandomWeights(type, n, k, rng, &wv);
    const FloatMatrix w{type, wb.data(), n, k};
    std::vector<float> x(static_cast<size_t>(m * k));
    for (float& v : x) v = d(rng);
    std::vector<float> y(static_cast<size_t>(m * n));
    FGemm_ref(w, 0, n, x.data(), m, y.data(), n);
    for (int64_t t = 0; t < m; ++t) {
      for (int64_t r = 0; r < n; ++r) {
        double exact = 0.0, abs_sum = 0.0;
        for (int64_t i = 0; i < k; ++i) {
          exact += static_cast<double>(wv[r * k + i]) * x[t * k + i];
          abs_sum += std::fabs(static_cast<double>(wv[r * k + i]) * x[t * k + i]);
        }
        // Each of the ~k / 16 + 4 roundings along a lane's chain is at most
        // 2^-24 of a partial sum bounded by abs_sum.
        INFO(Name(type) << " t=" << t << " r=" << r);
        REQUIRE(std::fabs(y[t * n + r] - exact) <= abs_sum * (k / 16 + 8) * 0x1p-24);
      }
    }
  }
}

TEST_CASE("fgemm: FloatRow variants widen exactly", "[fgemm]") {
  std::mt19937 rng(13);
  for (FloatWeight type : kTypes) {
    std::vector<float> wv;
    const int64_t n = 3, k = 77;
    const std::vector<uint8_t> wb = RandomWeights(type, n, k, rng, &wv);
    const FloatMatrix w{type, wb.data(), n, k};
    for (Isa isa : test::SimdIsasToTest()) {
      std::vector<float> row(static_cast<size_t>(k));
      for (int64_t r = 0; r < n; ++r) {
        KernelsFor(isa).float_row(w, r, row.data());
        REQUIRE(std::memcmp(row.data(), &wv[r * k], k * sizeof(float)) == 0);
      }
    }
  }
}

TEST_CASE("fgemm: the float libraries agree with FGemm_ref within f32 rounding", "[fgemm]") {
  int tested = 0;
  for (const char* name : {"onednn", "xnnpack"}) {
    const FloatLibrary* lib = FindFloatLibrary(name);
    if (lib == nullptr) {
      WARN("float library " << name << " not in this build");
      continue;
    }
    ++tested;
    std::mt19937 rng(14);
    std::normal_distribution<float> d(0.0f, 1.0f);
    for (FloatWeight type : kTypes) {
      // Rows past one widening block of the library (2^20 weights at k =
      // 4096: 256 rows), m past the register tiles.
      for (auto [n, k, m] :
           {std::tuple<int64_t, int64_t, int64_t>{33, 64, 1}, {300, 4096, 5}, {17, 100, 40}}) {
        std::vector<float> wv;
        const std::vector<uint8_t> wb = RandomWeights(type, n, k, rng, &wv);
        const FloatMatrix w{type, wb.data(), n, k};
        std::vector<float> x(static_cast<size_t>(m * k));
        for (float& v : x) v = d(rng);
        const int64_t ldy = n + 5;
        std::vector<float> want(static_cast<size_t>(m * ldy), -7.0f), got = want;
        FGemm_ref(w, 0, n, x.data(), m, want.data(), ldy);
        const Status s = lib->gemm(w, x.data(), m, got.data(), ldy, 2);
        INFO(name << " " << Name(type) << " n=" << n << " k=" << k << " m=" << m << ": "
                  << s.message());
        REQUIRE(s.ok());
        for (int64_t t = 0; t < m; ++t) {
          for (int64_t r = 0; r < ldy; ++r) {
            const float g = got[t * ldy + r], e = want[t * ldy + r];
            if (r >= n) {  // the stride's gap is left alone
              REQUIRE(g == -7.0f);
              continue;
            }
            double abs_sum = 0.0;
            for (int64_t i = 0; i < k; ++i) abs_sum += std::fabs(wv[r * k + i] * x[t * k + i]);
            REQUIRE(std::fabs(g - e) <= abs_sum * 2 * (k / 16 + 8) * 0x1p-24);
          }
        }
      }
    }
  }
  if (tested == 0) WARN("no float library in this build: only ember's own kernel is used");
}

TEST_CASE("fgemm: prefill goes to a library only where it is the faster", "[fgemm]") {
  // FloatLibraryFor: below the library's crossover never; F16 and BF16 never
  // with as many threads as make the active kernels' own GEMM the faster at
  // every m (AVX-512: 2); F32 from the crossover. EMBER_FGEMM, when set,
  // decides alone.
  if (std::getenv("EMBER_FGEMM") != nullptr) EMBER_SKIP("EMBER_FGEMM is set");
  const FloatLibrary* lib = DefaultFloatLibrary();
  if (lib == nullptr) EMBER_SKIP("no float library in this build");
  const int own_from = Active().fgemm_widened_from_threads;
  for (int threads : {1, 2, 4}) {
    INFO(threads << " threads");
    CHECK(FloatLibraryFor(FloatWeight::kF32, lib->from_m - 1, threads) == nullptr);
    CHECK(FloatLibraryFor(FloatWeight::kF32, lib->from_m, threads) == lib);
    CHECK(FloatLibraryFor(FloatWeight::kF32, 512, threads) == lib);
    for (FloatWeight type : {FloatWeight::kF16, FloatWeight::kBF16}) {
      const bool own = own_from > 0 && threads >= own_from;
      CHECK(FloatLibraryFor(type, lib->from_m - 1, threads) == nullptr);
      CHECK(FloatLibraryFor(type, 512, threads) == (own ? nullptr : lib));
    }
  }
}
