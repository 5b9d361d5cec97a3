// ggml's arithmetic for matrix products and element-wise operations (see
// ops/ggml_numerics.h). Compiled with -ffp-contract=off: every fused
// multiply-add below is an explicit std::fma, placed where ggml's compiled code
// has one.
#include <cmath>

#include "ops/ggml_numerics.h"
#include "ops/kernels.h"
#include "quant/fp16.h"

namespace ember {
namespace {

// _mm256_extractf128_ps + add, movehl + add, movehdup + add_ss: the sum of
// eight lanes as ggml's hsum_float_8 forms it.
float HsumFloat8(const float a[8]) {
  float r[4];
  for (int i = 0; i < 4; ++i) r[i] = a[i + 4] + a[i];
  const float t0 = r[0] + r[2], t1 = r[1] + r[3];
  return t0 + t1;
}

// |x| maxima of a block of 32 as the SIMD max over four registers; the order of
// a max does not matter (no NaN in activations), so a plain loop.
float BlockAmax(const float* x) {
  float amax = 0.0f;
  for (int j = 0; j < kQK; ++j) amax = std::fmax(amax, std::fabs(x[j]));
  return amax;
}

// q = round-half-even(x * id): _mm256_round_ps(_MM_ROUND_NEAREST), then an
// exact conversion (|x * id| <= 127 + an ulp, so no saturation is reached).
int8_t RoundQ(float x, float id) { return static_cast<int8_t>(std::nearbyint(x * id)); }

// Nibble c (0..31) of a Q4 block: low nibbles are columns 0..15, high 16..31.
int Nibble(const uint8_t* qs, int c) { return c < 16 ? qs[c] & 0x0F : qs[c - 16] >> 4; }

void QuantizeQ8_0(const float* x, void* y, int64_t n) {
  GgmlQuantizeRowQ8_0(x, static_cast<BlockQ8_0*>(y), n);
}
void QuantizeQ8_1(const float* x, void* y, int64_t n) {
  GgmlQuantizeRowQ8_1(x, static_cast<BlockQ8_1*>(y), n);
}

}  // namespace

void GgmlQuantizeRowQ8_0(const float* x, BlockQ8_0* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK) {
    const float amax = BlockAmax(x);
    const float d = amax / 127.0f;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    y[b].d = Fp32ToFp16(d);
    for (int j = 0; j < kQK; ++j) y[b].qs[j] = RoundQ(x[j], id);
  }
}

void GgmlQuantizeRowQ8_1(const float* x, BlockQ8_1* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK) {
    const float amax = BlockAmax(x);
    const float d = amax / 127.0f;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    int sum = 0;
    for (int j = 0; j < kQK; ++j) {
      y[b].qs[j] = RoundQ(x[j], id);
      sum += y[b].qs[j];
    }
    y[b].d = Fp32ToFp16(d);
    y[b].s = Fp32ToFp16(d * static_cast<float>(sum));
  }
}

float GgmlVecDotQ4_1Q8_1_ref(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ4_1*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  float acc[8] = {};
  float summs = 0.0f;
  for (int64_t b = 0; b < n / kQK; ++b) {
    // summs += m * s: GCC fuses it (-march=native has FMA).
    summs = std::fma(Fp16ToFp32(x[b].m), Fp16ToFp32(y[b].s), summs);
    const float d0d1 = Fp16ToFp32(x[b].d) * Fp16ToFp32(y[b].d);
    for (int j = 0; j < 8; ++j) {
      int lane = 0;  // vpdpbusd (or maddubs + madd): exact integers
      for (int c = 4 * j; c < 4 * j + 4; ++c) lane += Nibble(x[b].qs, c) * y[b].qs[c];
      acc[j] = std::fma(d0d1, static_cast<float>(lane), acc[j]);
    }
  }
  return HsumFloat8(acc) + summs;
}

namespace {

// vec_dot of a symmetric weight block against Q8_0 activations: eight lanes,
// lane j the integer sum of block columns 4j..4j+3; acc[j] = fma(d_w * d_a,
// float(lane), acc[j]); the lanes summed in hsum order. quant(block, c) is the
// weight quant of column c.
template <class Block, class Quant>
float SymmetricDot(int64_t n, const void* w, const void* a, Quant quant) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float acc[8] = {};
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float d = Fp16ToFp32(x[b].d) * Fp16ToFp32(y[b].d);
    for (int j = 0; j < 8; ++j) {
      int lane = 0;
      for (int c = 4 * j; c < 4 * j + 4; ++c) lane += quant(x[b], c) * y[b].qs[c];
      acc[j] = std::fma(d, static_cast<float>(lane), acc[j]);
    }
  }
  return HsumFloat8(acc);
}

}  // namespace

float GgmlVecDotQ8_0Q8_0_ref(int64_t n, const void* w, const void* a) {
  return SymmetricDot<BlockQ8_0>(n, w, a, [](const BlockQ8_0& x, int c) { return int{x.qs[c]}; });
}

float GgmlVecDotQ4_0Q8_0_ref(int64_t n, const void* w, const void* a) {
  return SymmetricDot<BlockQ4_0>(n, w, a,
                                 [](const BlockQ4_0& x, int c) { return Nibble(x.qs, c) - 8; });
}

float GgmlVecDotQ4_0Q8_0Repacked_ref(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ4_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float acc = 0.0f;
  for (int64_t b = 0; b < n / kQK; ++b) {
    int sum = 0;
    for (int c = 0; c < kQK; ++c) sum += (Nibble(x[b].qs, c) - 8) * y[b].qs[c];
    acc = std::fma(static_cast<float>(sum), Fp16ToFp32(x[b].d) * Fp16ToFp32(y[b].d), acc);
  }
  return acc;
}

const GgmlVecDotPair* FindGgmlVecDot(GgmlType weight_type, bool repacked) {
  static const GgmlVecDotPair kQ4_1{GgmlType::kQ8_1, QuantizeQ8_1, Active().ggml_dot_q4_1};
  static const GgmlVecDotPair kQ8_0{GgmlType::kQ8_0, QuantizeQ8_0, Active().ggml_dot_q8_0};
  static const GgmlVecDotPair kQ4_0{GgmlType::kQ8_0, QuantizeQ8_0, Active().ggml_dot_q4_0};
  static const GgmlVecDotPair kQ4_0Repacked{GgmlType::kQ8_0, QuantizeQ8_0,
                                            Active().ggml_dot_q4_0_repacked};
  switch (weight_type) {
    case GgmlType::kQ4_1:
      return &kQ4_1;
    case GgmlType::kQ8_0:
      return &kQ8_0;
    case GgmlType::kQ4_0:
      return repacked ? &kQ4_0Repacked : &kQ4_0;
    default:
      return nullptr;
  }
}

float GgmlExpAvx512(float x) {
  // Range reduction: n = round(x / ln 2) by the 1.5 * 2^23 shifter, b = x - n
  // ln 2 in two fused steps (ln 2 split into a high and a low part).
  const float shifter = 0x1.8p23f;
  const float z = std::fma(x, 0x1.715476p+0f, shifter);
  const float n = z - shifter;
  const float b = std::fma(-n, 0x1.7f7d1cp-20f, std::fma(-n, 0x1.62e4p-1f, x));
  const float u = b * b;
  const float j = std::fma(std::fma(std::fma(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u,
                                    std::fma(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)),
                           u, std::fma(0x1.ffffecp-1f, b, 1.0f));
  if (std::fabs(n) > 192.0f) return n <= 0.0f ? 0.0f : INFINITY;
  // vscalefps: j * 2^n, one rounding (also into the subnormal range).
  return std::ldexp(j, static_cast<int>(n));
}

void GgmlSwiGlu(float* gate, const float* up, int64_t n) {
  const int64_t simd = n - n % 16;  // whole 16-lane registers
  int64_t i = 0;
  for (; i < simd; ++i) {
    const float x = gate[i];
    const float e = GgmlExpAvx512(0.0f - x);  // _mm512_sub_ps(zero, x)
    gate[i] = (x / (1.0f + e)) * up[i];
  }
  for (; i < n; ++i) {  // ggml_silu_f32(x) * g
    const float x = gate[i];
    gate[i] = (x / (1.0f + std::exp(-x))) * up[i];
  }
}

void GgmlRopeApply(float* x, const float* cache, int n_dims, RopeMode mode) {
  // GCC compiles rotate_pairs (vectorized with vfmaddsub for adjacent pairs,
  // as scalar code for split halves) so that both outputs fuse the x0 product.
  const int half = n_dims / 2;
  for (int i = 0; i < half; ++i) {
    const int a = mode == RopeMode::kNormal ? 2 * i : i;
    const int b = mode == RopeMode::kNormal ? 2 * i + 1 : i + half;
    const float c = cache[2 * i], s = cache[2 * i + 1];
    const float x0 = x[a], x1 = x[b];
    x[a] = std::fma(x0, c, -(x1 * s));
    x[b] = std::fma(x0, s, x1 * c);
  }
}

}  // namespace ember
