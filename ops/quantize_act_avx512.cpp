// QuantizeActRows on AVX-512 (F + BW + VL + DQ): the bytes of
// QuantizeActRows_ref, 16 groups of 32 activations at a time.
//
// Why: the AVX2 quantizer works one group at a time, and each group ends in
// scalar work (two horizontal sums, the max's reduction, two divisions, the
// fp16 round trips): ~12.5 ns a group on a Zen 4 core, ~70 us of a Qwen2.5
// 0.5B token (7552 activations a layer), run by one thread while the others
// wait at two threads. Here the per-group values live in the lanes of one
// vector for 16 groups: each group's max and sums are reduced by one tree for
// all 16 (ReduceLanes16), and the divisions, conversions and stores are one
// vector instruction each. One row, Zen 4, ns a group (AVX2 -> this): k = 896
// 12.0 -> 6.2, 4864 13.8 -> 6.2, 640 12.9 -> ~8 (a pass of 4 groups).
//
// Same bytes: the max of |x| over finite values is exact in any order; 127 /
// amax and amax / 127 are IEEE divisions as the scalar ones; q rounds x * id
// to nearest even (MXCSR's default, as std::nearbyint); the sums are exact
// integers; fp16 round trips are F16C's (round to nearest even), as
// Fp32ToFp16. A group holding a NaN or an infinity is SetNonFinite's, as in
// _ref, after the vector stores.
#if defined(__x86_64__)
// GCC 12 reports the _mm512_undefined_* source of the plain shuffle, max and
// convert intrinsics as used uninitialized once inlined into this file's
// loops (GCC bug 105593; the build's -Wno-maybe-uninitialized covers the
// "may be" form, not this one), an error under EMBER_WERROR. SIMDe, which
// the tests' emulation runs on, has the plain forms and not all the
// zero-masked ones that would avoid it.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "ops/kernels.h"
#include "ops/qgemm.h"

namespace ember {
namespace {

constexpr int kChunk = 16;  // groups per pass: one lane each

// out lane i = op over the 16 lanes of v[i], for 16 vectors (bit patterns;
// `op` combines two vectors lane by lane). A tree of 128-bit-block and in-block
// shuffles: 15 combinations instead of 16 separate reductions of 4 each.
template <class Op>
__m512i ReduceLanes16(const __m512i* v, Op op) {
  // Level 1: pairs -> lanes 0-7 partials of v[2j], 8-15 of v[2j + 1].
  __m512i r[8];
  for (int j = 0; j < 8; ++j) {
    const __m512 a = _mm512_castsi512_ps(v[2 * j]), b = _mm512_castsi512_ps(v[2 * j + 1]);
    r[j] = op(_mm512_castps_si512(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(1, 0, 1, 0))),
              _mm512_castps_si512(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 2, 3, 2))));
  }
  // Level 2: 128-bit block b of s[j] holds group 4j + b (4 lanes).
  __m512i s[4];
  for (int j = 0; j < 4; ++j) {
    const __m512 a = _mm512_castsi512_ps(r[2 * j]), b = _mm512_castsi512_ps(r[2 * j + 1]);
    s[j] = op(_mm512_castps_si512(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(2, 0, 2, 0))),
              _mm512_castps_si512(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 1, 3, 1))));
  }
  // Level 3: block b of u[j] holds group 8j + b in lanes 0-1, 8j + 4 + b in 2-3.
  __m512i u[2];
  for (int j = 0; j < 2; ++j) {
    const __m512 a = _mm512_castsi512_ps(s[2 * j]), b = _mm512_castsi512_ps(s[2 * j + 1]);
    u[j] = op(_mm512_castps_si512(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(1, 0, 1, 0))),
              _mm512_castps_si512(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 2, 3, 2))));
  }
  // Level 4: lane 4b + c holds group 4c + b; put group i in lane i.
  const __m512 a = _mm512_castsi512_ps(u[0]), b = _mm512_castsi512_ps(u[1]);
  const __m512i w = op(_mm512_castps_si512(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))),
                       _mm512_castps_si512(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1))));
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  return _mm512_permutexvar_epi32(order, w);
}

// The lanes of k, as a float store of the same bits (SIMDe, which the tests'
// emulation runs on, has no masked int32 store).
inline void StoreInts(int32_t* p, __mmask16 k, __m512i v) {
  _mm512_mask_storeu_ps(reinterpret_cast<float*>(p), k, _mm512_castsi512_ps(v));
}

inline __m512 RoundTripFp16(__m512 x) {
  return _mm512_cvtph_ps(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// Groups g0 .. g0 + n - 1 (n <= 16), counted over the rows laid end to end:
// group g of row t is group t * (k / 32) + g of x, q and every per-group
// array, so a pass may span two rows.
void QuantizeChunk(const float* x, int64_t g0, int n, QuantizedActs* a) {
  const int64_t groups = a->k / 32;
  const float* xg = x + g0 * 32;
  const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF);
  // Per group: max |x| in 16 lanes; and x - x over the chunk, NaN where
  // some x is a NaN or an infinity.
  __m512i mx[kChunk];
  __m512 nonfinite = _mm512_setzero_ps();
  for (int i = 0; i < kChunk; ++i) {
    if (i >= n) {
      mx[i] = _mm512_setzero_si512();
      continue;
    }
    const __m512 v0 = _mm512_loadu_ps(xg + 32 * i), v1 = _mm512_loadu_ps(xg + 32 * i + 16);
    const __m512 a0 = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v0), abs_mask));
    const __m512 a1 = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v1), abs_mask));
    mx[i] = _mm512_castps_si512(_mm512_max_ps(a0, a1));
    nonfinite =
        _mm512_add_ps(nonfinite, _mm512_add_ps(_mm512_sub_ps(v0, v0), _mm512_sub_ps(v1, v1)));
  }
  const __m512 amax = _mm512_castsi512_ps(ReduceLanes16(mx, [](__m512i p, __m512i q) {
    return _mm512_castps_si512(_mm512_max_ps(_mm512_castsi512_ps(p), _mm512_castsi512_ps(q)));
  }));
  const __m512 d_exact = _mm512_div_ps(amax, _mm512_set1_ps(127.0f));
  const __mmask16 nonzero = _mm512_cmp_ps_mask(amax, _mm512_setzero_ps(), _CMP_NEQ_UQ);
  const __m512 id = _mm512_maskz_div_ps(nonzero, _mm512_set1_ps(127.0f), amax);
  // q = round(x * id) per group, stored as bytes; the int32 vectors kept for
  // the sums of columns 0-15 and 16-31.
  __m512i q0[kChunk], q1[kChunk];
  int8_t* qrow = a->q.data() + g0 * 32;
  for (int i = 0; i < kChunk; ++i) {
    if (i >= n) {
      q0[i] = q1[i] = _mm512_setzero_si512();
      continue;
    }
    const __m512 idb = _mm512_permutexvar_ps(_mm512_set1_epi32(i), id);
    q0[i] = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(xg + 32 * i), idb));
    q1[i] = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(xg + 32 * i + 16), idb));
    // |q| <= 127 for finite groups: the saturating narrow is exact.
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qrow + 32 * i), _mm512_cvtsepi32_epi8(q0[i]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qrow + 32 * i + 16), _mm512_cvtsepi32_epi8(q1[i]));
  }
  const auto add = [](__m512i p, __m512i q) { return _mm512_add_epi32(p, q); };
  const __m512i sum0 = ReduceLanes16(q0, add), sum1 = ReduceLanes16(q1, add);
  const __m512i total = _mm512_add_epi32(sum0, sum1);
  const __m512 d = RoundTripFp16(d_exact);
  const __m512 total_f = _mm512_cvtepi32_ps(total);
  const __mmask16 lanes = static_cast<__mmask16>((1u << n) - 1);
  const int64_t at = g0;
  _mm512_mask_storeu_ps(a->d.data() + at, lanes, d);
  StoreInts(a->qsum.data() + at, lanes, total);
  _mm512_mask_storeu_ps(a->dqsum.data() + at, lanes, _mm512_mul_ps(d, total_f));
  _mm512_mask_storeu_ps(a->sm.data() + at, lanes, RoundTripFp16(_mm512_mul_ps(d_exact, total_f)));
  // qsum16: [group][half], the two sums of each group side by side.
  const __m512i lo_idx = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi_idx =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  int32_t* q16 = a->qsum16.data() + 2 * at;
  const int halves = 2 * n;
  StoreInts(q16, static_cast<__mmask16>((1u << std::min(halves, 16)) - 1),
            _mm512_permutex2var_epi32(sum0, lo_idx, sum1));
  if (halves > 16) {
    StoreInts(q16 + 16, static_cast<__mmask16>((1u << (halves - 16)) - 1),
              _mm512_permutex2var_epi32(sum0, hi_idx, sum1));
  }
  // The rare chunk with a NaN or an infinity: find its groups.
  if (_mm512_cmp_ps_mask(nonfinite, nonfinite, _CMP_UNORD_Q) != 0) {
    for (int i = 0; i < n; ++i) {
      const __m512 v0 = _mm512_loadu_ps(xg + 32 * i), v1 = _mm512_loadu_ps(xg + 32 * i + 16);
      const __m512 z = _mm512_add_ps(_mm512_sub_ps(v0, v0), _mm512_sub_ps(v1, v1));
      if (_mm512_cmp_ps_mask(z, z, _CMP_UNORD_Q) != 0) {
        a->SetNonFinite((g0 + i) / groups, (g0 + i) % groups);
      }
    }
  }
}

}  // namespace

void QuantizeActRows_avx512(const float* x, int64_t t0, int64_t t1, QuantizedActs* a) {
  const int64_t groups = a->k / 32, end = t1 * groups;
  for (int64_t g0 = t0 * groups; g0 < end; g0 += kChunk) {
    QuantizeChunk(x, g0, static_cast<int>(std::min<int64_t>(kChunk, end - g0)), a);
  }
}

}  // namespace ember
#endif  // __x86_64__
