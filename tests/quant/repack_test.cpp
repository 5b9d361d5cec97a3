// Repacking every supported GGUF type into the native layouts: each packed
// weight against the GGUF dequantized value (bit-exact where the mapping is
// exact, within the documented bound where it is not), over ragged shapes, and
// GEMVs through every compiled kernel on repacked K-quant matrices against
// float math.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ops/kernels.h"
#include "ops/matmul.h"
#include "quant/fp16.h"
#include "quant/packed.h"
#include "quant/quantize.h"
#include "support/simd_isas.h"

using namespace ember;

namespace {

// Every type ember both writes and repacks (IQ4_NL / IQ4_XS, which it only
// reads, have their own case below).
constexpr GgmlType kAllTypes[] = {
    GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ8_0, GgmlType::kQ5_0, GgmlType::kQ5_1,
    GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kF16,  GgmlType::kBF16,
    GgmlType::kF32,  GgmlType::kQ2_K, GgmlType::kQ3_K};

// Rows of weights like a model's: normal, a per-row scale in [0.005, 0.1],
// and one weight in 500 an outlier 8 times larger.
std::vector<float> ModelLikeWeights(int64_t n, int64_t k, std::mt19937& rng) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::uniform_real_distribution<float> scale(0.005f, 0.1f);
  std::uniform_int_distribution<int> outlier(0, 499);
  std::vector<float> x(static_cast<size_t>(n * k));
  for (int64_t r = 0; r < n; ++r) {
    const float s = scale(rng);
    for (int64_t c = 0; c < k; ++c) x[r * k + c] = s * nd(rng) * (outlier(rng) == 0 ? 8.0f : 1.0f);
  }
  return x;
}

std::vector<uint8_t> ToGguf(GgmlType type, const std::vector<float>& x, int64_t n, int64_t k) {
  const size_t rb = GgmlRowBytes(type, static_cast<uint64_t>(k));
  std::vector<uint8_t> bytes(rb * static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) QuantizeRow(type, &x[r * k], &bytes[r * rb], k);
  return bytes;
}

// The bound on |packed - GGUF| for weight `c` of a row (see RepackIsExact and
// docs/FORMATS.md), given the row's dequantized values.
double ErrorBound(GgmlType type, const float* w, int64_t c) {
  if (RepackIsExact(type)) return 0.0;
  const int64_t g = c / 32;
  if (type == GgmlType::kIQ4_XS) {
    // grid * (fp16(dl) - dl): 2^-11 of |w| (plus 2^-25 per grid step where dl
    // is an fp16 subnormal).
    return std::fabs(w[c]) * std::ldexp(1.0, -11) + 127 * std::ldexp(1.0, -25);
  }
  // Requantized to int8: half a step d, d = max|w| / 127 rounded up to fp16.
  double amax = 0;
  for (int64_t j = g * 32; j < g * 32 + 32; ++j) amax = std::max(amax, double(std::fabs(w[j])));
  const double d = amax / 127 * (1 + std::ldexp(1.0, -10)) + std::ldexp(1.0, -24);
  return 0.5 * d * (1 + 1e-6);
}

// The source's quantization step for group g of a row (0 for float types).
double SourceStep(GgmlType type, const uint8_t* row, int64_t g) {
  switch (type) {
    case GgmlType::kQ5_1:
      return Fp16ToFp32(reinterpret_cast<const BlockQ5_1*>(row)[g].d);
    case GgmlType::kQ5_K: {
      const auto& b = reinterpret_cast<const BlockQ5_K*>(row)[g / 8];
      int sc, m;
      UnpackScaleMinK4(b.scales, static_cast<int>(g % 8), &sc, &m);
      return double(Fp16ToFp32(b.d)) * sc;
    }
    case GgmlType::kQ6_K: {  // the larger of the group's two sub-block steps
      const auto& b = reinterpret_cast<const BlockQ6_K*>(row)[g / 8];
      const int i = static_cast<int>(g % 8) * 2;
      return double(Fp16ToFp32(b.d)) * std::max(std::abs(b.scales[i]), std::abs(b.scales[i + 1]));
    }
    default:
      return 0.0;
  }
}

std::vector<Isa> KernelIsas() {
  std::vector<Isa> out = {Isa::kRef};
  for (Isa isa :
       {Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Vnni, Isa::kNeon, Isa::kNeonDot, Isa::kNeonI8mm}) {
    if (test::CanTestVariants(isa)) out.push_back(isa);
  }
  return out;
}

}  // namespace

TEST_CASE("repack: every weight equals the GGUF value or stays within its bound", "[quant]") {
  std::mt19937 rng(21);
  for (GgmlType type : kAllTypes) {
    const int64_t block = FindGgmlType(static_cast<uint32_t>(type))->block_elems;
    for (int64_t n : {1, 37}) {  // one partial tile; two full tiles and a partial one
      const int64_t k = block == 256 ? 512 : 96;
      const auto x = ModelLikeWeights(n, k, rng);
      const auto src = ToGguf(type, x, n, k);
      PackedMatrix w;
      REQUIRE(Repack(type, src.data(), n, k, &w).ok());
      CHECK(w.n_tiles == (n + 15) / 16);
      CHECK(w.layout == (type == GgmlType::kQ4_0 || type == GgmlType::kQ4_1   ? PackedLayout::kQ4x16
                         : type == GgmlType::kQ5_0 || type == GgmlType::kQ5_1 ? PackedLayout::kQ5x16
                         : type == GgmlType::kQ4_K ? PackedLayout::kQ4Kx16
                         : type == GgmlType::kQ5_K ? PackedLayout::kQ5Kx16
                         : type == GgmlType::kQ3_K ? PackedLayout::kQ3Kx16
                         : type == GgmlType::kQ2_K ? PackedLayout::kQ2Kx16
                         : type == GgmlType::kQ6_K ? PackedLayout::kQ6Kx16
                                                   : PackedLayout::kQ8x16));
      const size_t rb = GgmlRowBytes(type, static_cast<uint64_t>(k));
      std::vector<float> row(static_cast<size_t>(k));
      double worst_vs_bound = 0, worst_vs_step = 0;
      for (int64_t r = 0; r < n; ++r) {
        DequantizeRow(type, &src[r * rb], row.data(), k);
        for (int64_t c = 0; c < k; ++c) {
          const double err = std::fabs(double(PackedWeight(w, r, c)) - row[c]);
          const double bound = ErrorBound(type, row.data(), c);
          INFO(GgmlTypeName(type) << " row " << r << " col " << c << " err " << err << " bound "
                                  << bound);
          REQUIRE(err <= bound);
          if (bound > 0) worst_vs_bound = std::max(worst_vs_bound, err / bound);
          const double step = SourceStep(type, &src[r * rb], c / 32);
          if (step > 0) worst_vs_step = std::max(worst_vs_step, err / step);
        }
      }
      INFO(GgmlTypeName(type) << " n " << n);
      // Q5_1, Q5_K and Q6_K (which have a step) are exact.
      CHECK(worst_vs_step == 0.0);
      if (n > 1 && !RepackIsExact(type)) CHECK(worst_vs_bound > 0.3);  // the bound is not slack
    }
  }
}

TEST_CASE("repack: which types repack, which exactly, and what is refused", "[quant]") {
  for (GgmlType t : kAllTypes) CHECK(CanRepack(t));
  for (GgmlType t : {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ8_0, GgmlType::kQ5_0,
                     GgmlType::kQ5_1, GgmlType::kQ2_K, GgmlType::kQ3_K, GgmlType::kQ4_K,
                     GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kIQ4_NL}) {
    CHECK(RepackIsExact(t));
  }
  for (GgmlType t : {GgmlType::kF16, GgmlType::kBF16, GgmlType::kF32, GgmlType::kIQ4_XS}) {
    CHECK_FALSE(RepackIsExact(t));
  }
  PackedMatrix w;
  std::vector<uint8_t> junk(4096);
  CHECK(Repack(GgmlType::kIQ2_XXS, junk.data(), 2, 256, &w).code() == Code::kUnsupported);
  CHECK_FALSE(CanRepack(GgmlType::kQ8_1));
  // K-quant rows are whole super-blocks of 256.
  CHECK(Repack(GgmlType::kQ4_K, junk.data(), 2, 96, &w).code() == Code::kInvalidArgument);
  CHECK(Repack(GgmlType::kF16, junk.data(), 2, 48, &w).code() == Code::kInvalidArgument);

  // A K-quant super-block whose d or dmin is inf or nan is refused (the exact
  // layouts would carry it into every weight it scales).
  {
    BlockQ4_K q4{};
    q4.d = 0x7E00;  // nan
    Status s = Repack(GgmlType::kQ4_K, reinterpret_cast<const uint8_t*>(&q4), 1, 256, &w);
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(s.message().find("not finite") != std::string::npos);
    BlockQ6_K q6{};
    q6.d = 0xFC00;  // -inf
    s = Repack(GgmlType::kQ6_K, reinterpret_cast<const uint8_t*>(&q6), 1, 256, &w);
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(s.message().find("Q6_K super-block d") != std::string::npos);
    BlockQ2_K q2{};
    q2.dmin = 0x7C00;  // inf
    s = Repack(GgmlType::kQ2_K, reinterpret_cast<const uint8_t*>(&q2), 1, 256, &w);
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(s.message().find("Q2_K super-block dmin") != std::string::npos);
  }

  // Float weights that no int8 group with an fp16 scale can hold are refused.
  std::vector<float> f(64, 0.5f);
  f[40] = std::numeric_limits<float>::infinity();
  CHECK(Repack(GgmlType::kF32, reinterpret_cast<const uint8_t*>(f.data()), 1, 64, &w).code() ==
        Code::kInvalidArgument);
  f[40] = std::nanf("");
  CHECK(Repack(GgmlType::kF32, reinterpret_cast<const uint8_t*>(f.data()), 1, 64, &w).code() ==
        Code::kInvalidArgument);
  f[40] = 1e10f;  // scale 1e10 / 127 > 65504
  CHECK(Repack(GgmlType::kF32, reinterpret_cast<const uint8_t*>(f.data()), 1, 64, &w).code() ==
        Code::kInvalidArgument);
  // The largest finite group still fits: 65504 * 127 -> scale 65504, q = 127.
  f[40] = 65504.0f * 127.0f;
  REQUIRE(Repack(GgmlType::kF32, reinterpret_cast<const uint8_t*>(f.data()), 1, 64, &w).ok());
  CHECK(PackedWeight(w, 0, 40) == f[40]);
}

TEST_CASE("repack: rows reported read are never read again", "[quant]") {
  // The loader drops a file's pages of the rows Repack reports read (the peak
  // of loading: packed weights plus about a MiB of source). Here those rows
  // are overwritten with 0xFF bytes (NaN scales, NaN floats) as soon as they
  // are reported: the packed bytes must still equal a plain repack's. One
  // type per repacking path (int8 from quants, int8 from floats, K, K16).
  std::mt19937 rng(7);
  const int64_t k = 512;
  for (GgmlType type : {GgmlType::kQ8_0, GgmlType::kF16, GgmlType::kQ4_K, GgmlType::kQ6_K}) {
    INFO(GgmlTypeName(type));
    const size_t rb = GgmlRowBytes(type, static_cast<uint64_t>(k));
    const int64_t per_report = static_cast<int64_t>((size_t{1} << 20) / rb);
    const int64_t n = 3 * per_report + 21;  // three reports and a ragged last tile
    // 32 distinct quantized rows, repeated: the quantizer's cost stays small.
    const std::vector<uint8_t> distinct = ToGguf(type, ModelLikeWeights(32, k, rng), 32, k);
    std::vector<uint8_t> src(rb * static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) {
      std::memcpy(&src[rb * static_cast<size_t>(r)], &distinct[rb * static_cast<size_t>(r % 32)],
                  rb);
    }
    PackedMatrix plain, released;
    REQUIRE(Repack(type, src.data(), n, k, &plain).ok());
    std::vector<int64_t> reports;
    const RepackConsumedFn poison = [&](int64_t rows) {
      const int64_t from = reports.empty() ? 0 : reports.back();
      reports.push_back(rows);
      REQUIRE(rows > from);
      REQUIRE(rows <= n);
      std::memset(&src[rb * static_cast<size_t>(from)], 0xFF,
                  rb * static_cast<size_t>(rows - from));
    };
    REQUIRE(Repack(type, src.data(), n, k, &released, poison).ok());
    CHECK(reports == std::vector<int64_t>{per_report, 2 * per_report, 3 * per_report, n});
    REQUIRE(released.bytes() == plain.bytes());
    CHECK(std::memcmp(released.data.get(), plain.data.get(), plain.bytes()) == 0);
  }
}

TEST_CASE(
    "repack: into the caller's storage gives the plain repack's bytes and writes nothing outside",
    "[quant]") {
  // The loader repacks every matrix into one allocation of its own (huge
  // pages): the bytes must be the owning repack's, padding rows included
  // (the storage starts as garbage), within the RepackedBytes given; and the
  // matrix must not free what it does not own (ASan would report it).
  std::mt19937 rng(8);
  const int64_t k = 512, n = 37;  // a ragged last tile
  for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ6_K}) {
    INFO(GgmlTypeName(type));
    const std::vector<uint8_t> src = ToGguf(type, ModelLikeWeights(n, k, rng), n, k);
    PackedMatrix plain;
    REQUIRE(Repack(type, src.data(), n, k, &plain).ok());
    const size_t bytes = static_cast<size_t>(RepackedBytes(type, n, k));
    REQUIRE(bytes == plain.bytes());
    constexpr size_t kGuard = 64;
    std::vector<uint8_t> storage(bytes + 2 * kGuard, 0xCD);
    {
      PackedMatrix into;
      REQUIRE(Repack(type, src.data(), n, k, &into, {}, storage.data() + kGuard).ok());
      CHECK(into.data.get() == storage.data() + kGuard);
    }  // destroyed: the storage stays the caller's
    CHECK(std::memcmp(storage.data() + kGuard, plain.data.get(), bytes) == 0);
    for (size_t i = 0; i < kGuard; ++i) {
      REQUIRE(storage[i] == 0xCD);
      REQUIRE(storage[kGuard + bytes + i] == 0xCD);
    }
  }
}

TEST_CASE("repack: zero groups, tiny groups and extreme Q6_K scales", "[quant]") {
  // A zero group gets scale 0; a group whose max / 127 is below the smallest
  // fp16 normal gets a subnormal scale that still bounds the error.
  std::vector<float> f(96, 0.0f);
  for (int j = 32; j < 64; ++j) f[j] = 1e-7f * static_cast<float>(j - 48);
  for (int j = 64; j < 96; ++j) f[j] = static_cast<float>(j - 80);
  PackedMatrix w;
  REQUIRE(Repack(GgmlType::kF32, reinterpret_cast<const uint8_t*>(f.data()), 1, 96, &w).ok());
  for (int j = 0; j < 96; ++j) {
    INFO("col " << j);
    const double err = std::fabs(PackedWeight(w, 0, j) - f[j]);
    if (j < 32) CHECK(err == 0.0);
    if (j >= 32 && j < 64) CHECK(err <= std::ldexp(1.0, -25) * 1.0001);  // d = 2^-24
    if (j >= 64) CHECK(err <= 0.5 * 16 / 127 * (1 + std::ldexp(1.0, -9)));
  }

  // Q6_K with scales -128 and 127 and quants at both ends: exact.
  BlockQ6_K b{};
  b.d = Fp32ToFp16(0.01f);
  for (int k = 0; k < 16; ++k) b.scales[k] = static_cast<int8_t>(k % 2 == 0 ? -128 : 127);
  for (int i = 0; i < 128; ++i) b.ql[i] = static_cast<uint8_t>(i % 3 == 0 ? 0x00 : 0xFF);
  for (int i = 0; i < 64; ++i) b.qh[i] = static_cast<uint8_t>(i % 5 == 0 ? 0x00 : 0xFF);
  REQUIRE(Repack(GgmlType::kQ6_K, reinterpret_cast<const uint8_t*>(&b), 1, 256, &w).ok());
  std::vector<float> y(256);
  DequantizeRow(GgmlType::kQ6_K, &b, y.data(), 256);
  CHECK(w.layout == PackedLayout::kQ6Kx16);
  for (int c = 0; c < 256; ++c) {
    INFO("col " << c);
    CHECK(PackedWeight(w, 0, c) == y[c]);
  }
}

TEST_CASE("repack: GEMV on repacked K-quant and IQ4 matrices matches float math", "[quant]") {
  // y = W x with W repacked from Q2_K / Q3_K / Q4_K / Q5_K / Q6_K / IQ4_NL /
  // IQ4_XS, through
  // every compiled kernel, against the float dot product of the GGUF
  // dequantized weights with the unquantized activations. The allowed error is
  // built from the inputs: per column, |w| times the activation's int8
  // rounding (d_a (1/2 + 127 * 2^-11): d_a is rounded to fp16 after the quants
  // are chosen) plus |x| times the weight's repacking bound, plus float
  // rounding of the sum.
  std::mt19937 rng(33);
  for (GgmlType type : {GgmlType::kQ2_K, GgmlType::kQ3_K, GgmlType::kQ4_K, GgmlType::kQ5_K,
                        GgmlType::kQ6_K, GgmlType::kIQ4_NL, GgmlType::kIQ4_XS}) {
    for (int64_t n : {5, 16, 45}) {
      const int64_t k = 768, m = 3;
      const auto wf = ModelLikeWeights(n, k, rng);
      const auto src = ToGguf(type, wf, n, k);
      PackedMatrix w;
      REQUIRE(Repack(type, src.data(), n, k, &w).ok());
      std::normal_distribution<float> nd(0.0f, 1.5f);
      std::vector<float> x(static_cast<size_t>(m * k));
      for (float& v : x) v = nd(rng);
      QuantizedActs a;
      QuantizeActs_ref(x.data(), m, k, &a);

      const size_t rb = GgmlRowBytes(type, static_cast<uint64_t>(k));
      std::vector<double> expect(static_cast<size_t>(m * n)), tol(static_cast<size_t>(m * n));
      std::vector<float> row(static_cast<size_t>(k));
      for (int64_t r = 0; r < n; ++r) {
        DequantizeRow(type, &src[r * rb], row.data(), k);
        for (int64_t t = 0; t < m; ++t) {
          double e = 0, bound = 0, mag = 0;
          for (int64_t c = 0; c < k; ++c) {
            const double xv = x[t * k + c];
            double amax = 0;
            for (int64_t j = c / 32 * 32; j < c / 32 * 32 + 32; ++j) {
              amax = std::max(amax, double(std::fabs(x[t * k + j])));
            }
            const double da = amax / 127 * (0.5 + 127 * std::ldexp(1.0, -11));
            e += row[c] * xv;
            bound += std::fabs(row[c]) * da + std::fabs(xv) * ErrorBound(type, row.data(), c);
            mag += std::fabs(row[c] * xv);
          }
          expect[t * n + r] = e;
          tol[t * n + r] = bound + 1e-5 * mag;
        }
      }
      for (Isa isa : KernelIsas()) {
        const Kernels kern = KernelsFor(isa);
        const QGemmFn fn = kern.qgemm_for(w.layout);
        std::vector<float> y(static_cast<size_t>(m * n), -7.0f);
        fn(w, 0, w.n_tiles, a, y.data(), n);
        for (int64_t i = 0; i < m * n; ++i) {
          INFO(IsaName(isa) << " " << GgmlTypeName(type) << " n=" << n << " i=" << i << " got "
                            << y[i] << " want " << expect[i] << " tol " << tol[i]);
          REQUIRE(std::fabs(y[i] - expect[i]) <= tol[i]);
        }
      }
      // And through MatMul, as the model runs it (best ISA, two threads).
      WeightView view;
      view.type = type;
      view.n_rows = n;
      view.n_cols = k;
      view.packed = &w;
      MatMulScratch scratch;
      std::vector<float> y(static_cast<size_t>(m * n));
      MatMul(view, x.data(), m, y.data(), n, 2, &scratch);
      for (int64_t i = 0; i < m * n; ++i) REQUIRE(std::fabs(y[i] - expect[i]) <= tol[i]);
    }
  }
}

TEST_CASE("repack: IQ4_NL exactly and IQ4_XS within fp16 rounding of its scales", "[quant]") {
  // ember reads these types but does not write them: pseudo-random blocks
  // (finite fp16 scales, every 6-bit IQ4_XS scale), and blocks of model-like
  // weights from the tests' plain quantizer; every weight against
  // DequantizeRow. Both go to IQ4x16 at their own 4.5 bits per weight (IQ4_XS:
  // 4.25 in the file; the packed scale is an fp16 per 32).
  std::mt19937 rng(41);
  for (GgmlType type : {GgmlType::kIQ4_NL, GgmlType::kIQ4_XS}) {
    for (bool model_like : {false, true}) {
      const int64_t n = 37, k = 512;
      const size_t rb = GgmlRowBytes(type, k);
      const size_t block = type == GgmlType::kIQ4_NL ? sizeof(BlockIQ4_NL) : sizeof(BlockIQ4_XS);
      std::vector<uint8_t> src(rb * n);
      if (model_like) {
        const auto x = ModelLikeWeights(n, k, rng);
        for (int64_t r = 0; r < n; ++r) QuantizeRow(type, &x[r * k], &src[r * rb], k);
      } else {
        uint32_t s = 99;
        for (uint8_t& b : src) {
          s = s * 1664525u + 1013904223u;
          b = static_cast<uint8_t>(s >> 24);
        }
        for (size_t o = 0; o < src.size(); o += block) {
          const uint16_t d = static_cast<uint16_t>(0x1C00 + o % 0x800);  // 2^-8 .. 2^-6
          std::memcpy(&src[o], &d, 2);
        }
      }
      PackedMatrix w;
      REQUIRE(Repack(type, src.data(), n, k, &w).ok());
      CHECK(w.layout == PackedLayout::kIQ4x16);
      CHECK_FALSE(w.has_min);
      CHECK(w.bytes() == size_t{288} * 3 * (k / 32));  // 4.5 bits per weight, 3 tiles
      std::vector<float> row(k);
      double worst = 0;
      for (int64_t r = 0; r < n; ++r) {
        DequantizeRow(type, &src[r * rb], row.data(), k);
        for (int64_t c = 0; c < k; ++c) {
          const double err = std::fabs(double(PackedWeight(w, r, c)) - row[c]);
          INFO(GgmlTypeName(type) << " model-like " << model_like << " row " << r << " col " << c);
          if (type == GgmlType::kIQ4_NL) {
            REQUIRE(err == 0.0);
          } else {
            // |w| = |dl| * |grid| <= |dl| 127: the scale's fp16 rounding.
            REQUIRE(err <= std::fabs(row[c]) * std::ldexp(1.0, -11) + std::ldexp(1.0, -24) * 127);
            worst = std::max(worst, err);
          }
        }
      }
      if (type == GgmlType::kIQ4_XS) CHECK(worst > 0);  // the rounding is real, not skipped
    }
  }
  // An IQ4_XS sub-block scale beyond fp16 is refused: d = 4096, ls = 0 -> -131072.
  BlockIQ4_XS b{};
  b.d = Fp32ToFp16(4096.0f);
  PackedMatrix w;
  const Status s = Repack(GgmlType::kIQ4_XS, reinterpret_cast<const uint8_t*>(&b), 1, 256, &w);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find("IQ4_XS sub-block scale") != std::string::npos);
}
