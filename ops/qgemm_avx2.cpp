// Quantized GEMM on AVX2. A tile's 16 rows are handled as two halves of 8
// (one ymm of int32 lanes each). Without VNNI, the 4-byte dot products come
// from maddubs (u8 x s8 -> pairs of int16) and madd with ones (-> int32):
// exact, since no int16 pair sum can overflow (int4: 2 * 15 * 127; int8 and
// the IQ4 grid with the sign trick: 2 * 128 * 127; int6: 2 * 63 * 127).
#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "ops/kernels.h"
#include "ops/qgemm_avx2_common.h"
#include "quant/blocks.h"
#include "quant/fp16.h"

namespace ember {
namespace {

// Both halves of a tile per activation broadcast: each 4-byte broadcast feeds
// two maddubs (rows 0-7 and 8-15) instead of one, which halves the broadcasts
// (a load plus a shuffle each). The integer sums of MR tokens x 2 halves take
// 2 * MR registers, so the float accumulators live in a small array in L1;
// each is touched once per group, long after the store it reads.
// Int16 sums: a sub-chunk adds at most 2 maddubs pairs per lane, 2 * 2 * 15 *
// 127 = 7620 for int4 (4 sub-chunks fit int16) and 15748 for Q5's int5 (2
// fit), so Q5 widens to int32 every two sub-chunks. The sub-chunk loop is
// unrolled, so the widening test is constant: as a loop GCC kept it a branch
// per token, and 4 tokens ran a quarter slower (bench/gemv_rate.cpp, in cache).
template <int MR, bool kHasMin, bool kQ5, int NT>
void TileQ4(const PackedMatrix& w, const int64_t (&tiles)[NT], const QuantizedActs& a, int64_t t0,
            float* y, int64_t ldy) {
  constexpr PackedLayout kLayout = kQ5 ? PackedLayout::kQ5x16 : PackedLayout::kQ4x16;
  constexpr size_t kScales = PackedQuantBytes(kLayout);
  constexpr int kWiden = kQ5 ? 2 : 4;  // sub-chunks per int16 sum
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  alignas(32) float acc[NT][MR][kTileRows] = {};
  const int8_t* aq[MR];
  for (int i = 0; i < MR; ++i) aq[i] = a.q_row(t0 + i);
  const uint8_t* gps[NT];
  for (int st = 0; st < NT; ++st) gps[st] = w.tile(tiles[st]);
  for (int64_t g = 0; g < w.n_groups; ++g) {
    for (int st = 0; st < NT; ++st) {  // group g of each stream's tile in turn
      const uint8_t* gp = gps[st];
      gps[st] += w.group_bytes;
      __m256i sum16[MR][2], isum[MR][2];
      for (int i = 0; i < MR; ++i) {
        sum16[i][0] = sum16[i][1] = _mm256_setzero_si256();
        isum[i][0] = isum[i][1] = _mm256_setzero_si256();
      }
      __m256i hb0 = _mm256_setzero_si256(), hb1 = _mm256_setzero_si256();
      if constexpr (kQ5) {
        PrefetchAhead<MR>(gp + 256);
        hb0 = LoadPlane(gp + 256, 0), hb1 = LoadPlane(gp + 256, 1);
      }
#pragma GCC unroll 4
      for (int s = 0; s < 4; ++s) {  // columns 8s .. 8s + 7
        PrefetchAhead<MR>(gp + 64 * s);
        const __m256i v0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * s));
        const __m256i v1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * s + 32));
        __m256i lo0 = _mm256_and_si256(v0, low4);
        __m256i hi0 = _mm256_and_si256(_mm256_srli_epi16(v0, 4), low4);
        __m256i lo1 = _mm256_and_si256(v1, low4);
        __m256i hi1 = _mm256_and_si256(_mm256_srli_epi16(v1, 4), low4);
        if constexpr (kQ5) OrHighBitsAt(s, hb0, hb1, &lo0, &lo1, &hi0, &hi1);
        for (int i = 0; i < MR; ++i) {
          const int8_t* ac = aq[i] + g * 32 + 8 * s;
          const __m256i blo = Bcast4(ac), bhi = Bcast4(ac + 4);
          sum16[i][0] = _mm256_add_epi16(
              sum16[i][0],
              _mm256_add_epi16(_mm256_maddubs_epi16(lo0, blo), _mm256_maddubs_epi16(hi0, bhi)));
          sum16[i][1] = _mm256_add_epi16(
              sum16[i][1],
              _mm256_add_epi16(_mm256_maddubs_epi16(lo1, blo), _mm256_maddubs_epi16(hi1, bhi)));
          OpaqueReg(sum16[i][0]);
          OpaqueReg(sum16[i][1]);
          if ((s + 1) % kWiden == 0) {
            for (int h = 0; h < 2; ++h) {
              isum[i][h] = _mm256_add_epi32(isum[i][h],
                                            _mm256_madd_epi16(sum16[i][h], _mm256_set1_epi16(1)));
              sum16[i][h] = _mm256_setzero_si256();
            }
          }
        }
      }
      for (int h = 0; h < 2; ++h) {
        const __m256 dw = LoadHalf(gp + kScales + 16 * h);
        const __m256 mw = kHasMin ? LoadHalf(gp + kScales + 32 + 16 * h) : _mm256_setzero_ps();
        for (int i = 0; i < MR; ++i) {
          __m256i sum = isum[i][h];
          if constexpr (!kHasMin) {  // the offset, off the integer sum (qgemm_ref.cpp)
            sum = _mm256_add_epi32(
                sum, _mm256_set1_epi32(PackedOffset(kLayout) * a.qsum_row(t0 + i)[g]));
          }
          const __m256 scale = _mm256_mul_ps(dw, _mm256_set1_ps(a.d_row(t0 + i)[g]));
          __m256 acc8 = _mm256_load_ps(acc[st][i] + 8 * h);
          acc8 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), scale, acc8);
          if constexpr (kHasMin) {
            acc8 = _mm256_fmadd_ps(mw, _mm256_set1_ps(a.sm_row(t0 + i)[g]), acc8);
          }
          _mm256_store_ps(acc[st][i] + 8 * h, acc8);
        }
      }
    }
  }
  for (int st = 0; st < NT; ++st) {
    for (int i = 0; i < MR; ++i) {
      for (int h = 0; h < 2; ++h) {
        Store(y + (t0 + i) * ldy, _mm256_load_ps(acc[st][i] + 8 * h), tiles[st] * kTileRows + 8 * h,
              w.n_rows);
      }
    }
  }
}

// Signed int8 weights of 4 columns (w0: rows 0-7, w1: rows 8-15, 4 bytes per
// row) times MR tokens' 4 activation bytes at col[i], into the int32 sums of
// both halves. maddubs wants one unsigned operand: |w| times a with w's sign
// (the sign trick), whose int16 pairs reach 2 * 128 * 127, so each maddubs is
// widened at once.
template <int MR>
inline void DotSigned4(__m256i w0, __m256i w1, const int8_t* const (&col)[MR],
                       __m256i (&isum)[MR][2]) {
  const __m256i abs0 = _mm256_abs_epi8(w0), abs1 = _mm256_abs_epi8(w1);
  for (int i = 0; i < MR; ++i) {
    const __m256i b = Bcast4(col[i]);
    // |w| * (a with w's sign) = w * a; -128 -> |w| = 0x80 = 128 as u8
    isum[i][0] = _mm256_add_epi32(isum[i][0], Dot4(abs0, _mm256_sign_epi8(b, w0)));
    isum[i][1] = _mm256_add_epi32(isum[i][1], Dot4(abs1, _mm256_sign_epi8(b, w1)));
    OpaqueReg(isum[i][0]);
    OpaqueReg(isum[i][1]);
  }
}

// acc += isum * (d_w * d_a) for one group of signed int8 weights (Q8x16,
// IQ4x16): the rows' fp16 scales d16[16], both halves.
template <int MR>
inline void AddScaled(const uint8_t* d16, const __m256i (&isum)[MR][2], const QuantizedActs& a,
                      int64_t t0, int64_t g, float (&acc)[MR][kTileRows]) {
  for (int h = 0; h < 2; ++h) {
    const __m256 dw = LoadHalf(d16 + 16 * h);
    for (int i = 0; i < MR; ++i) {
      const __m256 scale = _mm256_mul_ps(dw, _mm256_set1_ps(a.d_row(t0 + i)[g]));
      const __m256 acc8 =
          _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[i][h]), scale, _mm256_load_ps(acc[i] + 8 * h));
      _mm256_store_ps(acc[i] + 8 * h, acc8);
    }
  }
}

// Int8 tiles, both halves per activation broadcast as in TileQ4. Per token
// and 4 columns: one broadcast, then per half sign + maddubs + madd
// (DotSigned4). The column loop is unrolled: 2 tokens ran ~40% faster in
// cache (bench/gemv_rate.cpp). No software prefetch: on the Zen 3 guest of
// docs/PERFORMANCE.md (weights in huge pages) one token read ~7% more from
// memory without it (`ember_gemv_rate 2048 0.5 1 Q8_0`, 19.5 against 18.3
// GB/s; k = 640 alike), where the Q4 and K-quant tiles lose 20-30%.
template <int MR, int NT>
void TileQ8(const PackedMatrix& w, const int64_t (&tiles)[NT], const QuantizedActs& a, int64_t t0,
            float* y, int64_t ldy) {
  alignas(32) float acc[NT][MR][kTileRows] = {};
  const int8_t* aq[MR];
  for (int i = 0; i < MR; ++i) aq[i] = a.q_row(t0 + i);
  const uint8_t* gps[NT];
  for (int st = 0; st < NT; ++st) gps[st] = w.tile(tiles[st]);
  for (int64_t g = 0; g < w.n_groups; ++g) {
    for (int st = 0; st < NT; ++st) {  // group g of each stream's tile in turn
      const uint8_t* gp = gps[st];
      gps[st] += w.group_bytes;
      __m256i isum[MR][2];
      for (int i = 0; i < MR; ++i) isum[i][0] = isum[i][1] = _mm256_setzero_si256();
#pragma GCC unroll 8
      for (int s = 0; s < 8; ++s) {  // columns 4s .. 4s + 3
        const __m256i w0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * s));
        const __m256i w1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * s + 32));
        const int8_t* col[MR];
        for (int i = 0; i < MR; ++i) col[i] = aq[i] + g * 32 + 4 * s;
        DotSigned4<MR>(w0, w1, col, isum);
      }
      AddScaled<MR>(gp + 512, isum, a, t0, g, acc[st]);
    }
  }
  for (int st = 0; st < NT; ++st) {
    for (int i = 0; i < MR; ++i) {
      for (int h = 0; h < 2; ++h) {
        Store(y + (t0 + i) * ldy, _mm256_load_ps(acc[st][i] + 8 * h), tiles[st] * kTileRows + 8 * h,
              w.n_rows);
      }
    }
  }
}

// IQ4x16 tiles (IQ4_NL, IQ4_XS), both halves per broadcast as in TileQ4. Each
// 64-byte sub-chunk of nibbles (columns 8s..8s+7) unpacks as Q4's into the
// indices of columns 8s..8s+3 (low nibbles) and 8s+4..8s+7 (high), one
// vpshufb each turns them into the grid's int8 values (kIq4Grid in both
// 128-bit lanes: an index picks its own lane's copy), and from there they are
// Q8x16's columns (DotSigned4): signed weights in [-127, 113], |w| * a pairs at
// most 2 * 127 * 127 = 32258 per int16 lane. (The + 128 that makes the grid
// unsigned for AVX-512's vpdpbusd does not work here: maddubs saturates its
// int16 pairs, and 2 * 241 * 127 > 32767.) No offset: qgemm_ref.cpp's sums.
template <int MR>
void TileIQ4(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
             int64_t ldy) {
  constexpr size_t kScales = PackedQuantBytes(PackedLayout::kIQ4x16);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i grid =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4Grid)));
  alignas(32) float acc[MR][kTileRows] = {};
  const int8_t* aq[MR];
  for (int i = 0; i < MR; ++i) aq[i] = a.q_row(t0 + i);
  const uint8_t* gp = w.tile(tile);
  for (int64_t g = 0; g < w.n_groups; ++g, gp += w.group_bytes) {
    __m256i isum[MR][2];
    for (int i = 0; i < MR; ++i) isum[i][0] = isum[i][1] = _mm256_setzero_si256();
    for (int s = 0; s < 4; ++s) {  // columns 8s .. 8s + 7
      PrefetchAhead<MR>(gp + 64 * s);
      const __m256i v0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * s));
      const __m256i v1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * s + 32));
      for (int n = 0; n < 2; ++n) {  // low nibbles: columns 8s..8s+3; high: 8s+4..8s+7
        const __m256i i0 = _mm256_and_si256(n == 0 ? v0 : _mm256_srli_epi16(v0, 4), low4);
        const __m256i i1 = _mm256_and_si256(n == 0 ? v1 : _mm256_srli_epi16(v1, 4), low4);
        const int8_t* col[MR];
        for (int i = 0; i < MR; ++i) col[i] = aq[i] + g * 32 + 8 * s + 4 * n;
        DotSigned4<MR>(_mm256_shuffle_epi8(grid, i0), _mm256_shuffle_epi8(grid, i1), col, isum);
      }
    }
    AddScaled<MR>(gp + kScales, isum, a, t0, g, acc);
  }
  for (int i = 0; i < MR; ++i) {
    for (int h = 0; h < 2; ++h) {
      Store(y + (t0 + i) * ldy, _mm256_load_ps(acc[i] + 8 * h), tile * kTileRows + 8 * h, w.n_rows);
    }
  }
}

// Kernel<MR>::Run computes one tile's rows for MR tokens; RunStreams, where a
// kernel has it, one token's rows of kStreams tiles read in turn, a group of
// each at a time (DriveStreams in qgemm_avx2_common.h).
template <bool kHasMin, bool kQ5>
struct Q4 {
  template <int MR>
  struct K {
    static void Run(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0,
                    float* y, int64_t ldy) {
      TileQ4<MR, kHasMin, kQ5, 1>(w, {tile}, a, t0, y, ldy);
    }
    static void RunStreams(const PackedMatrix& w, const int64_t (&tiles)[kStreams],
                           const QuantizedActs& a, float* y, int64_t ldy) {
      TileQ4<1, kHasMin, kQ5, kStreams>(w, tiles, a, 0, y, ldy);
    }
  };
};

template <int MR>
struct Q8 {
  static void Run(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
                  int64_t ldy) {
    TileQ8<MR, 1>(w, {tile}, a, t0, y, ldy);
  }
  static void RunStreams(const PackedMatrix& w, const int64_t (&tiles)[kStreams],
                         const QuantizedActs& a, float* y, int64_t ldy) {
    TileQ8<1, kStreams>(w, tiles, a, 0, y, ldy);
  }
};

template <int MR>
struct IQ4 {
  static void Run(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
                  int64_t ldy) {
    TileIQ4<MR>(w, tile, a, t0, y, ldy);
  }
};

}  // namespace

void QuantizeActRows_avx2(const float* x, int64_t t0, int64_t t1, QuantizedActs* a) {
  // QuantizeActRows_ref's arithmetic, 8 lanes at a time: the same max, the
  // same products x * (1 / d) rounded to nearest even (cvtps uses MXCSR's
  // default mode), the same per-group scalars; so the same bytes.
  const int64_t k = a->k;
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  const int64_t groups = k / 32;
  for (int64_t t = t0; t < t1; ++t) {
    for (int64_t g = 0; g < groups; ++g) {
      const float* xg = x + t * k + g * 32;
      __m256 v[4];
      __m256 amax = _mm256_setzero_ps(), nonfinite = _mm256_setzero_ps();
      for (int i = 0; i < 4; ++i) {
        v[i] = _mm256_loadu_ps(xg + 8 * i);
        // max(|x|, amax): a NaN |x| leaves amax, as std::fmax does.
        amax = _mm256_max_ps(_mm256_andnot_ps(sign, v[i]), amax);
        // x - x is NaN exactly for a NaN or an infinity.
        nonfinite =
            _mm256_or_ps(nonfinite, _mm256_cmp_ps(_mm256_sub_ps(v[i], v[i]), v[i], _CMP_UNORD_Q));
      }
      if (_mm256_movemask_ps(nonfinite) != 0) {
        a->SetNonFinite(t, g);
        continue;
      }
      __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
      m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
      m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
      const float amax_s = _mm_cvtss_f32(m4);
      const float d_exact = amax_s / 127.0f;
      const float id = amax_s != 0.0f ? 127.0f / amax_s : 0.0f;  // as ggml's x86 quantizer
      const __m256 idv = _mm256_set1_ps(id);
      __m256i qi[4];
      for (int i = 0; i < 4; ++i) qi[i] = _mm256_cvtps_epi32(_mm256_mul_ps(v[i], idv));
      // int32 -> int8 (|q| <= 127: no saturation); packs work per 128-bit
      // lane, so the dwords come out as 0 4 1 5 2 6 3 7 and are put back.
      const __m256i p16a = _mm256_packs_epi32(qi[0], qi[1]);
      const __m256i p16b = _mm256_packs_epi32(qi[2], qi[3]);
      const __m256i p8 = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(p16a, p16b), order);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(a->q.data() + t * k + g * 32), p8);
      // The sums of columns 0-15 and 16-31 (qsum16) and of all 32: hadd gives
      // per 128-bit lane [pairs of the first half, pairs of the second].
      const __m256i hh =
          _mm256_hadd_epi32(_mm256_add_epi32(qi[0], qi[1]), _mm256_add_epi32(qi[2], qi[3]));
      __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(hh), _mm256_extracti128_si256(hh, 1));
      s4 = _mm_hadd_epi32(s4, s4);  // [sum of 0-15, sum of 16-31, the same]
      const int sum0 = _mm_cvtsi128_si32(s4), sum1 = _mm_extract_epi32(s4, 1);
      const int total = sum0 + sum1;
      a->qsum16[t * 2 * groups + 2 * g] = sum0;
      a->qsum16[t * 2 * groups + 2 * g + 1] = sum1;
      // F16C's scalar round trip: the bits of Fp16ToFp32(Fp32ToFp16(x)),
      // without the software conversion's branches.
      const float d = RoundToFp16(d_exact);
      a->d[t * groups + g] = d;
      a->qsum[t * groups + g] = total;
      a->dqsum[t * groups + g] = d * static_cast<float>(total);
      a->sm[t * groups + g] = RoundToFp16(d_exact * static_cast<float>(total));
    }
  }
}

void QGemmQ4x16_avx2(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                     const QuantizedActs& a, float* y, int64_t ldy) {
  if (w.has_min) {
    Drive<Q4<true, false>::K>(w, tile_begin, tile_end, a, y, ldy);
  } else {
    Drive<Q4<false, false>::K>(w, tile_begin, tile_end, a, y, ldy);
  }
}

void QGemmQ5x16_avx2(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                     const QuantizedActs& a, float* y, int64_t ldy) {
  if (w.has_min) {
    Drive<Q4<true, true>::K>(w, tile_begin, tile_end, a, y, ldy);
  } else {
    Drive<Q4<false, true>::K>(w, tile_begin, tile_end, a, y, ldy);
  }
}

void QGemmQ8x16_avx2(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                     const QuantizedActs& a, float* y, int64_t ldy) {
  Drive<Q8>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmIQ4x16_avx2(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                      const QuantizedActs& a, float* y, int64_t ldy) {
  if (a.m <= kMr) return Drive<IQ4>(w, tile_begin, tile_end, a, y, ldy);
  // Prefill: each block of tiles is looked up once into Q8x16's layout (the
  // grid values as int8, the same scales) and the int8 kernel runs over it
  // for every group of tokens, instead of TileIQ4 looking the nibbles up
  // again per group of kMr tokens. TileIQ4 multiplies as TileQ8 (DotSigned4,
  // AddScaled), so the bits are the same.
  constexpr size_t kQ8Group = PackedQuantBytes(PackedLayout::kQ8x16) + 32;
  constexpr size_t kIq4Scales = PackedQuantBytes(PackedLayout::kIQ4x16);
  const size_t q8_tile = kQ8Group * static_cast<size_t>(w.n_groups);
  const int64_t block = std::max<int64_t>(1, static_cast<int64_t>((size_t{160} << 10) / q8_tile));
  std::unique_ptr<uint8_t, void (*)(void*)> scratch(
      static_cast<uint8_t*>(  // aligned_alloc wants a multiple of the alignment
          std::aligned_alloc(64, (static_cast<size_t>(block) * q8_tile + 63) / 64 * 64)),
      std::free);
  if (scratch == nullptr) return Drive<IQ4>(w, tile_begin, tile_end, a, y, ldy);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i grid =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4Grid)));
  for (int64_t tb = tile_begin; tb < tile_end; tb += block) {
    const int64_t te = std::min(tb + block, tile_end);
    uint8_t* out = scratch.get();
    for (int64_t tile = tb; tile < te; ++tile) {
      const uint8_t* gp = w.tile(tile);
      for (int64_t g = 0; g < w.n_groups; ++g, gp += w.group_bytes, out += kQ8Group) {
        for (int sc = 0; sc < 4; ++sc) {  // vectors 2 sc (low nibbles), 2 sc + 1 (high)
          for (int h = 0; h < 2; ++h) {   // rows 0-7, 8-15
            const __m256i v =
                _mm256_load_si256(reinterpret_cast<const __m256i*>(gp + 64 * sc + 32 * h));
            const __m256i lo = _mm256_shuffle_epi8(grid, _mm256_and_si256(v, low4));
            const __m256i hi =
                _mm256_shuffle_epi8(grid, _mm256_and_si256(_mm256_srli_epi16(v, 4), low4));
            _mm256_store_si256(reinterpret_cast<__m256i*>(out + 64 * (2 * sc) + 32 * h), lo);
            _mm256_store_si256(reinterpret_cast<__m256i*>(out + 64 * (2 * sc + 1) + 32 * h), hi);
          }
        }
        std::memcpy(out + PackedQuantBytes(PackedLayout::kQ8x16), gp + kIq4Scales, 32);
      }
    }
    PackedMatrix q8;  // the block's tiles as Q8x16, rows from 16 tb
    q8.layout = PackedLayout::kQ8x16;
    q8.n_rows = std::min(w.n_rows - tb * kTileRows, (te - tb) * kTileRows);
    q8.n_cols = w.n_cols;
    q8.n_tiles = te - tb;
    q8.n_groups = w.n_groups;
    q8.group_bytes = kQ8Group;
    q8.tile_bytes = q8_tile;
    q8.data = {scratch.get(), [](uint8_t*) {}};
    Drive<Q8>(q8, 0, q8.n_tiles, a, y + tb * kTileRows, ldy);
  }
}

}  // namespace ember
#endif  // __x86_64__
