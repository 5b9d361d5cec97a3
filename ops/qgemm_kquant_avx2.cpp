// Quantized GEMM over the K layouts (Q4Kx16, Q5Kx16; Q3Kx16, Q2Kx16 and Q6Kx16
// below: quant/packed.h) on AVX2.
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

// Zeroes a tile's per-super-group sums [MR][16] with vector stores that the
// loads after it forward from: after a memset (rep stos) the first loads
// waited for the stores to retire, 5-7% of the K16 GEMMs and GEMVs in cache.
template <int MR>
inline void ZeroSums(float (&x)[MR][kTileRows]) {
  for (int i = 0; i < MR; ++i) {
    _mm256_store_ps(x[i], _mm256_setzero_ps());
    _mm256_store_ps(x[i] + 8, _mm256_setzero_ps());
  }
}

// Sub-chunk c (columns 8c..8c+7) of a Q4Kx16 / Q5Kx16 group gp, unpacked as
// Q4x16's / Q5x16's: lo (columns 8c..8c+3) and hi (8c+4..8c+7), rows 0-7 (0)
// and 8-15 (1). Q5: hb0 / hb1 the group's high-bit plane (LoadPlane).
template <bool kQ5>
inline void UnpackK4(const uint8_t* gp, int c, __m256i hb0, __m256i hb1, __m256i* lo0, __m256i* hi0,
                     __m256i* lo1, __m256i* hi1) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i v0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * c));
  const __m256i v1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * c + 32));
  *lo0 = _mm256_and_si256(v0, low4);
  *hi0 = _mm256_and_si256(_mm256_srli_epi16(v0, 4), low4);
  *lo1 = _mm256_and_si256(v1, low4);
  *hi1 = _mm256_and_si256(_mm256_srli_epi16(v1, 4), low4);
  if constexpr (kQ5) OrHighBitsAt(c, hb0, hb1, lo0, lo1, hi0, hi1);
}

// A tile's quants as TileK<MR, kQ5, true> reads them: per group and sub-chunk
// c, lo0 hi0 lo1 hi1 (32 bytes each).
template <bool kQ5>
void UnpackKTile(const PackedMatrix& w, int64_t tile, uint8_t* out) {
  constexpr PackedLayout kLayout = kQ5 ? PackedLayout::kQ5Kx16 : PackedLayout::kQ4Kx16;
  ForEachKGroup<kLayout>(w, tile, out, [](const uint8_t* gp, uint8_t* out) {
    const __m256i hb0 = kQ5 ? LoadPlane(gp + 256, 0) : _mm256_setzero_si256();
    const __m256i hb1 = kQ5 ? LoadPlane(gp + 256, 1) : _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      __m256i u[4];
      UnpackK4<kQ5>(gp, c, hb0, hb1, &u[0], &u[1], &u[2], &u[3]);
      for (int v = 0; v < 4; ++v) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(out + 128 * c + 32 * v), u[v]);
      }
    }
  });
}

// One tile of a K layout for MR tokens. Int16 sums as in TileQ4: a sub-chunk
// adds at most 2 * 2 * 15 * 127 = 7620 per lane for int4 (4 sub-chunks fit)
// and 15748 for int5 (2 fit), so Q5 widens every two sub-chunks; each
// widening multiplies by the scale, and sc * (s1 + s2) = sc * s1 + sc * s2.
// |sc * isum| <= 63 * 32 * 31 * 127 < 2^23 fits int32 and converts exactly.
// The column loop is unrolled (the widening test constant), as in TileQ4.
// kPre: pre holds the tile's quants unpacked by UnpackKTile (DriveUnpacked).
template <int MR, bool kQ5, bool kPre = false>
void TileK(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
           int64_t ldy, const uint8_t* pre = nullptr) {
  constexpr PackedLayout kLayout = kQ5 ? PackedLayout::kQ5Kx16 : PackedLayout::kQ4Kx16;
  constexpr size_t kHeader = KHeaderBytes(kLayout), kGroup = KGroupBytes(kLayout);
  constexpr int kWiden = kQ5 ? 2 : 4;  // sub-chunks per int16 sum
  alignas(32) float acc[MR][kTileRows];
  ZeroSums<MR>(acc);
  const int8_t* aq[MR];
  for (int i = 0; i < MR; ++i) aq[i] = a.q_row(t0 + i);
  const float *da_row[MR], *dqsum_row[MR];
  for (int i = 0; i < MR; ++i) da_row[i] = a.d_row(t0 + i), dqsum_row[i] = a.dqsum_row(t0 + i);
  const uint8_t* sg = w.tile(tile);
  const int64_t n_supers = w.n_groups / kSuperGroups;
  for (int64_t s = 0; s < n_supers; ++s, sg += w.super_bytes) {
    for (size_t line = 0; line < kHeader; line += 64) PrefetchAhead<MR, 2>(sg + line);
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
      __m256i hb0 = _mm256_setzero_si256(), hb1 = _mm256_setzero_si256();
      if constexpr (kQ5 && !kPre) {
        PrefetchAhead<MR, 2>(gp + 256);
        hb0 = LoadPlane(gp + 256, 0), hb1 = LoadPlane(gp + 256, 1);
      }
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) {  // columns 8c .. 8c + 7
        __m256i lo0, hi0, lo1, hi1;
        if constexpr (kPre) {
          const __m256i* u = reinterpret_cast<const __m256i*>(pre + g * kUnpackedGroup + 128 * c);
          lo0 = _mm256_load_si256(u), hi0 = _mm256_load_si256(u + 1);
          lo1 = _mm256_load_si256(u + 2), hi1 = _mm256_load_si256(u + 3);
        } else {
          PrefetchAhead<MR, 2>(gp + 64 * c);
          UnpackK4<kQ5>(gp, c, hb0, hb1, &lo0, &hi0, &lo1, &hi1);
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

// Unpacked vector V (columns 4V..4V+3) of a Q3Kx16 / Q2Kx16 group, 8 rows,
// from its crumbs (32 bytes of crumb vector V / 4) and high-bit plane, as
// qgemm_kquant_avx512vnni.cpp's UnpackK16.
template <int V, bool kQ3>
inline __m256i UnpackK16(__m256i cr, __m256i hb) {
  __m256i q = cr;
  if constexpr (V % 4 != 0) q = _mm256_srli_epi16(cr, 2 * (V % 4));
  q = _mm256_and_si256(q, _mm256_set1_epi8(3));
  if constexpr (kQ3) {
    __m256i h = hb;
    if constexpr (V < 2) h = _mm256_slli_epi16(hb, 2 - V);
    if constexpr (V > 2) h = _mm256_srli_epi16(hb, V - 2);
    q = _mm256_or_si256(q, _mm256_and_si256(h, _mm256_set1_epi8(4)));
  }
  return q;
}

inline int32_t Pair16(int32_t lo, int32_t hi) {
  return static_cast<int32_t>((static_cast<uint32_t>(lo) & 0xFFFFu) |
                              (static_cast<uint32_t>(hi) << 16));
}

// One tile of Q3Kx16 or Q2Kx16 for MR tokens, both halves of rows per
// broadcast as in TileK. A half of the group's columns (4 vectors, 16
// columns: one scale) sums its maddubs pairs in int16 (4 * 2 * 7 * 127 per
// lane at most), and the widening madd multiplies by the row's scale of that
// half, so the int32 sums come out as sc_b0 isum_0 + sc_b1 isum_1. Q3_K's
// offset comes off as 4 (sc_b0 qsum16_0 + sc_b1 qsum16_1) and Q2_K's mins are
// m_b0 qsum16_0 + m_b1 qsum16_1: one madd each of the rows' pairs with the
// token's pair of qsum16 (as Q6Kx16's offsets below). The same
// integers as qgemm_ref.cpp.
// kPre: pre holds the tile's quants unpacked by UnpackK16Tile (DriveUnpacked).
template <int MR, bool kQ3, bool kPre = false>
void TileK16(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
             int64_t ldy, const uint8_t* pre = nullptr) {
  constexpr PackedLayout kLayout = kQ3 ? PackedLayout::kQ3Kx16 : PackedLayout::kQ2Kx16;
  constexpr size_t kHeader = KHeaderBytes(kLayout), kGroup = KGroupBytes(kLayout);
  constexpr size_t kScales = K16ScaleOffset(kLayout);
  alignas(32) float acc[MR][kTileRows];
  ZeroSums<MR>(acc);
  alignas(32) float sd[MR][kTileRows], sm[MR][kTileRows];
  const int8_t* aq[MR];
  for (int i = 0; i < MR; ++i) aq[i] = a.q_row(t0 + i);
  const uint8_t* sg = w.tile(tile);
  int64_t g = 0;
  __m256i sum16[MR][2];  // the half's int16 sums: rows 0-7, 8-15
  // Vector V into sum16, given its crumbs and the high-bit plane (rows 0-7,
  // 8-15). A template, so that the shifts are constants.
  const auto vector = [&]<int V>(__m256i cr0, __m256i cr1, __m256i hb0, __m256i hb1) {
    __m256i q0, q1;
    if constexpr (kPre) {
      const __m256i* u = reinterpret_cast<const __m256i*>(pre + g * kUnpackedGroup + 64 * V);
      q0 = _mm256_load_si256(u), q1 = _mm256_load_si256(u + 1);
    } else {
      q0 = UnpackK16<V, kQ3>(cr0, hb0), q1 = UnpackK16<V, kQ3>(cr1, hb1);
    }
    for (int i = 0; i < MR; ++i) {
      const __m256i b = Bcast4(aq[i] + g * 32 + 4 * V);
      sum16[i][0] = _mm256_add_epi16(sum16[i][0], _mm256_maddubs_epi16(q0, b));
      sum16[i][1] = _mm256_add_epi16(sum16[i][1], _mm256_maddubs_epi16(q1, b));
      OpaqueReg(sum16[i][0]);
      OpaqueReg(sum16[i][1]);
    }
  };
  const int64_t n_supers = w.n_groups / kSuperGroups;
  for (int64_t s = 0; s < n_supers; ++s, sg += w.super_bytes) {
    for (size_t line = 0; line < kHeader; line += 64) PrefetchAhead<MR, 2>(sg + line);
    ZeroSums<MR>(sd);
    if constexpr (!kQ3) ZeroSums<MR>(sm);
    for (int jg = 0; jg < kSuperGroups; ++jg) {
      g = s * kSuperGroups + jg;
      const uint8_t* gp = sg + kHeader + jg * kGroup;
      // The scales of the group's halves (sub-blocks 2 jg, 2 jg + 1), 16 rows.
      __m128i s0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sg + kScales + 32 * jg));
      __m128i s1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sg + kScales + 32 * jg + 16));
      __m128i m0 = _mm_setzero_si128(), m1 = _mm_setzero_si128();
      if constexpr (!kQ3) {
        const __m128i low4 = _mm_set1_epi8(0x0F);
        m0 = _mm_and_si128(_mm_srli_epi16(s0, 4), low4);
        m1 = _mm_and_si128(_mm_srli_epi16(s1, 4), low4);
        s0 = _mm_and_si128(s0, low4);
        s1 = _mm_and_si128(s1, low4);
      }
      // Bytes to int16 (Q3_K's scales are signed, Q2_K's unsigned).
      const auto widen = [](__m128i v) {
        return kQ3 ? _mm256_cvtepi8_epi16(v) : _mm256_cvtepu8_epi16(v);
      };
      __m256i isum[MR][2];
      for (int i = 0; i < MR; ++i) isum[i][0] = isum[i][1] = _mm256_setzero_si256();
      __m256i hb0 = _mm256_setzero_si256(), hb1 = _mm256_setzero_si256();
      if constexpr (kQ3 && !kPre) {
        PrefetchAhead<MR, 2>(gp + kQ3HighOffset);
        hb0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + kQ3HighOffset));
        hb1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + kQ3HighOffset + 32));
      }
      for (int c = 0; c < 2; ++c) {  // half c: columns 16c .. 16c + 15, crumb vector c
        __m256i cr0 = _mm256_setzero_si256(), cr1 = _mm256_setzero_si256();
        if constexpr (!kPre) {
          PrefetchAhead<MR, 2>(gp + 64 * c);
          cr0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * c));
          cr1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * c + 32));
        }
        for (int i = 0; i < MR; ++i) sum16[i][0] = sum16[i][1] = _mm256_setzero_si256();
        if (c == 0) {
          vector.template operator()<0>(cr0, cr1, hb0, hb1);
          vector.template operator()<1>(cr0, cr1, hb0, hb1);
          vector.template operator()<2>(cr0, cr1, hb0, hb1);
          vector.template operator()<3>(cr0, cr1, hb0, hb1);
        } else {
          vector.template operator()<4>(cr0, cr1, hb0, hb1);
          vector.template operator()<5>(cr0, cr1, hb0, hb1);
          vector.template operator()<6>(cr0, cr1, hb0, hb1);
          vector.template operator()<7>(cr0, cr1, hb0, hb1);
        }
        // Each row's scale of this half as an int16 pair (sc, sc): rows 0-7, 8-15.
        const __m128i sc = c == 0 ? s0 : s1;
        const __m256i scw0 = widen(_mm_unpacklo_epi8(sc, sc));
        const __m256i scw1 = widen(_mm_unpackhi_epi8(sc, sc));
        for (int i = 0; i < MR; ++i) {
          isum[i][0] = _mm256_add_epi32(isum[i][0], _mm256_madd_epi16(sum16[i][0], scw0));
          isum[i][1] = _mm256_add_epi32(isum[i][1], _mm256_madd_epi16(sum16[i][1], scw1));
        }
      }
      // Each row's (sc_b0, sc_b1) and (m_b0, m_b1) as int16 pairs: rows 0-7, 8-15.
      const __m256i scp[2] = {widen(_mm_unpacklo_epi8(s0, s1)), widen(_mm_unpackhi_epi8(s0, s1))};
      const __m256i mp[2] = {widen(_mm_unpacklo_epi8(m0, m1)), widen(_mm_unpackhi_epi8(m0, m1))};
      for (int i = 0; i < MR; ++i) {
        const int32_t* qsum16 = a.qsum16_row(t0 + i) + 2 * g;
        const __m256i qpair = _mm256_set1_epi32(Pair16(qsum16[0], qsum16[1]));
        const __m256 da = _mm256_set1_ps(a.d_row(t0 + i)[g]);
        for (int h = 0; h < 2; ++h) {
          __m256i sum = isum[i][h];
          if constexpr (kQ3) {  // - 4 (sc_b0 qsum16_0 + sc_b1 qsum16_1)
            sum = _mm256_sub_epi32(sum, _mm256_slli_epi32(_mm256_madd_epi16(scp[h], qpair), 2));
          }
          _mm256_store_ps(sd[i] + 8 * h, _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), da,
                                                         _mm256_load_ps(sd[i] + 8 * h)));
          if constexpr (!kQ3) {
            const __m256i msum = _mm256_madd_epi16(mp[h], qpair);
            _mm256_store_ps(sm[i] + 8 * h, _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum), da,
                                                           _mm256_load_ps(sm[i] + 8 * h)));
          }
        }
      }
    }
    for (int h = 0; h < 2; ++h) {
      const __m256 d = LoadHalf(sg + 16 * h);
      const __m256 dmin = kQ3 ? _mm256_setzero_ps() : LoadHalf(sg + kKDminOffset + 16 * h);
      for (int i = 0; i < MR; ++i) {
        __m256 r =
            _mm256_fmadd_ps(d, _mm256_load_ps(sd[i] + 8 * h), _mm256_load_ps(acc[i] + 8 * h));
        if constexpr (!kQ3) r = _mm256_fnmadd_ps(dmin, _mm256_load_ps(sm[i] + 8 * h), r);
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

// A tile's quants as TileK16<MR, kQ3, true> reads them: per group and vector V,
// rows 0-7 then 8-15 (32 bytes each), as UnpackK16 gives them.
template <bool kQ3>
void UnpackK16Tile(const PackedMatrix& w, int64_t tile, uint8_t* out) {
  constexpr PackedLayout kLayout = kQ3 ? PackedLayout::kQ3Kx16 : PackedLayout::kQ2Kx16;
  ForEachKGroup<kLayout>(w, tile, out, [](const uint8_t* gp, uint8_t* out) {
    __m256i hb0 = _mm256_setzero_si256(), hb1 = _mm256_setzero_si256();
    if constexpr (kQ3) {
      hb0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + kQ3HighOffset));
      hb1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + kQ3HighOffset + 32));
    }
    const auto vector = [&]<int V>() {
      const __m256i cr0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * (V / 4)));
      const __m256i cr1 =
          _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * (V / 4) + 32));
      _mm256_store_si256(reinterpret_cast<__m256i*>(out + 64 * V), UnpackK16<V, kQ3>(cr0, hb0));
      _mm256_store_si256(reinterpret_cast<__m256i*>(out + 64 * V + 32),
                         UnpackK16<V, kQ3>(cr1, hb1));
    };
    vector.template operator()<0>();
    vector.template operator()<1>();
    vector.template operator()<2>();
    vector.template operator()<3>();
    vector.template operator()<4>();
    vector.template operator()<5>();
    vector.template operator()<6>();
    vector.template operator()<7>();
  });
}

// One tile of Q6Kx16 for MR tokens, both halves of rows per broadcast as in
// TileK. The quants unpack with UnpackQ6: quants 0..63 with activations
// -127..127, a sub-chunk's two maddubs add up to 2 * 2 * 63 * 127 = 32004 per
// int16 lane, which fits, but two sub-chunks would not, so every sub-chunk is
// widened at once, by a madd with the row's scale of its half (repeated in
// both int16 halves of its 32-bit lane): the int32 sums come out as sc_b0
// sum_0 + sc_b1 sum_1. The offsets come off as 32 (sc_b0 qsum16_0 + sc_b1 qsum16_1): one
// madd of the rows' (sc_b0, sc_b1) pairs with the token's (qsum16_0,
// qsum16_1), shifted left by 5. The same integers as qgemm_ref.cpp; then sd =
// fma(float(isum), d_a, sd) per group and acc = fma(d, sd, acc) per
// super-group.
//
// kPre: pre holds the tile's quants already unpacked by UnpackQ6KTile (prefill:
// a block of tiles is unpacked once and then read by every group of tokens;
// the same bytes, so the same sums); otherwise pre is unused.
template <int MR, bool kPre = false>
void TileQ6K(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
             int64_t ldy, const uint8_t* pre = nullptr) {
  constexpr PackedLayout kLayout = PackedLayout::kQ6Kx16;
  constexpr size_t kHeader = KHeaderBytes(kLayout), kGroup = KGroupBytes(kLayout);
  constexpr size_t kScales = K16ScaleOffset(kLayout);
  static_assert(PackedOffset(kLayout) == -32, "the shift below is * 32");
  alignas(32) float acc[MR][kTileRows];
  ZeroSums<MR>(acc);
  alignas(32) float sd[MR][kTileRows];
  const int8_t* aq[MR];
  for (int i = 0; i < MR; ++i) aq[i] = a.q_row(t0 + i);
  const uint8_t* sg = w.tile(tile);
  const uint8_t* gp = sg;  // the group's quants
  int64_t g = 0;
  __m256i isum[MR][2];  // rows 0-7, 8-15
  // Sub-chunk S (columns 8S..8S+7), given its half's crumbs (cr0: rows 0-7,
  // cr1: 8-15) and scale pairs. A template, so that the shifts are fixed at
  // compile time: with loops over the halves and sub-chunks GCC did not unroll
  // them (measured on Q6x16, this kernel's predecessor).
  const auto sub_chunk = [&]<int S>(__m256i cr0, __m256i cr1, __m256i scw0, __m256i scw1) {
    __m256i lo0, hi0, lo1, hi1;
    if constexpr (kPre) {
      const __m256i* u = reinterpret_cast<const __m256i*>(pre + g * kUnpackedGroup + 128 * S);
      lo0 = _mm256_load_si256(u), hi0 = _mm256_load_si256(u + 1);
      lo1 = _mm256_load_si256(u + 2), hi1 = _mm256_load_si256(u + 3);
    } else {
      PrefetchAhead<MR, 2>(gp + 64 * S);
      UnpackQ6<S>(_mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * S)), cr0, &lo0,
                  &hi0);
      UnpackQ6<S>(_mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * S + 32)), cr1, &lo1,
                  &hi1);
    }
    for (int i = 0; i < MR; ++i) {
      const int8_t* ac = aq[i] + g * 32 + 8 * S;
      const __m256i blo = Bcast4(ac), bhi = Bcast4(ac + 4);
      const __m256i p0 =
          _mm256_add_epi16(_mm256_maddubs_epi16(lo0, blo), _mm256_maddubs_epi16(hi0, bhi));
      const __m256i p1 =
          _mm256_add_epi16(_mm256_maddubs_epi16(lo1, blo), _mm256_maddubs_epi16(hi1, bhi));
      isum[i][0] = _mm256_add_epi32(isum[i][0], _mm256_madd_epi16(p0, scw0));
      isum[i][1] = _mm256_add_epi32(isum[i][1], _mm256_madd_epi16(p1, scw1));
      OpaqueReg(isum[i][0]);
      OpaqueReg(isum[i][1]);
    }
  };
  const int64_t n_supers = w.n_groups / kSuperGroups;
  for (int64_t s = 0; s < n_supers; ++s, sg += w.super_bytes) {
    for (size_t line = 0; line < kHeader; line += 64) PrefetchAhead<MR, 2>(sg + line);
    ZeroSums<MR>(sd);
    for (int jg = 0; jg < kSuperGroups; ++jg) {
      g = s * kSuperGroups + jg;
      gp = sg + kHeader + jg * kGroup;
      for (int i = 0; i < MR; ++i) isum[i][0] = isum[i][1] = _mm256_setzero_si256();
      // The rows' scales of the group's halves (sub-blocks 2 jg, 2 jg + 1).
      const __m128i s0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sg + kScales + 32 * jg));
      const __m128i s1 =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(sg + kScales + 32 * jg + 16));
      for (int c = 0; c < 2; ++c) {  // half c: columns 16c .. 16c + 15, crumb vector c
        __m256i cr0 = _mm256_setzero_si256(), cr1 = _mm256_setzero_si256();
        if constexpr (!kPre) {
          const uint8_t* crp = gp + kQ6CrumbOffset + 64 * c;
          PrefetchAhead<MR, 2>(crp);
          cr0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(crp));
          cr1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(crp + 32));
        }
        // Each row's scale of this half as an int16 pair (sc, sc): rows 0-7, 8-15.
        const __m128i sc8 = c == 0 ? s0 : s1;
        const __m256i scw0 = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(sc8, sc8));
        const __m256i scw1 = _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(sc8, sc8));
        if (c == 0) {
          sub_chunk.template operator()<0>(cr0, cr1, scw0, scw1);
          sub_chunk.template operator()<1>(cr0, cr1, scw0, scw1);
        } else {
          sub_chunk.template operator()<2>(cr0, cr1, scw0, scw1);
          sub_chunk.template operator()<3>(cr0, cr1, scw0, scw1);
        }
      }
      // Each row's (sc_b0, sc_b1) as an int16 pair: rows 0-7, 8-15.
      const __m256i scp[2] = {_mm256_cvtepi8_epi16(_mm_unpacklo_epi8(s0, s1)),
                              _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(s0, s1))};
      for (int i = 0; i < MR; ++i) {
        const int32_t* qsum16 = a.qsum16_row(t0 + i) + 2 * g;
        const __m256i qpair = _mm256_set1_epi32(Pair16(qsum16[0], qsum16[1]));
        const __m256 da = _mm256_set1_ps(a.d_row(t0 + i)[g]);
        for (int h = 0; h < 2; ++h) {
          const __m256i off = _mm256_madd_epi16(scp[h], qpair);
          const __m256i sum = _mm256_sub_epi32(isum[i][h], _mm256_slli_epi32(off, 5));
          _mm256_store_ps(sd[i] + 8 * h, _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), da,
                                                         _mm256_load_ps(sd[i] + 8 * h)));
        }
      }
    }
    for (int h = 0; h < 2; ++h) {
      const __m256 d = LoadHalf(sg + 16 * h);
      for (int i = 0; i < MR; ++i) {
        _mm256_store_ps(acc[i] + 8 * h, _mm256_fmadd_ps(d, _mm256_load_ps(sd[i] + 8 * h),
                                                        _mm256_load_ps(acc[i] + 8 * h)));
      }
    }
  }
  for (int i = 0; i < MR; ++i) {
    for (int h = 0; h < 2; ++h) {
      Store(y + (t0 + i) * ldy, _mm256_load_ps(acc[i] + 8 * h), tile * kTileRows + 8 * h, w.n_rows);
    }
  }
}

// A tile's quants as TileQ6K<MR, true> reads them: per group and sub-chunk S,
// lo0 hi0 lo1 hi1 as UnpackQ6 gives them (32 bytes each).
void UnpackQ6KTile(const PackedMatrix& w, int64_t tile, uint8_t* out) {
  constexpr PackedLayout kLayout = PackedLayout::kQ6Kx16;
  ForEachKGroup<kLayout>(w, tile, out, [](const uint8_t* gp, uint8_t* out) {
    const auto sub_chunk = [&]<int S>() {
      const uint8_t* crp = gp + kQ6CrumbOffset + 64 * (S / 2);
      const __m256i cr0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(crp));
      const __m256i cr1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(crp + 32));
      __m256i u[4];
      UnpackQ6<S>(_mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * S)), cr0, &u[0],
                  &u[1]);
      UnpackQ6<S>(_mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * S + 32)), cr1, &u[2],
                  &u[3]);
      for (int v = 0; v < 4; ++v) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(out + 128 * S + 32 * v), u[v]);
      }
    };
    sub_chunk.template operator()<0>();
    sub_chunk.template operator()<1>();
    sub_chunk.template operator()<2>();
    sub_chunk.template operator()<3>();
  });
}

template <int MR>
struct Q6K {
  static void Run(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
                  int64_t ldy) {
    TileQ6K<MR>(w, tile, a, t0, y, ldy);
  }
  static void RunUnpacked(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0,
                          float* y, int64_t ldy, const uint8_t* pre) {
    TileQ6K<MR, true>(w, tile, a, t0, y, ldy, pre);
  }
  static void Unpack(const PackedMatrix& w, int64_t tile, uint8_t* out) {
    UnpackQ6KTile(w, tile, out);
  }
};

template <bool kQ3>
struct K16 {
  template <int MR>
  struct Tile {
    static void Run(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0,
                    float* y, int64_t ldy) {
      TileK16<MR, kQ3>(w, tile, a, t0, y, ldy);
    }
    static void RunUnpacked(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0,
                            float* y, int64_t ldy, const uint8_t* pre) {
      TileK16<MR, kQ3, true>(w, tile, a, t0, y, ldy, pre);
    }
    static void Unpack(const PackedMatrix& w, int64_t tile, uint8_t* out) {
      UnpackK16Tile<kQ3>(w, tile, out);
    }
  };
};

template <bool kQ5>
struct K {
  template <int MR>
  struct Tile {
    static void Run(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0,
                    float* y, int64_t ldy) {
      TileK<MR, kQ5>(w, tile, a, t0, y, ldy);
    }
    static void RunUnpacked(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0,
                            float* y, int64_t ldy, const uint8_t* pre) {
      TileK<MR, kQ5, true>(w, tile, a, t0, y, ldy, pre);
    }
    static void Unpack(const PackedMatrix& w, int64_t tile, uint8_t* out) {
      UnpackKTile<kQ5>(w, tile, out);
    }
  };
};

}  // namespace

// Prefill unpacks ahead (DriveUnpacked) where unpacking is a large share of
// a 4-token tile: Q5_K's high bits, Q3_K's and Q6_K's bit planes. For 64
// tokens from memory, one thread (bench/gemv_rate.cpp, medians of 3
// alternating runs, GMAC/s): Q5_K 58.4 -> 87.9, Q3_K 49.2 -> 56.4, Q6_K 55.8
// -> 58.9. Q4_K's and Q2_K's unpacking (an and, a shift) is too small a share
// to pay for the scratch pass: 92.8 -> 93.7 and 56.2 -> 53.7, so they don't.
void QGemmQ4Kx16_avx2(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                      const QuantizedActs& a, float* y, int64_t ldy) {
  Drive<K<false>::Tile>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ5Kx16_avx2(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                      const QuantizedActs& a, float* y, int64_t ldy) {
  DriveUnpacked<K<true>::Tile>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ3Kx16_avx2(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                      const QuantizedActs& a, float* y, int64_t ldy) {
  DriveUnpacked<K16<true>::Tile>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ2Kx16_avx2(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                      const QuantizedActs& a, float* y, int64_t ldy) {
  Drive<K16<false>::Tile>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ6Kx16_avx2(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                      const QuantizedActs& a, float* y, int64_t ldy) {
  DriveUnpacked<Q6K>(w, tile_begin, tile_end, a, y, ldy);
}

}  // namespace ember
#endif  // __x86_64__
