// Quantized GEMM on AVX-512 VNNI. One zmm holds 16 int32 lanes = the 16 rows
// of a tile; vpdpbusd multiplies each row's 4 weight bytes with 4 broadcast
// activation bytes and adds them into its lane: no horizontal sums. Weights
// are unpacked once per group and reused for up to kMr tokens (prefill).
#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "ops/kernels.h"

namespace ember {
namespace {

constexpr int kMr = 4;  // tokens per register tile

// Decode (one token, one tile at a time) streams the weights once: a software
// prefetch 8 KiB ahead of each 64-byte load keeps more lines in flight than the
// hardware prefetcher does for a loop whose loads are spaced by arithmetic.
// Measured from a 256 MiB matrix on one thread (ember_gemv_rate, 3 alternating
// rounds): Q4 39 -> 42-45 GB/s, Q8 42 -> 43-44; 1, 2 and 16 KiB ahead were no
// better or worse. Weights are tile-major, so ahead is the same stream.
constexpr int kPrefetchBytes = 8192;

template <int MR, int NT>
inline void PrefetchAhead(const uint8_t* p) {
  if constexpr (MR == 1 && NT == 1) {
    _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchBytes), _MM_HINT_T0);
  }
}

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

// Q4 and Q5 tiles, NT tiles at once: each 4-byte activation broadcast feeds
// NT vpdpbusd (one per tile), so a pair of tiles halves the broadcasts per
// multiply. Q5 (kQ5) adds 16 to the bytes its high-bit plane marks: 64 bits
// per unpacked 64-byte vector, one mask register each.
template <int MR, int NT, bool kHasMin, bool kQ5>
void TilesQ4(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
             int64_t ldy) {
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  __m512 acc[NT][MR];
  for (int j = 0; j < NT; ++j) {
    for (int i = 0; i < MR; ++i) acc[j][i] = _mm512_setzero_ps();
  }
  const uint8_t* gp[NT];
  for (int j = 0; j < NT; ++j) gp[j] = w.tile(tile + j);
  const int8_t* aq[MR];
  for (int i = 0; i < MR; ++i) aq[i] = a.q_row(t0 + i);
  for (int64_t g = 0; g < w.n_groups; ++g) {
    __m512i isum[NT][MR];
    for (int j = 0; j < NT; ++j) {
      for (int i = 0; i < MR; ++i) isum[j][i] = _mm512_setzero_si512();
    }
    if constexpr (kQ5) PrefetchAhead<MR, NT>(gp[0] + 256);
    for (int s = 0; s < 4; ++s) {
      __m512i lo[NT], hi[NT];
      PrefetchAhead<MR, NT>(gp[0] + 64 * s);
      for (int j = 0; j < NT; ++j) {
        const __m512i v = _mm512_loadu_si512(gp[j] + 64 * s);
        lo[j] = _mm512_and_si512(v, low4);
        hi[j] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
        if constexpr (kQ5) {
          uint64_t bits[2];
          std::memcpy(bits, gp[j] + 256 + 16 * s, 16);  // qh[2s], qh[2s + 1]
          const __m512i sixteen = _mm512_set1_epi8(16);
          lo[j] = _mm512_mask_add_epi8(lo[j], _cvtu64_mask64(bits[0]), lo[j], sixteen);
          hi[j] = _mm512_mask_add_epi8(hi[j], _cvtu64_mask64(bits[1]), hi[j], sixteen);
        }
      }
      for (int i = 0; i < MR; ++i) {
        const __m512i blo = Bcast4(aq[i] + g * 32 + 8 * s);
        const __m512i bhi = Bcast4(aq[i] + g * 32 + 8 * s + 4);
        for (int j = 0; j < NT; ++j) {
          isum[j][i] = _mm512_dpbusd_epi32(isum[j][i], lo[j], blo);
          isum[j][i] = _mm512_dpbusd_epi32(isum[j][i], hi[j], bhi);
        }
      }
    }
    constexpr PackedLayout kLayout = kQ5 ? PackedLayout::kQ5x16 : PackedLayout::kQ4x16;
    constexpr size_t kScales = PackedQuantBytes(kLayout);
    for (int j = 0; j < NT; ++j) {
      const __m512 dw =
          _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(gp[j] + kScales)));
      __m512 mw = _mm512_setzero_ps();
      if constexpr (kHasMin) {
        mw = _mm512_cvtph_ps(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(gp[j] + kScales + 32)));
      }
      for (int i = 0; i < MR; ++i) {
        __m512i sum = isum[j][i];
        if constexpr (!kHasMin) {  // the offset, off the integer sum (qgemm_ref.cpp)
          sum = _mm512_add_epi32(sum,
                                 _mm512_set1_epi32(PackedOffset(kLayout) * a.qsum_row(t0 + i)[g]));
        }
        const __m512 scale = _mm512_mul_ps(dw, _mm512_set1_ps(a.d_row(t0 + i)[g]));
        acc[j][i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), scale, acc[j][i]);
        if constexpr (kHasMin) {
          acc[j][i] = _mm512_fmadd_ps(mw, _mm512_set1_ps(a.sm_row(t0 + i)[g]), acc[j][i]);
        }
      }
      gp[j] += w.group_bytes;
    }
  }
  for (int j = 0; j < NT; ++j) {
    for (int i = 0; i < MR; ++i) {
      Store(y + (t0 + i) * ldy, acc[j][i], (tile + j) * kTileRows, w.n_rows);
    }
  }
}

// Int8 tiles, NT at once as in TilesQ4. vpdpbusd needs one unsigned operand:
// activations go in as a + 128 (xor 0x80, once per broadcast for all NT
// tiles), and 128 * sum(w), from a dpbusd of ones with w, is taken off.
template <int MR, int NT>
void TilesQ8(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
             int64_t ldy) {
  const __m512i ones = _mm512_set1_epi8(1);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512 acc[NT][MR];
  for (int j = 0; j < NT; ++j) {
    for (int i = 0; i < MR; ++i) acc[j][i] = _mm512_setzero_ps();
  }
  const uint8_t* gp[NT];
  for (int j = 0; j < NT; ++j) gp[j] = w.tile(tile + j);
  const int8_t* aq[MR];
  for (int i = 0; i < MR; ++i) aq[i] = a.q_row(t0 + i);
  for (int64_t g = 0; g < w.n_groups; ++g) {
    __m512i isum[NT][MR], wsum[NT];
    for (int j = 0; j < NT; ++j) {
      wsum[j] = _mm512_setzero_si512();
      for (int i = 0; i < MR; ++i) isum[j][i] = _mm512_setzero_si512();
    }
    for (int s = 0; s < 8; ++s) {
      __m512i wq[NT];
      PrefetchAhead<MR, NT>(gp[0] + 64 * s);
      for (int j = 0; j < NT; ++j) {
        wq[j] = _mm512_loadu_si512(gp[j] + 64 * s);
        wsum[j] = _mm512_dpbusd_epi32(wsum[j], ones, wq[j]);
      }
      for (int i = 0; i < MR; ++i) {
        const __m512i b = _mm512_xor_si512(Bcast4(aq[i] + g * 32 + 4 * s), flip);
        for (int j = 0; j < NT; ++j) isum[j][i] = _mm512_dpbusd_epi32(isum[j][i], b, wq[j]);
      }
    }
    for (int j = 0; j < NT; ++j) {
      const __m512i correction = _mm512_slli_epi32(wsum[j], 7);
      const __m512 dw =
          _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(gp[j] + 512)));
      for (int i = 0; i < MR; ++i) {
        const __m512i exact = _mm512_sub_epi32(isum[j][i], correction);
        const __m512 scale = _mm512_mul_ps(dw, _mm512_set1_ps(a.d_row(t0 + i)[g]));
        acc[j][i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(exact), scale, acc[j][i]);
      }
      gp[j] += w.group_bytes;
    }
  }
  for (int j = 0; j < NT; ++j) {
    for (int i = 0; i < MR; ++i) {
      Store(y + (t0 + i) * ldy, acc[j][i], (tile + j) * kTileRows, w.n_rows);
    }
  }
}

// Kernel<MR, NT>::Run(w, tile, a, t0, y, ldy) for a run-time mr in 1..MR.
template <template <int, int> class Kernel, int NT, int MR>
inline void RunTokens(int64_t mr, const PackedMatrix& w, int64_t tile, const QuantizedActs& a,
                      int64_t t0, float* y, int64_t ldy) {
  if constexpr (MR > 1) {
    if (mr < MR) return RunTokens<Kernel, NT, MR - 1>(mr, w, tile, a, t0, y, ldy);
  }
  Kernel<MR, NT>::Run(w, tile, a, t0, y, ldy);
}

// Tiles in pairs (a last odd tile alone), tokens in groups of kMr. One token
// (decode) goes one tile at a time: there the broadcasts are not the limit.
template <template <int, int> class Kernel>
void Drive(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end, const QuantizedActs& a,
           float* y, int64_t ldy) {
  for (int64_t tile = tile_begin; tile < tile_end;) {
    const bool pair = a.m > 1 && tile + 1 < tile_end;
    for (int64_t t = 0; t < a.m; t += kMr) {
      const int64_t mr = std::min<int64_t>(kMr, a.m - t);
      if (pair) {
        RunTokens<Kernel, 2, kMr>(mr, w, tile, a, t, y, ldy);
      } else {
        RunTokens<Kernel, 1, kMr>(mr, w, tile, a, t, y, ldy);
      }
    }
    tile += pair ? 2 : 1;
  }
}

template <bool kHasMin, bool kQ5>
struct Q4Kernel {
  template <int MR, int NT>
  struct K {
    static void Run(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0,
                    float* y, int64_t ldy) {
      TilesQ4<MR, NT, kHasMin, kQ5>(w, tile, a, t0, y, ldy);
    }
  };
};
template <int MR, int NT>
struct Q8 {
  static void Run(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
                  int64_t ldy) {
    TilesQ8<MR, NT>(w, tile, a, t0, y, ldy);
  }
};

}  // namespace

void QGemmQ4x16_avx512vnni(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                           const QuantizedActs& a, float* y, int64_t ldy) {
  if (w.has_min) {
    Drive<Q4Kernel<true, false>::K>(w, tile_begin, tile_end, a, y, ldy);
  } else {
    Drive<Q4Kernel<false, false>::K>(w, tile_begin, tile_end, a, y, ldy);
  }
}

void QGemmQ5x16_avx512vnni(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                           const QuantizedActs& a, float* y, int64_t ldy) {
  if (w.has_min) {
    Drive<Q4Kernel<true, true>::K>(w, tile_begin, tile_end, a, y, ldy);
  } else {
    Drive<Q4Kernel<false, true>::K>(w, tile_begin, tile_end, a, y, ldy);
  }
}

void QGemmQ8x16_avx512vnni(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                           const QuantizedActs& a, float* y, int64_t ldy) {
  Drive<Q8>(w, tile_begin, tile_end, a, y, ldy);
}

}  // namespace ember
#endif  // __x86_64__
