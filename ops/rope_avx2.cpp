// RoPE on AVX2, bit for bit RopeApply_ref: each product rounded on its own,
// then one add or subtract. This file is compiled with -ffp-contract=off
// -fno-tree-vectorize (ops/rope.h): GCC would otherwise fuse a _mm256_mul_ps
// into the add (the scalar steps are RopeApplyFrom_ref, ops/rope_ref.cpp).
// Pairs that do not fill a vector go through RopeApplyFrom_ref.
#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/rope.h"

namespace ember {

namespace {

// kNormal: x = (x0, x1) pairs side by side, cache = (c, s) pairs side by side.
int RopeNormal(float* x, const float* cache, int half) {
  int p = 0;  // the first pair not yet rotated
  for (; p + 4 <= half; p += 4) {
    const __m256 v = _mm256_loadu_ps(x + 2 * p);        // x0 x1 x0 x1 ...
    const __m256 cs = _mm256_loadu_ps(cache + 2 * p);   // c s c s ...
    const __m256 c = _mm256_moveldup_ps(cs);            // c c c c ...
    const __m256 s = _mm256_movehdup_ps(cs);            // s s s s ...
    const __m256 swapped = _mm256_permute_ps(v, 0xB1);  // x1 x0 x1 x0 ...
    // Even lanes x0 c - x1 s; odd lanes x1 c + x0 s (the same sum as _ref's
    // x0 s + x1 c: IEEE addition is commutative).
    _mm256_storeu_ps(x + 2 * p, _mm256_addsub_ps(_mm256_mul_ps(v, c), _mm256_mul_ps(swapped, s)));
  }
  return p;
}

// The 8 cosines (kShuffle 0x88) or sines (0xDD) of cache[0..16).
template <int kShuffle>
inline __m256 Deinterleave(const float* cache) {
  // shuffle_ps picks within 128-bit halves: c0 c1 c4 c5 | c2 c3 c6 c7; the
  // 64-bit permute (0, 2, 1, 3) puts them in order.
  const __m256 lohi =
      _mm256_shuffle_ps(_mm256_loadu_ps(cache), _mm256_loadu_ps(cache + 8), kShuffle);
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(lohi), 0xD8));
}

// kNeox: x0 in the first half of the rotated part, x1 in the second.
int RopeNeox(float* x, const float* cache, int half) {
  int i = 0;
  for (; i + 8 <= half; i += 8) {
    const __m256 c = Deinterleave<0x88>(cache + 2 * i);
    const __m256 s = Deinterleave<0xDD>(cache + 2 * i);
    const __m256 x0 = _mm256_loadu_ps(x + i), x1 = _mm256_loadu_ps(x + half + i);
    _mm256_storeu_ps(x + i, _mm256_sub_ps(_mm256_mul_ps(x0, c), _mm256_mul_ps(x1, s)));
    _mm256_storeu_ps(x + half + i, _mm256_add_ps(_mm256_mul_ps(x0, s), _mm256_mul_ps(x1, c)));
  }
  return i;
}

}  // namespace

void RopeApply_avx2(float* x, const float* cache, int n_dims, RopeMode mode) {
  // Vectors while pairs fill them, then _ref's scalar steps for the rest.
  const int done =
      mode == RopeMode::kNormal ? RopeNormal(x, cache, n_dims / 2) : RopeNeox(x, cache, n_dims / 2);
  RopeApplyFrom_ref(x, cache, n_dims, mode, done);
}

}  // namespace ember
#endif
