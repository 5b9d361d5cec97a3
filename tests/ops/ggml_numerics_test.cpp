// The ggml-numerics functions (ops/ggml_numerics.h). That they are llama.cpp's
// bits is checked against llama.cpp's own output in
// tests/golden/smollm2_ggml_test.cpp; here: the SIMD variants against _ref,
// and the properties each function must have whatever order it sums in.
#include "ops/ggml_numerics.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ops/kernels.h"
#include "quant/fp16.h"
#include "quant/quantize.h"
#include "support/simd_isas.h"

using namespace ember;

namespace {

std::vector<Isa> HostIsas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::kRef, Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Vnni, Isa::kNeon, Isa::kNeonDot,
                  Isa::kNeonI8mm}) {
    if (test::CanTestVariants(isa)) out.push_back(isa);
  }
  return out;
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Distance in units in the last place between two finite floats of one sign.
int64_t UlpDistance(float a, float b) {
  return std::llabs(static_cast<int64_t>(Bits(a)) - static_cast<int64_t>(Bits(b)));
}

// Weights of `type` from normal floats, with some blocks scaled up 1000x and
// (Q8_0) some quants forced to -128, which ggml's own quantizer never writes.
std::vector<uint8_t> RandomWeights(GgmlType type, int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> w(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) w[i] = d(rng) * ((i / 32) % 5 == 4 ? 1000.0f : 1.0f);
  std::vector<uint8_t> q(GgmlRowBytes(type, static_cast<uint64_t>(n)));
  QuantizeRow(type, w.data(), q.data(), n);
  if (type == GgmlType::kQ8_0) {
    auto* b = reinterpret_cast<BlockQ8_0*>(q.data());
    for (int64_t i = 0; i < n / 32; i += 3) b[i].qs[i % 32] = -128;
  }
  return q;
}

std::vector<uint8_t> GgmlActs(const GgmlVecDotPair& pair, const std::vector<float>& a) {
  const int64_t n = static_cast<int64_t>(a.size());
  std::vector<uint8_t> q(GgmlRowBytes(pair.activation_type, static_cast<uint64_t>(n)));
  pair.quantize(a.data(), q.data(), n);
  return q;
}

}  // namespace

TEST_CASE("ggml numerics: every dot-product variant gives _ref's bits", "[ggml_numerics]") {
  std::mt19937 rng(7);
  std::normal_distribution<float> d(0.0f, 3.0f);
  const Kernels ref = KernelsFor(Isa::kRef);
  for (Isa isa : HostIsas()) {
    const Kernels k = KernelsFor(isa);
    struct Variant {
      GgmlType type;
      bool repacked;
      VecDotFn fn, fn_ref;
    };
    for (const Variant& v :
         {Variant{GgmlType::kQ4_1, false, k.ggml_dot_q4_1, ref.ggml_dot_q4_1},
          Variant{GgmlType::kQ8_0, false, k.ggml_dot_q8_0, ref.ggml_dot_q8_0},
          Variant{GgmlType::kQ4_0, false, k.ggml_dot_q4_0, ref.ggml_dot_q4_0},
          Variant{GgmlType::kQ4_0, true, k.ggml_dot_q4_0_repacked, ref.ggml_dot_q4_0_repacked}}) {
      const GgmlType type = v.type;
      const GgmlVecDotPair* pair = FindGgmlVecDot(type, v.repacked);
      REQUIRE(pair != nullptr);
      const VecDotFn fn = v.fn, fn_ref = v.fn_ref;
      for (int64_t n : {32, 64, 96, 576, 1536, 4096}) {
        for (int rep = 0; rep < 4; ++rep) {
          std::vector<float> a(static_cast<size_t>(n));
          for (float& v : a) v = d(rng);
          if (rep == 3) a[0] = 1e4f;  // one outlier: its block's other quants collapse
          const std::vector<uint8_t> w = RandomWeights(type, n, rng);
          const std::vector<uint8_t> q = GgmlActs(*pair, a);
          INFO(IsaName(isa) << " " << GgmlTypeName(type) << (v.repacked ? " repacked" : "")
                            << " n=" << n << " rep " << rep);
          CHECK(Bits(fn(n, w.data(), q.data())) == Bits(fn_ref(n, w.data(), q.data())));
        }
      }
    }
  }
}

TEST_CASE("ggml numerics: dot products equal the dequantized float math within rounding",
          "[ggml_numerics]") {
  std::mt19937 rng(3);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (const auto& [type, repacked] :
       {std::pair{GgmlType::kQ4_1, false}, std::pair{GgmlType::kQ8_0, false},
        std::pair{GgmlType::kQ4_0, false}, std::pair{GgmlType::kQ4_0, true}}) {
    const GgmlVecDotPair* pair = FindGgmlVecDot(type, repacked);
    for (int64_t n : {32, 256, 2048}) {
      std::vector<float> a(static_cast<size_t>(n)), wd(static_cast<size_t>(n));
      for (float& v : a) v = d(rng);
      const std::vector<uint8_t> w = RandomWeights(type, n, rng);
      DequantizeRow(type, w.data(), wd.data(), n);
      const std::vector<uint8_t> q = GgmlActs(*pair, a);
      double expect = 0, scale = 0;
      for (int64_t i = 0; i < n; ++i) {
        // Q8_0 and Q8_1 blocks begin with the fp16 scale, then (Q8_1) the sum.
        const uint8_t* blk = q.data() + (i / 32) * (type == GgmlType::kQ4_1 ? 36 : 34);
        uint16_t dh;
        std::memcpy(&dh, blk, 2);
        const int8_t qa = static_cast<int8_t>(blk[(type == GgmlType::kQ4_1 ? 4 : 2) + i % 32]);
        const double ai = double(qa) * Fp16ToFp32(dh);
        expect += double(wd[i]) * ai;
        scale += std::fabs(double(wd[i]) * ai);
      }
      INFO(GgmlTypeName(type) << (repacked ? " repacked" : "") << " n=" << n);
      // Q4_1 adds m * s with s = d * sum(q) rounded to fp16.
      CHECK(std::fabs(pair->dot(n, w.data(), q.data()) - expect) <= 2e-3 * scale + 1e-4);
    }
  }
  CHECK(FindGgmlVecDot(GgmlType::kQ4_K) == nullptr);  // llama.cpp's tiled kernels
  CHECK(FindGgmlVecDot(GgmlType::kF16) == nullptr);
}

TEST_CASE("ggml numerics: activations are scaled by 127 / amax and rounded half to even",
          "[ggml_numerics]") {
  // amax 127: the scale is exactly 1, so every x.5 is a tie.
  std::vector<float> x(32, 0.0f);
  x[0] = 127.0f;
  x[1] = 2.5f;
  x[2] = 3.5f;
  x[3] = -2.5f;
  x[4] = -0.5f;
  x[5] = 1.49999f;
  BlockQ8_1 b1;
  GgmlQuantizeRowQ8_1(x.data(), &b1, 32);
  CHECK(Fp16ToFp32(b1.d) == 1.0f);
  CHECK(std::vector<int>{b1.qs[0], b1.qs[1], b1.qs[2], b1.qs[3], b1.qs[4], b1.qs[5]} ==
        std::vector<int>{127, 2, 4, -2, 0, 1});
  CHECK(Fp16ToFp32(b1.s) == 127.0f + 2 + 4 - 2 + 0 + 1);  // d * sum(q)
  BlockQ8_0 b0;
  GgmlQuantizeRowQ8_0(x.data(), &b0, 32);
  CHECK(std::memcmp(b0.qs, b1.qs, 32) == 0);
  // An all-zero block: scale 0, quants 0.
  std::vector<float> z(32, 0.0f);
  GgmlQuantizeRowQ8_0(z.data(), &b0, 32);
  CHECK(b0.d == 0);
  for (int8_t q : b0.qs) CHECK(q == 0);
  // 127 / amax, not 1 / (amax / 127): with amax 17 the two scales put
  // x = 0.46850392 (that is 17 * 3.5 / 127) on different sides of 3.5.
  std::vector<float> t(32, 0.0f);
  t[0] = 17.0f;
  t[1] = 0.46850392f;
  GgmlQuantizeRowQ8_0(t.data(), &b0, 32);
  CHECK(b0.qs[1] == 3);
  BlockQ8_0 other;
  QuantizeRowQ8_0(t.data(), &other, 32);  // ember's GGUF writer: 1 / d
  CHECK(other.qs[1] == 4);
}

TEST_CASE("ggml numerics: the AVX-512 expf polynomial stays within 2 ulp of exp",
          "[ggml_numerics]") {
  CHECK(GgmlExpAvx512(0.0f) == 1.0f);
  CHECK(GgmlExpAvx512(-200.0f) == 0.0f);
  CHECK(GgmlExpAvx512(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(std::isinf(GgmlExpAvx512(100.0f)));
  int64_t worst = 0;
  float prev = 0.0f;
  for (float x = -87.0f; x <= 88.0f; x += 0.0137f) {
    const float got = GgmlExpAvx512(x);
    const float want = static_cast<float>(std::exp(static_cast<double>(x)));
    worst = std::max(worst, UlpDistance(got, want));
    CHECK(got >= prev);  // monotonic
    prev = got;
  }
  CHECK(worst <= 2);
  // Results below FLT_MIN are rounded once into the subnormals.
  const float sub = GgmlExpAvx512(-100.0f);
  CHECK(sub > 0.0f);
  CHECK(std::fabs(sub - std::exp(-100.0f)) <= std::numeric_limits<float>::denorm_min());
}

TEST_CASE(
    "ggml numerics: SwiGLU takes whole 16-lane registers through the polynomial and "
    "the tail through libm",
    "[ggml_numerics]") {
  std::mt19937 rng(5);
  std::normal_distribution<float> d(0.0f, 4.0f);
  const int64_t n = 37;  // two registers and a tail of 5
  std::vector<float> gate(n), up(n);
  for (int64_t i = 0; i < n; ++i) {
    gate[i] = d(rng);
    up[i] = d(rng);
  }
  std::vector<float> out = gate;
  GgmlSwiGlu(out.data(), up.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const float x = gate[i];
    const float e = i < 32 ? GgmlExpAvx512(0.0f - x) : std::exp(-x);
    INFO("element " << i);
    CHECK(Bits(out[i]) == Bits((x / (1.0f + e)) * up[i]));
    // and either way within a few ulp of the exact value
    const double want = double(x) / (1.0 + std::exp(-double(x))) * up[i];
    CHECK(std::fabs(out[i] - want) <= 1e-6 * std::fabs(want) + 1e-30);
  }
}

TEST_CASE("ggml numerics: RoPE rotates within rounding of the exact rotation", "[ggml_numerics]") {
  std::mt19937 rng(9);
  std::normal_distribution<float> d(0.0f, 2.0f);
  for (RopeMode mode : {RopeMode::kNormal, RopeMode::kNeox}) {
    std::vector<float> cache(64), x(64);
    RopeCache(cache.data(), 1234, 64, 10000.0f, 1.0f, nullptr);
    for (float& v : x) v = d(rng);
    std::vector<float> y = x;
    GgmlRopeApply(y.data(), cache.data(), 64, mode);
    for (int i = 0; i < 32; ++i) {
      const int a = mode == RopeMode::kNormal ? 2 * i : i;
      const int b = mode == RopeMode::kNormal ? 2 * i + 1 : i + 32;
      const double c = cache[2 * i], s = cache[2 * i + 1];
      const double y0 = x[a] * c - x[b] * s, y1 = x[a] * s + x[b] * c;
      const double tol = 2e-7 * (std::fabs(x[a]) + std::fabs(x[b]));
      CHECK(std::fabs(y[a] - y0) <= tol);
      CHECK(std::fabs(y[b] - y1) <= tol);
    }
  }
}

namespace {

struct Cache {
  int head_dim;
  int64_t n;
  std::vector<uint16_t> k, v;  // [n, head_dim] f16
  KvSpan Span(int64_t begin, int64_t count) const {
    return {k.data() + begin * head_dim, v.data() + begin * head_dim, count};
  }
};

Cache RandomCache(int64_t n, int head_dim, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  Cache c{head_dim, n, {}, {}};
  for (int64_t i = 0; i < n * head_dim; ++i) {
    c.k.push_back(Fp32ToFp16(d(rng)));
    c.v.push_back(Fp32ToFp16(d(rng)));
  }
  return c;
}

// softmax(scale q.k) v over the first `visible` rows in double, with q as is.
std::vector<double> ExactAttention(const float* q, const Cache& c, int64_t visible, float scale) {
  std::vector<double> s(static_cast<size_t>(visible)), out(static_cast<size_t>(c.head_dim), 0.0);
  double max = -INFINITY;
  for (int64_t j = 0; j < visible; ++j) {
    double dot = 0;
    for (int d = 0; d < c.head_dim; ++d) dot += double(q[d]) * Fp16ToFp32(c.k[j * c.head_dim + d]);
    s[j] = dot * scale;
    max = std::max(max, s[j]);
  }
  double sum = 0;
  for (int64_t j = 0; j < visible; ++j) sum += s[j] = std::exp(s[j] - max);
  for (int64_t j = 0; j < visible; ++j) {
    for (int d = 0; d < c.head_dim; ++d) out[d] += s[j] / sum * Fp16ToFp32(c.v[j * c.head_dim + d]);
  }
  return out;
}

}  // namespace

TEST_CASE("ggml numerics: the three attention forms compute attention", "[ggml_numerics]") {
  std::mt19937 rng(13);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (int head_dim : {64, 128, 80}) {
    const Cache c = RandomCache(700, head_dim, rng);
    std::vector<float> q(static_cast<size_t>(head_dim));
    for (float& v : q) v = d(rng) * 0.5f;
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    // Two spans (a prefix shared with other sequences, then the rest).
    const KvSpan spans[2] = {c.Span(0, 100), c.Span(100, 600)};
    for (int64_t visible : {1, 63, 64, 65, 300, 700}) {
      INFO("head_dim " << head_dim << ", " << visible << " visible rows");
      const std::vector<double> want = ExactAttention(q.data(), c, visible, scale);
      std::vector<float> one(static_cast<size_t>(head_dim)), tiled(one.size()), split(one.size());
      GgmlAttendOneRow(q.data(), spans, 2, head_dim, head_dim, scale, visible, one.data());
      GgmlAttendTiled(q.data(), spans, 2, head_dim, head_dim, scale, visible, tiled.data());
      for (int i = 0; i < head_dim; ++i) {
        // One-row accumulates the values in f16 and rounds q to f16.
        CHECK(std::fabs(one[i] - want[i]) <= 5e-3);
        CHECK(std::fabs(tiled[i] - want[i]) <= 1e-5);
      }
      // One chunk of the split form is the one-row form, bit for bit (the
      // combination multiplies by exp(0) = 1 and adds 0 * 0).
      GgmlAttendSplit(q.data(), spans, 2, head_dim, head_dim, scale, visible, GgmlKvCells(visible),
                      1, split.data());
      CHECK(std::memcmp(split.data(), one.data(), one.size() * sizeof(float)) == 0);
      // Three chunks combine to the same attention.
      GgmlAttendSplit(q.data(), spans, 2, head_dim, head_dim, scale, visible, 768, 3, split.data());
      for (int i = 0; i < head_dim; ++i) CHECK(std::fabs(split[i] - want[i]) <= 5e-3);
    }
  }
  CHECK(GgmlKvCells(1) == 256);
  CHECK(GgmlKvCells(256) == 256);
  CHECK(GgmlKvCells(257) == 512);
  CHECK(GgmlKvCells(1000) == 1024);
}

TEST_CASE("ggml numerics: every variant of the f16 primitives gives _ref's bits",
          "[ggml_numerics]") {
  std::mt19937 rng(17);
  std::normal_distribution<float> d(0.0f, 2.0f);
  const Kernels ref = KernelsFor(Isa::kRef);
  for (Isa isa : HostIsas()) {
    const Kernels k = KernelsFor(isa);
    for (int n : {1, 15, 16, 63, 64, 80, 100, 128, 200}) {
      std::vector<uint16_t> x(static_cast<size_t>(n)), y(x.size());
      for (size_t i = 0; i < x.size(); ++i) {
        x[i] = Fp32ToFp16(d(rng));
        y[i] = Fp32ToFp16(d(rng));
      }
      INFO(IsaName(isa) << " n=" << n);
      CHECK(Bits(k.ggml_dot_f16(x.data(), y.data(), n)) ==
            Bits(ref.ggml_dot_f16(x.data(), y.data(), n)));
      for (float v : {0.0f, 0.3333333f, 1.0f, 7.1f}) {
        std::vector<uint16_t> a = y, b = y;
        k.ggml_scale_f16(a.data(), v, n);
        ref.ggml_scale_f16(b.data(), v, n);
        CHECK(a == b);
        a = y;
        b = y;
        k.ggml_mad_f16(a.data(), x.data(), v, n);
        ref.ggml_mad_f16(b.data(), x.data(), v, n);
        CHECK(a == b);
      }
    }
  }
}

TEST_CASE("ggml numerics: every variant of the tiled block gives each query GgmlAttendTiled's bits",
          "[ggml_numerics]") {
  std::mt19937 rng(19);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (Isa isa : HostIsas()) {
    const Kernels k = KernelsFor(isa);
    for (int head_dim : {64, 80, 128}) {
      const Cache c = RandomCache(300, head_dim, rng);
      // Three spans, boundaries inside tiles.
      const KvSpan spans[3] = {c.Span(0, 37), c.Span(37, 100), c.Span(137, 163)};
      // Queries of consecutive tokens, each seeing its prefix, two heads each.
      const int n_q = 12;
      std::vector<std::vector<float>> q(n_q, std::vector<float>(static_cast<size_t>(head_dim)));
      std::vector<const float*> qs;
      std::vector<int64_t> visible;
      for (int m = 0; m < n_q; ++m) {
        for (float& v : q[m]) v = d(rng);
        qs.push_back(q[m].data());
        visible.push_back(m < 6 ? 1 + 11 * m : 300 - 5 * (n_q - 1 - m));
      }
      std::vector<std::vector<float>> got(n_q, std::vector<float>(q[0].size()));
      std::vector<float*> outs;
      for (auto& o : got) outs.push_back(o.data());
      std::vector<float> scratch(static_cast<size_t>(GgmlTiledScratch(head_dim, n_q)));
      const float scale = 0.125f;
      k.ggml_attend_tiled_block(qs.data(), visible.data(), n_q, spans, 3, head_dim, head_dim, scale,
                                scratch.data(), outs.data());
      for (int m = 0; m < n_q; ++m) {
        std::vector<float> want(q[0].size());
        GgmlAttendTiled(qs[m], spans, 3, head_dim, head_dim, scale, visible[m], want.data());
        INFO(IsaName(isa) << " head_dim " << head_dim << " query " << m << " sees " << visible[m]);
        CHECK(std::memcmp(got[m].data(), want.data(), want.size() * sizeof(float)) == 0);
      }
    }
  }
}
