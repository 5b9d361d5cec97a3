// Quantized GEMM on AVX-512 VNNI. One zmm holds 16 int32 lanes = the 16 rows
// of a tile; vpdpbusd multiplies each row's 4 weight bytes with 4 broadcast
// activation bytes and adds them into its lane: no horizontal sums. Weights
// are unpacked once per group and reused for up to kMr tokens (prefill).
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "ops/kernels.h"

namespace ember {
namespace {

constexpr int kMr = 6;  // tokens per register tile

inline __m512i Bcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// Stores 16 lanes to y[row0 ...], masking rows past n_rows.
inline void Store(float* y, __m512 v, int64_t row0, int64_t n_rows) {
  const int64_t left = n_rows - row0;
  if (left >= 16) {
    _mm512_storeu_ps(y + row0, v);
  } else {
    _mm512_mask_storeu_ps(y + row0, static_cast<__mmask16>((1u << left) - 1), v);
  }
}

template <int MR, bool kHasMin>
void TileQ4(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
            int64_t ldy) {
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  __m512 acc[MR];
  for (int i = 0; i < MR; ++i) acc[i] = _mm512_setzero_ps();
  const uint8_t* gp = w.tile(tile);
  for (int64_t g = 0; g < w.n_groups; ++g, gp += w.group_bytes) {
    __m512i wq[8];
    for (int s = 0; s < 4; ++s) {
      const __m512i v = _mm512_loadu_si512(gp + 64 * s);
      wq[2 * s] = _mm512_and_si512(v, low4);
      wq[2 * s + 1] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
    }
    const __m512 dw =
        _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(gp + 256)));
    const __m512 mw =
        kHasMin ? _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(gp + 288)))
                : _mm512_mul_ps(dw, _mm512_set1_ps(-8.0f));
    for (int i = 0; i < MR; ++i) {
      const int8_t* aq = a.q_row(t0 + i) + g * 32;
      __m512i isum = _mm512_setzero_si512();
      for (int s = 0; s < 4; ++s) {
        isum = _mm512_dpbusd_epi32(isum, wq[2 * s], Bcast4(aq + 8 * s));
        isum = _mm512_dpbusd_epi32(isum, wq[2 * s + 1], Bcast4(aq + 8 * s + 4));
      }
      const __m512 scale = _mm512_mul_ps(dw, _mm512_set1_ps(a.d_row(t0 + i)[g]));
      acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), scale, acc[i]);
      acc[i] = _mm512_fmadd_ps(mw, _mm512_set1_ps(a.min_sums(t0 + i, kHasMin)[g]), acc[i]);
    }
  }
  for (int i = 0; i < MR; ++i) Store(y + (t0 + i) * ldy, acc[i], tile * kTileRows, w.n_rows);
}

template <int MR>
void TileQ8(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
            int64_t ldy) {
  // vpdpbusd needs one unsigned operand: activations go in as a + 128 (xor
  // 0x80), and 128 * sum(w) — from a dpbusd of ones with w — is taken off.
  const __m512i ones = _mm512_set1_epi8(1);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512 acc[MR];
  for (int i = 0; i < MR; ++i) acc[i] = _mm512_setzero_ps();
  const uint8_t* gp = w.tile(tile);
  for (int64_t g = 0; g < w.n_groups; ++g, gp += w.group_bytes) {
    __m512i wq[8];
    __m512i wsum = _mm512_setzero_si512();
    for (int s = 0; s < 8; ++s) {
      wq[s] = _mm512_loadu_si512(gp + 64 * s);
      wsum = _mm512_dpbusd_epi32(wsum, ones, wq[s]);
    }
    const __m512i correction = _mm512_slli_epi32(wsum, 7);
    const __m512 dw =
        _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(gp + 512)));
    for (int i = 0; i < MR; ++i) {
      const int8_t* aq = a.q_row(t0 + i) + g * 32;
      __m512i isum = _mm512_setzero_si512();
      for (int s = 0; s < 8; ++s) {
        isum = _mm512_dpbusd_epi32(isum, _mm512_xor_si512(Bcast4(aq + 4 * s), flip), wq[s]);
      }
      isum = _mm512_sub_epi32(isum, correction);
      const __m512 scale = _mm512_mul_ps(dw, _mm512_set1_ps(a.d_row(t0 + i)[g]));
      acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), scale, acc[i]);
    }
  }
  for (int i = 0; i < MR; ++i) Store(y + (t0 + i) * ldy, acc[i], tile * kTileRows, w.n_rows);
}

// Runs Tile<MR> over the tokens in chunks of kMr, then the remainder.
template <template <int> class Tile>
void Drive(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end, const QuantizedActs& a,
           float* y, int64_t ldy) {
  for (int64_t tile = tile_begin; tile < tile_end; ++tile) {
    int64_t t = 0;
    for (; t + kMr <= a.m; t += kMr) Tile<kMr>::Run(w, tile, a, t, y, ldy);
    switch (a.m - t) {
      case 1:
        Tile<1>::Run(w, tile, a, t, y, ldy);
        break;
      case 2:
        Tile<2>::Run(w, tile, a, t, y, ldy);
        break;
      case 3:
        Tile<3>::Run(w, tile, a, t, y, ldy);
        break;
      case 4:
        Tile<4>::Run(w, tile, a, t, y, ldy);
        break;
      case 5:
        Tile<5>::Run(w, tile, a, t, y, ldy);
        break;
      default:
        break;
    }
  }
}

template <int MR>
struct Q4Min {
  static void Run(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
                  int64_t ldy) {
    TileQ4<MR, true>(w, tile, a, t0, y, ldy);
  }
};
template <int MR>
struct Q4NoMin {
  static void Run(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
                  int64_t ldy) {
    TileQ4<MR, false>(w, tile, a, t0, y, ldy);
  }
};
template <int MR>
struct Q8 {
  static void Run(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
                  int64_t ldy) {
    TileQ8<MR>(w, tile, a, t0, y, ldy);
  }
};

}  // namespace

void QGemmQ4x16_avx512vnni(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                           const QuantizedActs& a, float* y, int64_t ldy) {
  if (w.has_min) {
    Drive<Q4Min>(w, tile_begin, tile_end, a, y, ldy);
  } else {
    Drive<Q4NoMin>(w, tile_begin, tile_end, a, y, ldy);
  }
}

void QGemmQ8x16_avx512vnni(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                           const QuantizedActs& a, float* y, int64_t ldy) {
  Drive<Q8>(w, tile_begin, tile_end, a, y, ldy);
}

}  // namespace ember
#endif  // __x86_64__
