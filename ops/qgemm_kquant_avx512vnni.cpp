// Quantized GEMM over the K layouts (Q4Kx16, Q5Kx16: quant/packed.h) on
// AVX-512 VNNI. The quants of a group unpack and multiply as Q4x16's / Q5x16's
// (qgemm_avx512vnni.cpp): one zmm of int32 lanes holds the 16 rows' sums. The
// group's 6-bit scales then meet the sums in float, exactly: scale = float(sc)
// * d_a (6 by 11 significant bits), sd = fma(float(isum), scale, sd), the
// exact product sc * isum * d_a rounded once, as qgemm_ref.cpp's
// fma(float(sc * isum), d_a, sd). The mins need no quants: sm = fma(float(m),
// dqsum, sm) per group (QuantizedActs' exact d_a * qsum). Then d and dmin once
// per super-group.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "ops/kernels.h"
#include "ops/qgemm_avx512vnni_common.h"

namespace ember {
namespace {

// 16 bytes (one per row) as float lanes.
inline __m512 BytesToFloat(const uint8_t* p) {
  return _mm512_cvtepi32_ps(
      _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}

inline __m512 LoadFp16x16(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// NT tiles x MR tokens of a K layout. The per-group float sums sd take
// NT * MR registers beside the integer sums; the row results wait in L1
// (touched once per super-group).
template <int MR, int NT, PackedLayout kLayout>
void TilesK(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
            int64_t ldy) {
  constexpr bool kQ5 = kLayout == PackedLayout::kQ5Kx16;
  constexpr size_t kHeader = KHeaderBytes(kLayout), kGroup = KGroupBytes(kLayout);
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  alignas(64) float acc[NT][MR][kTileRows] = {};
  const uint8_t* sg[NT];
  for (int j = 0; j < NT; ++j) sg[j] = w.tile(tile + j);
  const int8_t* aq[MR];
  for (int i = 0; i < MR; ++i) aq[i] = a.q_row(t0 + i);
  const int64_t n_supers = w.n_groups / kSuperGroups;
  for (int64_t s = 0; s < n_supers; ++s) {
    for (size_t line = 0; line < kHeader; line += 64) PrefetchAhead<MR, NT>(sg[0] + line);
    __m512 sd[NT][MR], sm[NT][MR];
    for (int j = 0; j < NT; ++j) {
      for (int i = 0; i < MR; ++i) sd[j][i] = sm[j][i] = _mm512_setzero_ps();
    }
    for (int jg = 0; jg < kSuperGroups; ++jg) {
      const int64_t g = s * kSuperGroups + jg;
      const size_t gq = kHeader + jg * kGroup;
      __m512i isum[NT][MR];
      for (int j = 0; j < NT; ++j) {
        for (int i = 0; i < MR; ++i) isum[j][i] = _mm512_setzero_si512();
      }
      if constexpr (kQ5) PrefetchAhead<MR, NT>(sg[0] + gq + 256);
      for (int c = 0; c < 4; ++c) {
        __m512i lo[NT], hi[NT];
        PrefetchAhead<MR, NT>(sg[0] + gq + 64 * c);
        for (int j = 0; j < NT; ++j) {
          const __m512i v = _mm512_loadu_si512(sg[j] + gq + 64 * c);
          lo[j] = _mm512_and_si512(v, low4);
          hi[j] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
          if constexpr (kQ5) {  // Q5x16's high bits: + 16 under a mask
            uint64_t bits[2];
            std::memcpy(bits, sg[j] + gq + 256 + 16 * c, 16);
            const __m512i sixteen = _mm512_set1_epi8(16);
            lo[j] = _mm512_mask_add_epi8(lo[j], _cvtu64_mask64(bits[0]), lo[j], sixteen);
            hi[j] = _mm512_mask_add_epi8(hi[j], _cvtu64_mask64(bits[1]), hi[j], sixteen);
          }
        }
        for (int i = 0; i < MR; ++i) {
          const __m512i blo = Bcast4(aq[i] + g * 32 + 8 * c);
          const __m512i bhi = Bcast4(aq[i] + g * 32 + 8 * c + 4);
          for (int j = 0; j < NT; ++j) {
            isum[j][i] = _mm512_dpbusd_epi32(isum[j][i], lo[j], blo);
            isum[j][i] = _mm512_dpbusd_epi32(isum[j][i], hi[j], bhi);
          }
        }
      }
      for (int j = 0; j < NT; ++j) {
        const __m512 sc = BytesToFloat(sg[j] + kKScaleOffset + 16 * jg);
        const __m512 m = BytesToFloat(sg[j] + kKMinOffset + 16 * jg);
        for (int i = 0; i < MR; ++i) {
          const __m512 scale = _mm512_mul_ps(sc, _mm512_set1_ps(a.d_row(t0 + i)[g]));  // exact
          sd[j][i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[j][i]), scale, sd[j][i]);
          sm[j][i] = _mm512_fmadd_ps(m, _mm512_set1_ps(a.dqsum_row(t0 + i)[g]), sm[j][i]);
        }
      }
    }
    for (int j = 0; j < NT; ++j) {
      const __m512 d = LoadFp16x16(sg[j]), dmin = LoadFp16x16(sg[j] + kKDminOffset);
      for (int i = 0; i < MR; ++i) {
        __m512 r = _mm512_fmadd_ps(d, sd[j][i], _mm512_load_ps(acc[j][i]));
        r = _mm512_fnmadd_ps(dmin, sm[j][i], r);  // r - dmin * sm, one rounding
        _mm512_store_ps(acc[j][i], r);
      }
      sg[j] += w.super_bytes;
    }
  }
  for (int j = 0; j < NT; ++j) {
    for (int i = 0; i < MR; ++i) {
      Store(y + (t0 + i) * ldy, _mm512_load_ps(acc[j][i]), (tile + j) * kTileRows, w.n_rows);
    }
  }
}

template <PackedLayout kLayout>
struct KKernel {
  template <int MR, int NT>
  struct K {
    static void Run(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0,
                    float* y, int64_t ldy) {
      TilesK<MR, NT, kLayout>(w, tile, a, t0, y, ldy);
    }
  };
};

}  // namespace

void QGemmQ4Kx16_avx512vnni(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                            const QuantizedActs& a, float* y, int64_t ldy) {
  Drive<KKernel<PackedLayout::kQ4Kx16>::K>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ5Kx16_avx512vnni(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                            const QuantizedActs& a, float* y, int64_t ldy) {
  Drive<KKernel<PackedLayout::kQ5Kx16>::K>(w, tile_begin, tile_end, a, y, ldy);
}

}  // namespace ember
#endif  // __x86_64__
