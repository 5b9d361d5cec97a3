// Quantized GEMM over the K layouts (Q4Kx16, Q5Kx16; Q3Kx16, Q2Kx16 and
// Q6Kx16 below: quant/packed.h) on AVX-512 VNNI. The quants of a group
// unpack and multiply as Q4x16's / Q5x16's (qgemm_avx512vnni.cpp): one zmm of
// int32 lanes holds the 16 rows' sums. The group's 6-bit scales then meet the
// sums in float, exactly: scale = float(sc)
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
template <int MR, int NT, PackedLayout kLayout, Stage S>
void TilesK(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
            int64_t ldy, uint8_t* stage) {
  const Staged<S, NT> staged{stage};
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
    if constexpr (S == Stage::kNoPrefetch) {
      for (int i = 0; i < MR; ++i) PrefetchActs<ActSums::kDqsum>(a, t0 + i, s + 1);
    }
    TouchHeader<kLayout, MR, NT, S>(sg[0], kHeader);
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
      if constexpr (kQ5) PrefetchAhead<kLayout, MR, NT, S>(sg[0] + gq + 256);
      __m512i plane[NT];  // Q5: the group's high-bit planes
      for (int j = 0; j < NT; ++j) {
        plane[j] = kQ5 ? _mm512_loadu_si512(sg[j] + gq + 256) : _mm512_setzero_si512();
      }
      for (int c = 0; c < 4; ++c) {
        __m512i lo[NT], hi[NT];
        PrefetchAhead<kLayout, MR, NT, S>(sg[0] + gq + 64 * c);
        for (int j = 0; j < NT; ++j) {
          staged.Two(g, 2 * c, j, &lo[j], &hi[j], [&](__m512i* l, __m512i* h) {
            const __m512i v = _mm512_loadu_si512(sg[j] + gq + 64 * c);
            *l = _mm512_and_si512(v, low4);
            *h = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
            if constexpr (kQ5) AddHighBits(plane[j], 2 * c, l, h);
          });
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

// Unpacked vector V (columns 4V..4V+3 of the group) of a Q3Kx16 / Q2Kx16
// group from its crumb vector (V / 4) and high-bit plane: the crumbs of V moved
// down from bits 2 (V % 4), and for Q3Kx16 bit V of the plane moved to bit 2.
// 16-bit shifts are fine: what crosses a byte boundary lands outside the mask.
template <int V, bool kQ3>
inline __m512i UnpackK16(__m512i cr, __m512i hb) {
  __m512i q = cr;
  if constexpr (V % 4 != 0) q = _mm512_srli_epi16(cr, 2 * (V % 4));
  q = _mm512_and_si512(q, _mm512_set1_epi8(3));
  if constexpr (kQ3) {
    __m512i h = hb;
    if constexpr (V < 2) h = _mm512_slli_epi16(hb, 2 - V);
    if constexpr (V > 2) h = _mm512_srli_epi16(hb, V - 2);
    q = _mm512_ternarylogic_epi32(q, h, _mm512_set1_epi8(4), 0xF8);  // q | (h & 4)
  }
  return q;
}

// Two int16 values as the pair of one 32-bit lane (lo, hi).
inline int32_t Pair16(int32_t lo, int32_t hi) {
  return static_cast<int32_t>((static_cast<uint32_t>(lo) & 0xFFFFu) |
                              (static_cast<uint32_t>(hi) << 16));
}

// Zeroes the tiles' per-super-group sums [NT][MR][16] with vector stores that
// the loads after it forward from (a memset cost the AVX2 kernels 5-7%: their
// first loads waited for the stores to retire).
template <int MR, int NT>
inline void ZeroSums(float (&x)[NT][MR][kTileRows]) {
  for (int j = 0; j < NT; ++j) {
    for (int i = 0; i < MR; ++i) _mm512_store_ps(x[j][i], _mm512_setzero_ps());
  }
}

// NT tiles x MR tokens of Q3Kx16 or Q2Kx16 (scales, Q2_K's mins, per 16
// columns). Each token keeps two int32 sums per tile, one per half of the
// group (vectors 0-3: columns 0-15, 4-7: 16-31). A half's sum fits int16
// (16 * 7 * 127, or with Q3_K's offset 16 * 4 * 127), so the two halves are
// packed as int16 pairs (one blend; Q3_K's sums start from their offset - 4
// qsum16), and one vpmaddwd with the rows' (sc_b0, sc_b1) pairs gives qgemm_ref.cpp's
// integer sc_b0 isum_0 + sc_b1 isum_1; Q2_K's mins m_b0 qsum16_0 + m_b1 qsum16_1
// are one more vpmaddwd. The float sums wait in L1: the integer sums of two
// halves take the registers.
template <int MR, int NT, PackedLayout kLayout, Stage S>
void TilesK16(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
              int64_t ldy, uint8_t* stage) {
  const Staged<S, NT> staged{stage};
  constexpr bool kQ3 = kLayout == PackedLayout::kQ3Kx16;
  constexpr size_t kHeader = KHeaderBytes(kLayout), kGroup = KGroupBytes(kLayout);
  constexpr size_t kScales = K16ScaleOffset(kLayout);
  alignas(64) float acc[NT][MR][kTileRows] = {};
  alignas(64) float sd[NT][MR][kTileRows], sm[NT][MR][kTileRows];
  const uint8_t* sg[NT];
  for (int j = 0; j < NT; ++j) sg[j] = w.tile(tile + j);
  const int8_t* aq[MR];
  for (int i = 0; i < MR; ++i) aq[i] = a.q_row(t0 + i);
  int64_t g = 0;
  size_t gq = 0;  // the group's offset in its super-group
  // Vector V of every tile into the sums of its half, given the tiles' crumb
  // vectors and high-bit planes. A template, so that the shifts are constants.
  const auto vector = [&]<int V>(const __m512i(&cr)[NT], const __m512i(&hb)[NT],
                                 __m512i(&isum)[NT][MR]) {
    __m512i q[NT];
    for (int j = 0; j < NT; ++j) {
      q[j] = staged.One(g, V, j, [&] { return UnpackK16<V, kQ3>(cr[j], hb[j]); });
    }
    for (int i = 0; i < MR; ++i) {
      const __m512i b = Bcast4(aq[i] + g * 32 + 4 * V);
      for (int j = 0; j < NT; ++j) isum[j][i] = _mm512_dpbusd_epi32(isum[j][i], q[j], b);
    }
  };
  const int64_t n_supers = w.n_groups / kSuperGroups;
  for (int64_t s = 0; s < n_supers; ++s) {
    if constexpr (S == Stage::kNoPrefetch) {
      for (int i = 0; i < MR; ++i) PrefetchActs<ActSums::kQsum16>(a, t0 + i, s + 1);
    }
    TouchHeader<kLayout, MR, NT, S>(sg[0], kHeader);
    ZeroSums<MR, NT>(sd);
    if constexpr (!kQ3) ZeroSums<MR, NT>(sm);
    for (int jg = 0; jg < kSuperGroups; ++jg) {
      g = s * kSuperGroups + jg;
      gq = kHeader + jg * kGroup;
      // Columns 0-15 and 16-31; Q3_K's start from their offset -4 qsum16.
      __m512i isum0[NT][MR], isum1[NT][MR];
      for (int i = 0; i < MR; ++i) {
        const int32_t* qsum16 = a.qsum16_row(t0 + i) + 2 * g;
        const __m512i off0 = kQ3 ? _mm512_set1_epi32(-4 * qsum16[0]) : _mm512_setzero_si512();
        const __m512i off1 = kQ3 ? _mm512_set1_epi32(-4 * qsum16[1]) : _mm512_setzero_si512();
        for (int j = 0; j < NT; ++j) {
          isum0[j][i] = off0;
          isum1[j][i] = off1;
        }
      }
      __m512i cr[NT], hb[NT];
      for (int j = 0; j < NT; ++j) {
        hb[j] = kQ3 ? _mm512_loadu_si512(sg[j] + gq + kQ3HighOffset) : _mm512_setzero_si512();
      }
      if constexpr (kQ3) PrefetchAhead<kLayout, MR, NT, S>(sg[0] + gq + kQ3HighOffset);
      PrefetchAhead<kLayout, MR, NT, S>(sg[0] + gq);
      for (int j = 0; j < NT; ++j) cr[j] = _mm512_loadu_si512(sg[j] + gq);
      vector.template operator()<0>(cr, hb, isum0);
      vector.template operator()<1>(cr, hb, isum0);
      vector.template operator()<2>(cr, hb, isum0);
      vector.template operator()<3>(cr, hb, isum0);
      PrefetchAhead<kLayout, MR, NT, S>(sg[0] + gq + 64);
      for (int j = 0; j < NT; ++j) cr[j] = _mm512_loadu_si512(sg[j] + gq + 64);
      vector.template operator()<4>(cr, hb, isum1);
      vector.template operator()<5>(cr, hb, isum1);
      vector.template operator()<6>(cr, hb, isum1);
      vector.template operator()<7>(cr, hb, isum1);
      for (int j = 0; j < NT; ++j) {
        // The rows' (sc_b0, sc_b1) and Q2_K's (m_b0, m_b1) as int16 pairs.
        const __m128i s0 =
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(sg[j] + kScales + 32 * jg));
        const __m128i s1 =
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(sg[j] + kScales + 32 * jg + 16));
        __m512i scp, mp = _mm512_setzero_si512();
        if constexpr (kQ3) {
          scp = _mm512_cvtepi8_epi16(
              _mm256_set_m128i(_mm_unpackhi_epi8(s0, s1), _mm_unpacklo_epi8(s0, s1)));
        } else {
          const __m128i low4 = _mm_set1_epi8(0x0F);
          const __m128i c0 = _mm_and_si128(s0, low4), c1 = _mm_and_si128(s1, low4);
          const __m128i m0 = _mm_and_si128(_mm_srli_epi16(s0, 4), low4);
          const __m128i m1 = _mm_and_si128(_mm_srli_epi16(s1, 4), low4);
          scp = _mm512_cvtepu8_epi16(
              _mm256_set_m128i(_mm_unpackhi_epi8(c0, c1), _mm_unpacklo_epi8(c0, c1)));
          mp = _mm512_cvtepu8_epi16(
              _mm256_set_m128i(_mm_unpackhi_epi8(m0, m1), _mm_unpacklo_epi8(m0, m1)));
        }
        for (int i = 0; i < MR; ++i) {
          // (isum_0, isum_1) as int16 pairs: isum_1's low half to the top.
          const __m512i pair =
              _mm512_mask_blend_epi16(0xAAAAAAAAu, isum0[j][i], _mm512_slli_epi32(isum1[j][i], 16));
          const __m512 da = _mm512_set1_ps(a.d_row(t0 + i)[g]);
          const __m512i isum = _mm512_madd_epi16(pair, scp);
          _mm512_store_ps(sd[j][i],
                          _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), da, _mm512_load_ps(sd[j][i])));
          if constexpr (!kQ3) {
            const int32_t* qsum16 = a.qsum16_row(t0 + i) + 2 * g;
            const __m512i msum =
                _mm512_madd_epi16(mp, _mm512_set1_epi32(Pair16(qsum16[0], qsum16[1])));
            _mm512_store_ps(
                sm[j][i], _mm512_fmadd_ps(_mm512_cvtepi32_ps(msum), da, _mm512_load_ps(sm[j][i])));
          }
        }
      }
    }
    for (int j = 0; j < NT; ++j) {
      const __m512 d = LoadFp16x16(sg[j]);
      const __m512 dmin = kQ3 ? _mm512_setzero_ps() : LoadFp16x16(sg[j] + kKDminOffset);
      for (int i = 0; i < MR; ++i) {
        __m512 r = _mm512_fmadd_ps(d, _mm512_load_ps(sd[j][i]), _mm512_load_ps(acc[j][i]));
        if constexpr (!kQ3) r = _mm512_fnmadd_ps(dmin, _mm512_load_ps(sm[j][i]), r);
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

// NT tiles x MR tokens of Q6Kx16 (Q6_K: int8 scales per 16 columns, d per
// 256). The quants unpack with UnpackQ6. A half's sum does not fit
// int16 (16 * 63 * 127, or 16 * 32 * 127 with the offset taken off), so
// Q3Kx16's packing into int16 pairs is out: each token keeps an int32 sum per
// half and tile, started from the offset -32 qsum16, and the halves meet
// their scales in float (exactly: below): qgemm_ref.cpp's
// integer sc_b0 (isum_0 - 32 qsum16_0) + sc_b1 (isum_1 - 32 qsum16_1). Then
// sd = fma(float(isum), d_a, sd) per group and acc = fma(d, sd, acc) per
// super-group. The float sums wait in L1, as in TilesK16.
template <int MR, int NT, Stage S>
void TilesQ6K(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
              int64_t ldy, uint8_t* stage) {
  const Staged<S, NT> staged{stage};
  constexpr PackedLayout kLayout = PackedLayout::kQ6Kx16;
  constexpr size_t kHeader = KHeaderBytes(kLayout), kGroup = KGroupBytes(kLayout);
  constexpr size_t kScales = K16ScaleOffset(kLayout);
  constexpr int kOff = PackedOffset(kLayout);
  alignas(64) float acc[NT][MR][kTileRows] = {};
  alignas(64) float sd[NT][MR][kTileRows];
  const uint8_t* sg[NT];
  for (int j = 0; j < NT; ++j) sg[j] = w.tile(tile + j);
  const int8_t* aq[MR];
  for (int i = 0; i < MR; ++i) aq[i] = a.q_row(t0 + i);
  int64_t g = 0;
  size_t gq = 0;  // the group's offset in its super-group
  // Sub-chunk C (columns 8C..8C+7) of every tile into the sums of its half
  // (C / 2), given that half's crumb vectors. A template, so that the shifts
  // are constants (with a loop over the halves GCC kept the sums in memory:
  // 216 against 255 GMAC/s, measured on Q6x16, this kernel's predecessor).
  const auto sub_chunk = [&]<int C>(const __m512i(&cr)[NT], __m512i(&isum)[NT][MR]) {
    __m512i lo[NT], hi[NT];
    PrefetchAhead<kLayout, MR, NT, S>(sg[0] + gq + 64 * C);
    for (int j = 0; j < NT; ++j) {
      staged.Two(g, 2 * C, j, &lo[j], &hi[j], [&](__m512i* l, __m512i* h) {
        UnpackQ6<C>(_mm512_loadu_si512(sg[j] + gq + 64 * C), cr[j], l, h);
      });
    }
    for (int i = 0; i < MR; ++i) {
      const __m512i blo = Bcast4(aq[i] + g * 32 + 8 * C);
      const __m512i bhi = Bcast4(aq[i] + g * 32 + 8 * C + 4);
      for (int j = 0; j < NT; ++j) {
        isum[j][i] = _mm512_dpbusd_epi32(isum[j][i], lo[j], blo);
        isum[j][i] = _mm512_dpbusd_epi32(isum[j][i], hi[j], bhi);
      }
    }
  };
  const int64_t n_supers = w.n_groups / kSuperGroups;
  for (int64_t s = 0; s < n_supers; ++s) {
    if constexpr (S == Stage::kNoPrefetch) {
      for (int i = 0; i < MR; ++i) PrefetchActs<ActSums::kQsum16>(a, t0 + i, s + 1);
    }
    TouchHeader<kLayout, MR, NT, S>(sg[0], kHeader);
    ZeroSums<MR, NT>(sd);
    for (int jg = 0; jg < kSuperGroups; ++jg) {
      g = s * kSuperGroups + jg;
      gq = kHeader + jg * kGroup;
      // Columns 0-15 and 16-31, each starting from its offset -32 qsum16 (no
      // add per tile after the products).
      __m512i isum0[NT][MR], isum1[NT][MR];
      for (int i = 0; i < MR; ++i) {
        const int32_t* qsum16 = a.qsum16_row(t0 + i) + 2 * g;
        const __m512i off0 = _mm512_set1_epi32(kOff * qsum16[0]);
        const __m512i off1 = _mm512_set1_epi32(kOff * qsum16[1]);
        for (int j = 0; j < NT; ++j) {
          isum0[j][i] = off0;
          isum1[j][i] = off1;
        }
      }
      __m512i cr[NT];
      PrefetchAhead<kLayout, MR, NT, S>(sg[0] + gq + kQ6CrumbOffset);
      for (int j = 0; j < NT; ++j) cr[j] = _mm512_loadu_si512(sg[j] + gq + kQ6CrumbOffset);
      sub_chunk.template operator()<0>(cr, isum0);
      sub_chunk.template operator()<1>(cr, isum0);
      PrefetchAhead<kLayout, MR, NT, S>(sg[0] + gq + kQ6CrumbOffset + 64);
      for (int j = 0; j < NT; ++j) cr[j] = _mm512_loadu_si512(sg[j] + gq + kQ6CrumbOffset + 64);
      sub_chunk.template operator()<2>(cr, isum1);
      sub_chunk.template operator()<3>(cr, isum1);
      for (int j = 0; j < NT; ++j) {
        // The rows' scales of sub-blocks 2 jg (columns 0-15) and 2 jg + 1.
        const __m512 sc0 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(sg[j] + kScales + 32 * jg))));
        const __m512 sc1 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(sg[j] + kScales + 32 * jg + 16))));
        for (int i = 0; i < MR; ++i) {
          // The integer sc_b0 isum_0 + sc_b1 isum_1 in float, exactly: |isum_h| <=
          // 16 * 32 * 128 = 2^16 and |sc| <= 2^7, so each product and the sum are
          // integers of at most 2^24 (vpmulld cost 10% of the prefill rate).
          const __m512 isum = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum1[j][i]), sc1,
                                              _mm512_mul_ps(_mm512_cvtepi32_ps(isum0[j][i]), sc0));
          const __m512 da = _mm512_set1_ps(a.d_row(t0 + i)[g]);
          _mm512_store_ps(sd[j][i], _mm512_fmadd_ps(isum, da, _mm512_load_ps(sd[j][i])));
        }
      }
    }
    for (int j = 0; j < NT; ++j) {
      const __m512 d = LoadFp16x16(sg[j]);
      for (int i = 0; i < MR; ++i) {
        _mm512_store_ps(acc[j][i],
                        _mm512_fmadd_ps(d, _mm512_load_ps(sd[j][i]), _mm512_load_ps(acc[j][i])));
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
  template <int MR, int NT, Stage S>
  struct K {
    static constexpr bool kStaged = StagesUnpack(kLayout);
    static constexpr int kUnprefetchedM = UnprefetchedTokens(kLayout);
    static void Run(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0,
                    float* y, int64_t ldy, uint8_t* stage) {
      if constexpr (kLayout == PackedLayout::kQ6Kx16) {
        TilesQ6K<MR, NT, S>(w, tile, a, t0, y, ldy, stage);
      } else if constexpr (kLayout == PackedLayout::kQ3Kx16 || kLayout == PackedLayout::kQ2Kx16) {
        TilesK16<MR, NT, kLayout, S>(w, tile, a, t0, y, ldy, stage);
      } else {
        TilesK<MR, NT, kLayout, S>(w, tile, a, t0, y, ldy, stage);
      }
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

void QGemmQ3Kx16_avx512vnni(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                            const QuantizedActs& a, float* y, int64_t ldy) {
  Drive<KKernel<PackedLayout::kQ3Kx16>::K>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ2Kx16_avx512vnni(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                            const QuantizedActs& a, float* y, int64_t ldy) {
  Drive<KKernel<PackedLayout::kQ2Kx16>::K>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ6Kx16_avx512vnni(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                            const QuantizedActs& a, float* y, int64_t ldy) {
  Drive<KKernel<PackedLayout::kQ6Kx16>::K>(w, tile_begin, tile_end, a, y, ldy);
}

}  // namespace ember
#endif  // __x86_64__
