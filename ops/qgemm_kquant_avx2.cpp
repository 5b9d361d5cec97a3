// Quantized GEMM over the K layouts (Q4Kx16, Q5Kx16: quant/packed.h) on AVX2.
// The quants unpack and multiply as Q4x16's / Q5x16's (qgemm_avx2.cpp): both
// halves of a tile (rows 0-7, 8-15) per activation broadcast, maddubs pairs
// summed in int16. The widening madd multiplies by the row's 6-bit group
// scale (repeated in both int16 halves of its 32-bit lane) instead of by ones,
// so the int32 sums come out as sc * isum, exactly qgemm_ref.cpp's integer, at
// no extra instruction; then sd = fma(float(sc * isum), d_a, sd), and the mins'
// sm = fma(float(m), dqsum, sm) (QuantizedActs' exact d_a * qsum: the same
// exact product as the reference's). After the 8 groups, d and dmin once.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "ops/kernels.h"
#include "ops/qgemm_avx2_common.h"

namespace ember {
namespace {

// 8 bytes (one per row) as float lanes.
inline __m256 BytesToFloat8(const uint8_t* p) {
  return _mm256_cvtepi32_ps(
      _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}

// One tile of a K layout for MR tokens. Int16 sums as in TileQ4: a sub-chunk
// adds at most 2 * 2 * 15 * 127 = 7620 per lane for int4 (4 sub-chunks fit)
// and 15748 for int5 (2 fit), so Q5 widens every two sub-chunks; each
// widening multiplies by the scale, and sc * (s1 + s2) = sc * s1 + sc * s2.
// |sc * isum| <= 63 * 32 * 31 * 127 < 2^23 fits int32 and converts exactly.
template <int MR, bool kQ5>
void TileK(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
           int64_t ldy) {
  constexpr PackedLayout kLayout = kQ5 ? PackedLayout::kQ5Kx16 : PackedLayout::kQ4Kx16;
  constexpr size_t kHeader = KHeaderBytes(kLayout), kGroup = KGroupBytes(kLayout);
  constexpr int kWiden = kQ5 ? 2 : 4;  // sub-chunks per int16 sum
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  alignas(32) float acc[MR][kTileRows] = {};
  const int8_t* aq[MR];
  for (int i = 0; i < MR; ++i) aq[i] = a.q_row(t0 + i);
  const float *da_row[MR], *dqsum_row[MR];
  for (int i = 0; i < MR; ++i) da_row[i] = a.d_row(t0 + i), dqsum_row[i] = a.dqsum_row(t0 + i);
  const uint8_t* sg = w.tile(tile);
  const int64_t n_supers = w.n_groups / kSuperGroups;
  for (int64_t s = 0; s < n_supers; ++s, sg += w.super_bytes) {
    for (size_t line = 0; line < kHeader; line += 64) PrefetchAhead<MR>(sg + line);
    // Per token and half: the scaled sums and the mins' sums of the groups.
    __m256 sd[MR][2], sm[MR][2];
    for (int i = 0; i < MR; ++i) {
      sd[i][0] = sd[i][1] = sm[i][0] = sm[i][1] = _mm256_setzero_ps();
    }
    for (int jg = 0; jg < kSuperGroups; ++jg) {
      const int64_t g = s * kSuperGroups + jg;
      const uint8_t* gp = sg + kHeader + jg * kGroup;
      // Each row's scale as an int16 pair (sc, sc): rows 0-7, 8-15.
      const __m128i sc8 =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(sg + kKScaleOffset + 16 * jg));
      const __m256i scw0 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(sc8, sc8));
      const __m256i scw1 = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(sc8, sc8));
      __m256i sum16[MR][2], isum[MR][2];
      for (int i = 0; i < MR; ++i) {
        sum16[i][0] = sum16[i][1] = _mm256_setzero_si256();
        isum[i][0] = isum[i][1] = _mm256_setzero_si256();
      }
      if constexpr (kQ5) PrefetchAhead<MR>(gp + 256);
      for (int c = 0; c < 4; ++c) {  // columns 8c .. 8c + 7
        PrefetchAhead<MR>(gp + 64 * c);
        const __m256i v0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * c));
        const __m256i v1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * c + 32));
        __m256i lo0 = _mm256_and_si256(v0, low4);
        __m256i hi0 = _mm256_and_si256(_mm256_srli_epi16(v0, 4), low4);
        __m256i lo1 = _mm256_and_si256(v1, low4);
        __m256i hi1 = _mm256_and_si256(_mm256_srli_epi16(v1, 4), low4);
        if constexpr (kQ5) {
          uint32_t bits[4];  // qh[2c] (rows 0-7, 8-15), qh[2c + 1] (the same)
          std::memcpy(bits, gp + 256 + 16 * c, 16);
          lo0 = _mm256_or_si256(lo0, HighBits(bits[0]));
          lo1 = _mm256_or_si256(lo1, HighBits(bits[1]));
          hi0 = _mm256_or_si256(hi0, HighBits(bits[2]));
          hi1 = _mm256_or_si256(hi1, HighBits(bits[3]));
        }
        for (int i = 0; i < MR; ++i) {
          const int8_t* ac = aq[i] + g * 32 + 8 * c;
          const __m256i blo = Bcast4(ac), bhi = Bcast4(ac + 4);
          sum16[i][0] = _mm256_add_epi16(
              sum16[i][0],
              _mm256_add_epi16(_mm256_maddubs_epi16(lo0, blo), _mm256_maddubs_epi16(hi0, bhi)));
          sum16[i][1] = _mm256_add_epi16(
              sum16[i][1],
              _mm256_add_epi16(_mm256_maddubs_epi16(lo1, blo), _mm256_maddubs_epi16(hi1, bhi)));
          OpaqueReg(sum16[i][0]);
          OpaqueReg(sum16[i][1]);
          if ((c + 1) % kWiden == 0) {
            isum[i][0] = _mm256_add_epi32(isum[i][0], _mm256_madd_epi16(sum16[i][0], scw0));
            isum[i][1] = _mm256_add_epi32(isum[i][1], _mm256_madd_epi16(sum16[i][1], scw1));
            sum16[i][0] = sum16[i][1] = _mm256_setzero_si256();
          }
        }
      }
      // The group's mins as floats: rows 0-7, 8-15.
      const __m256 m0 = BytesToFloat8(sg + kKMinOffset + 16 * jg);
      const __m256 m1 = BytesToFloat8(sg + kKMinOffset + 16 * jg + 8);
      for (int i = 0; i < MR; ++i) {
        const __m256 dav = _mm256_set1_ps(da_row[i][g]);
        const __m256 f = _mm256_set1_ps(dqsum_row[i][g]);
        sd[i][0] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[i][0]), dav, sd[i][0]);
        sd[i][1] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[i][1]), dav, sd[i][1]);
        sm[i][0] = _mm256_fmadd_ps(m0, f, sm[i][0]);
        sm[i][1] = _mm256_fmadd_ps(m1, f, sm[i][1]);
      }
    }
    for (int h = 0; h < 2; ++h) {
      const __m256 d = LoadHalf(sg + 16 * h), dmin = LoadHalf(sg + kKDminOffset + 16 * h);
      for (int i = 0; i < MR; ++i) {
        __m256 r = _mm256_fmadd_ps(d, sd[i][h], _mm256_load_ps(acc[i] + 8 * h));
        r = _mm256_fnmadd_ps(dmin, sm[i][h], r);  // r - dmin * sm, one rounding
        _mm256_store_ps(acc[i] + 8 * h, r);
      }
    }
  }
  for (int i = 0; i < MR; ++i) {
    for (int h = 0; h < 2; ++h) {
      Store(y + (t0 + i) * ldy, _mm256_load_ps(acc[i] + 8 * h), tile * kTileRows + 8 * h, w.n_rows);
    }
  }
}

template <bool kQ5>
struct K {
  template <int MR>
  struct Tile {
    static void Run(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0,
                    float* y, int64_t ldy) {
      TileK<MR, kQ5>(w, tile, a, t0, y, ldy);
    }
  };
};

}  // namespace

void QGemmQ4Kx16_avx2(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                      const QuantizedActs& a, float* y, int64_t ldy) {
  Drive<K<false>::Tile>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ5Kx16_avx2(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                      const QuantizedActs& a, float* y, int64_t ldy) {
  Drive<K<true>::Tile>(w, tile_begin, tile_end, a, y, ldy);
}

}  // namespace ember
#endif  // __x86_64__
