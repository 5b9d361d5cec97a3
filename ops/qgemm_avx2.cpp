// Quantized GEMM on AVX2. A tile's 16 rows are handled as two halves of 8
// (one ymm of int32 lanes each). Without VNNI, the 4-byte dot products come
// from maddubs (u8 x s8 -> pairs of int16) and madd with ones (-> int32):
// exact, since no int16 pair sum can overflow (int4: 2 * 15 * 127; int8 with
// the sign trick: 2 * 128 * 127).
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "ops/kernels.h"

namespace ember {
namespace {

constexpr int kMr = 4;

inline __m256i Bcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

inline __m256i Dot4(__m256i w_u8, __m256i a_s8) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(w_u8, a_s8), _mm256_set1_epi16(1));
}

inline void Store(float* y, __m256 v, int64_t row0, int64_t n_rows) {
  const int64_t left = n_rows - row0;
  if (left >= 8) {
    _mm256_storeu_ps(y + row0, v);
  } else if (left > 0) {
    float tmp[8];
    _mm256_storeu_ps(tmp, v);
    std::memcpy(y + row0, tmp, static_cast<size_t>(left) * sizeof(float));
  }
}

inline __m256 LoadHalf(const uint8_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

template <int MR, bool kHasMin>
void HalfQ4(const PackedMatrix& w, int64_t tile, int half, const QuantizedActs& a, int64_t t0,
            float* y, int64_t ldy) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  __m256 acc[MR];
  for (int i = 0; i < MR; ++i) acc[i] = _mm256_setzero_ps();
  const uint8_t* gp = w.tile(tile);
  for (int64_t g = 0; g < w.n_groups; ++g, gp += w.group_bytes) {
    __m256i wq[8];
    for (int s = 0; s < 4; ++s) {
      const __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * s + 32 * half));
      wq[2 * s] = _mm256_and_si256(v, low4);
      wq[2 * s + 1] = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
    }
    const __m256 dw = LoadHalf(gp + 256 + 16 * half);
    const __m256 mw = kHasMin ? LoadHalf(gp + 288 + 16 * half)
                              : _mm256_mul_ps(dw, _mm256_set1_ps(-8.0f));
    for (int i = 0; i < MR; ++i) {
      const int8_t* aq = a.q_row(t0 + i) + g * 32;
      // Eight maddubs results summed in int16 cannot overflow (8 * 2 * 15 * 127
      // = 30480), so one madd per group widens them to int32.
      __m256i sum16 = _mm256_setzero_si256();
      for (int s = 0; s < 4; ++s) {
        sum16 = _mm256_add_epi16(sum16, _mm256_maddubs_epi16(wq[2 * s], Bcast4(aq + 8 * s)));
        sum16 = _mm256_add_epi16(sum16, _mm256_maddubs_epi16(wq[2 * s + 1], Bcast4(aq + 8 * s + 4)));
      }
      const __m256i isum = _mm256_madd_epi16(sum16, _mm256_set1_epi16(1));
      const __m256 scale = _mm256_mul_ps(dw, _mm256_set1_ps(a.d_row(t0 + i)[g]));
      acc[i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), scale, acc[i]);
      acc[i] = _mm256_fmadd_ps(mw, _mm256_set1_ps(a.min_sums(t0 + i, kHasMin)[g]), acc[i]);
    }
  }
  for (int i = 0; i < MR; ++i) {
    Store(y + (t0 + i) * ldy, acc[i], tile * kTileRows + 8 * half, w.n_rows);
  }
}

template <int MR>
void HalfQ8(const PackedMatrix& w, int64_t tile, int half, const QuantizedActs& a, int64_t t0,
            float* y, int64_t ldy) {
  __m256 acc[MR];
  for (int i = 0; i < MR; ++i) acc[i] = _mm256_setzero_ps();
  const uint8_t* gp = w.tile(tile);
  for (int64_t g = 0; g < w.n_groups; ++g, gp += w.group_bytes) {
    __m256i wabs[8], wq[8];
    for (int s = 0; s < 8; ++s) {
      wq[s] = _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * s + 32 * half));
      wabs[s] = _mm256_abs_epi8(wq[s]);  // -128 -> 0x80 = 128 as u8: still right
    }
    const __m256 dw = LoadHalf(gp + 512 + 16 * half);
    for (int i = 0; i < MR; ++i) {
      const int8_t* aq = a.q_row(t0 + i) + g * 32;
      __m256i isum = _mm256_setzero_si256();
      for (int s = 0; s < 8; ++s) {
        // |w| * (a with w's sign) = w * a
        isum = _mm256_add_epi32(isum, Dot4(wabs[s], _mm256_sign_epi8(Bcast4(aq + 4 * s), wq[s])));
      }
      const __m256 scale = _mm256_mul_ps(dw, _mm256_set1_ps(a.d_row(t0 + i)[g]));
      acc[i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), scale, acc[i]);
    }
  }
  for (int i = 0; i < MR; ++i) {
    Store(y + (t0 + i) * ldy, acc[i], tile * kTileRows + 8 * half, w.n_rows);
  }
}

// Decode (one token): both halves of a tile in one pass over its memory, so
// each 64-byte line is read once, front to back.
template <bool kInt8, bool kHasMin>
void GemvTile(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, float* y) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  const uint8_t* gp = w.tile(tile);
  const int8_t* aq = a.q_row(0);
  const size_t q_bytes = kInt8 ? 512 : 256;
  for (int64_t g = 0; g < w.n_groups; ++g, gp += w.group_bytes, aq += 32) {
    const float da = a.d_row(0)[g];
    for (int h = 0; h < 2; ++h) {
      __m256i isum;
      if (kInt8) {
        isum = _mm256_setzero_si256();
        for (int s = 0; s < 8; ++s) {
          const __m256i wq =
              _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * s + 32 * h));
          isum = _mm256_add_epi32(
              isum, Dot4(_mm256_abs_epi8(wq), _mm256_sign_epi8(Bcast4(aq + 4 * s), wq)));
        }
      } else {
        __m256i sum16 = _mm256_setzero_si256();
        for (int s = 0; s < 4; ++s) {
          const __m256i v =
              _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * s + 32 * h));
          sum16 = _mm256_add_epi16(
              sum16, _mm256_maddubs_epi16(_mm256_and_si256(v, low4), Bcast4(aq + 8 * s)));
          sum16 = _mm256_add_epi16(
              sum16, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v, 4), low4),
                                          Bcast4(aq + 8 * s + 4)));
        }
        isum = _mm256_madd_epi16(sum16, _mm256_set1_epi16(1));
      }
      const __m256 dw = LoadHalf(gp + q_bytes + 16 * h);
      acc[h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(dw, _mm256_set1_ps(da)),
                               acc[h]);
      if (!kInt8) {
        const __m256 mw = kHasMin ? LoadHalf(gp + q_bytes + 32 + 16 * h)
                                  : _mm256_mul_ps(dw, _mm256_set1_ps(-8.0f));
        acc[h] = _mm256_fmadd_ps(mw, _mm256_set1_ps(a.min_sums(0, kHasMin)[g]), acc[h]);
      }
    }
  }
  Store(y, acc[0], tile * kTileRows, w.n_rows);
  Store(y, acc[1], tile * kTileRows + 8, w.n_rows);
}

template <template <int> class Half>
void Drive(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end, const QuantizedActs& a,
           float* y, int64_t ldy) {
  if (a.m == 1) {
    for (int64_t tile = tile_begin; tile < tile_end; ++tile) {
      Half<1>::Gemv(w, tile, a, y);
    }
    return;
  }
  for (int64_t tile = tile_begin; tile < tile_end; ++tile) {
    for (int half = 0; half < 2; ++half) {
      if (tile * kTileRows + 8 * half >= w.n_rows) break;
      int64_t t = 0;
      for (; t + kMr <= a.m; t += kMr) Half<kMr>::Run(w, tile, half, a, t, y, ldy);
      switch (a.m - t) {
        case 1: Half<1>::Run(w, tile, half, a, t, y, ldy); break;
        case 2: Half<2>::Run(w, tile, half, a, t, y, ldy); break;
        case 3: Half<3>::Run(w, tile, half, a, t, y, ldy); break;
        default: break;
      }
    }
  }
}

template <int MR>
struct Q4Min {
  static void Run(const PackedMatrix& w, int64_t tile, int half, const QuantizedActs& a,
                  int64_t t0, float* y, int64_t ldy) {
    HalfQ4<MR, true>(w, tile, half, a, t0, y, ldy);
  }
  static void Gemv(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, float* y) {
    GemvTile<false, true>(w, tile, a, y);
  }
};
template <int MR>
struct Q4NoMin {
  static void Run(const PackedMatrix& w, int64_t tile, int half, const QuantizedActs& a,
                  int64_t t0, float* y, int64_t ldy) {
    HalfQ4<MR, false>(w, tile, half, a, t0, y, ldy);
  }
  static void Gemv(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, float* y) {
    GemvTile<false, false>(w, tile, a, y);
  }
};
template <int MR>
struct Q8 {
  static void Run(const PackedMatrix& w, int64_t tile, int half, const QuantizedActs& a,
                  int64_t t0, float* y, int64_t ldy) {
    HalfQ8<MR>(w, tile, half, a, t0, y, ldy);
  }
  static void Gemv(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, float* y) {
    GemvTile<true, false>(w, tile, a, y);
  }
};

}  // namespace

void QGemmQ4x16_avx2(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                     const QuantizedActs& a, float* y, int64_t ldy) {
  if (w.has_min) {
    Drive<Q4Min>(w, tile_begin, tile_end, a, y, ldy);
  } else {
    Drive<Q4NoMin>(w, tile_begin, tile_end, a, y, ldy);
  }
}

void QGemmQ8x16_avx2(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                     const QuantizedActs& a, float* y, int64_t ldy) {
  Drive<Q8>(w, tile_begin, tile_end, a, y, ldy);
}

}  // namespace ember
#endif  // __x86_64__
