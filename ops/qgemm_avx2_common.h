// Pieces shared by the AVX2 quantized-GEMM kernels (qgemm_avx2.cpp,
// qgemm_kquant_avx2.cpp): internal linkage, so include only from sources
// compiled with the AVX2 flags.
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "ops/qgemm.h"

namespace ember {
namespace {

constexpr int kMr = 4;  // tokens per kernel call (the switch below knows 1..4)

inline __m256i Bcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// Keeps GCC from reassociating sums across it: without this it computed every
// maddubs product of a slice first and spilled them all to the stack.
inline void OpaqueReg(__m256i& v) { asm("" : "+x"(v)); }

// Decode (one token) streams the weights once: a software prefetch 8 KiB ahead
// of each 64-byte line keeps more lines in flight than the hardware prefetcher
// does for a loop whose loads are spaced by arithmetic (as in
// qgemm_avx512vnni.cpp, where it was measured).
constexpr int kPrefetchBytes = 8192;

// A batch's first pass over a block of tiles reads them from memory, several
// times slower per line than one token, and had no prefetch: it read well
// below its own arithmetic rate. As the AVX-512 tiles' batches
// (PrefetchFor in qgemm_avx512vnni_common.h), it asks for each line into L2
// 16 KiB ahead and into L1 4 KiB ahead, from kTwoLevelsFrom tokens: three for
// the Q4, Q5, Q8 and IQ4 tiles, two for the K tiles. Measured on the Zen 4
// host of stop 57 running these kernels (EMBER_ISA=avx2; not on an AVX2-only
// machine), `ember_gemv_rate 2048 0.3 M`, GB/s from memory, two rounds, none
// -> two levels: M = 2 Q6_K 13.8 / 13.3 -> 22.9 / 22.9, Q4_K 22.4 / 20.3 ->
// 28.5 / 28.8 (Q4_0 21.9 -> 20.4-20.7: it keeps none at two); M = 3 Q5_0
// 11.5 / 11.0 -> 18.2 / 18.4, Q6_K 9.3 -> 17.7; M = 4 Q4_0 12.9 / 11.8 ->
// 16.2 / 16.3, Q5_0 7.7 / 7.5 -> 14.9 / 15.1, Q4_K 10.3 -> 16.4 / 16.3; M = 8
// Q4_0 6.6 -> 8.3 / 8.4. In cache 0-3% less (the prefetches' instructions).
template <int MR, int kTwoLevelsFrom = 3>
inline void PrefetchAhead(const uint8_t* p) {
  if constexpr (MR == 1) {
    _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchBytes), _MM_HINT_T0);
  } else if constexpr (MR >= kTwoLevelsFrom) {
    _mm_prefetch(reinterpret_cast<const char*>(p + 4096), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(p + 16384), _MM_HINT_T1);
  }
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

inline float RoundToFp16(float x) {
  return _cvtsh_ss(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

inline __m256 LoadHalf(const uint8_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Q5x16's high bits of unpacked vector V, 8 rows (one half), as 16 in each
// marked byte: hb is the half's 32 bytes of the group's high-bit plane, whose
// bit V of byte i belongs to byte i of vector V (quant/packed.h). Bit V moves
// to bit 4 by a 16-bit shift (what crosses a byte lands outside bit 4) and is
// masked: two vector ops per vector, the plane read once per group. (The
// plane used to hold each vector's 64 bits in a row: spreading 32 of them
// over 32 bytes took a broadcast, a shuffle, an and, a compare and an and,
// and the Q5 GEMVs ran at half Q4's weights per second in cache.)
template <int V>
inline __m256i HighBits(__m256i hb) {
  __m256i h = hb;
  if constexpr (V < 4) h = _mm256_slli_epi16(hb, 4 - V);
  if constexpr (V > 4) h = _mm256_srli_epi16(hb, V - 4);
  return _mm256_and_si256(h, _mm256_set1_epi8(16));
}

// Sub-chunk S's high bits ORed into its four unpacked Q5 vectors (vectors 2S
// and 2S + 1): hb0 / hb1 the plane's rows 0-7 / 8-15; lo0 / lo1 are the low
// nibbles' rows 0-7 / 8-15, hi0 / hi1 the high nibbles'.
template <int S>
inline void OrHighBits(__m256i hb0, __m256i hb1, __m256i* lo0, __m256i* lo1, __m256i* hi0,
                       __m256i* hi1) {
  *lo0 = _mm256_or_si256(*lo0, HighBits<2 * S>(hb0));
  *lo1 = _mm256_or_si256(*lo1, HighBits<2 * S>(hb1));
  *hi0 = _mm256_or_si256(*hi0, HighBits<2 * S + 1>(hb0));
  *hi1 = _mm256_or_si256(*hi1, HighBits<2 * S + 1>(hb1));
}

// OrHighBits<s> for a sub-chunk loop's s: the loops are unrolled, so the
// switch folds to one case (and the shifts stay immediates).
inline void OrHighBitsAt(int s, __m256i hb0, __m256i hb1, __m256i* lo0, __m256i* lo1, __m256i* hi0,
                         __m256i* hi1) {
  switch (s) {
    case 0:
      return OrHighBits<0>(hb0, hb1, lo0, lo1, hi0, hi1);
    case 1:
      return OrHighBits<1>(hb0, hb1, lo0, lo1, hi0, hi1);
    case 2:
      return OrHighBits<2>(hb0, hb1, lo0, lo1, hi0, hi1);
    default:
      return OrHighBits<3>(hb0, hb1, lo0, lo1, hi0, hi1);
  }
}

// The rows 0-7 (h = 0) or 8-15 (h = 1) half of a group's high-bit plane at qh.
inline __m256i LoadPlane(const uint8_t* qh, int h) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh + 32 * h));
}

// Sub-chunk S (columns 8S..8S+7) of a Q6Kx16 group, 8 rows (32 bytes
// of each plane): the nibbles v unpack as Q4x16's (lo: vector 2S, hi: vector
// 2S + 1) and crumbs cr (of crumb vector S / 2) hold their bits 4-5 at bits
// 2k, 2k+1 (k = 2 (S % 2), and k + 1 for hi): shifted to bits 4-5 (16-bit
// shifts: what crosses a byte lands outside bits 4-5), masked, ORed in.
template <int S>
inline void UnpackQ6(__m256i v, __m256i cr, __m256i* lo, __m256i* hi) {
  const __m256i low4 = _mm256_set1_epi8(0x0F), bits45 = _mm256_set1_epi8(0x30);
  __m256i tl = cr, th = _mm256_srli_epi16(cr, 2);
  if constexpr (S % 2 == 0) {
    tl = _mm256_slli_epi16(cr, 4);
    th = _mm256_slli_epi16(cr, 2);
  }
  *lo = _mm256_or_si256(_mm256_and_si256(v, low4), _mm256_and_si256(tl, bits45));
  *hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), low4),
                        _mm256_and_si256(th, bits45));
}

// Decode reads a call's tiles as kStreams streams: its range cut into
// kStreams consecutive parts, a group of one tile of each part in turn. One
// core's hardware prefetchers keep more lines in flight for several streams
// than for one: on the Zen 3 guest of docs/PERFORMANCE.md ("Stop 39") a Q8_0
// GEMV read 13-36% more from memory in 4 streams than in one (k = 640 and
// 2048, 1 thread, ranges of 256 KiB to 1 MiB), at 1 MiB as much as a plain
// read in 4 streams. The K-quant tiles read less in 4 streams (Q4_K: 16-18
// against 21-22 GB/s), so they have no RunStreams.
constexpr int kStreams = 4;

template <template <int> class Kernel>
constexpr bool kHasStreams = requires(const PackedMatrix& w, const int64_t (&t)[kStreams],
                                      const QuantizedActs& a, float* y) {
  Kernel<1>::RunStreams(w, t, a, y, int64_t{0});
};

// One token over tiles [tile_begin, tile_end): q = n / kStreams tiles per
// stream, stream s at tile_begin + s q; the n % kStreams tiles left over one
// at a time. Each tile's rows are computed as by Kernel<1>::Run.
template <template <int> class Kernel>
void DriveStreams(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                  const QuantizedActs& a, float* y, int64_t ldy) {
  const int64_t q = (tile_end - tile_begin) / kStreams;
  for (int64_t i = 0; i < q; ++i) {
    int64_t tiles[kStreams];
    for (int s = 0; s < kStreams; ++s) tiles[s] = tile_begin + s * q + i;
    Kernel<1>::RunStreams(w, tiles, a, y, ldy);
  }
  for (int64_t t = tile_begin + kStreams * q; t < tile_end; ++t) {
    Kernel<1>::Run(w, t, a, 0, y, ldy);
  }
}

// The switches below stay switches: a generic lambda per MR made GCC inline
// the tiles into the drivers, and the 4-token tiles ran ~20% slower.
template <template <int> class Kernel>
void Drive(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end, const QuantizedActs& a,
           float* y, int64_t ldy) {
  if constexpr (kHasStreams<Kernel>) {
    if (a.m == 1) return DriveStreams<Kernel>(w, tile_begin, tile_end, a, y, ldy);
  }
  // One token (decode) takes the same path: TileQ4<1> / TileQ8<1> share each
  // activation broadcast between the two halves of a tile, 25-30% faster in
  // cache than a kernel that broadcast per half (bench/gemv_rate.cpp).
  // Loop order for the caches: a block of tiles (about kBlockBytes of
  // weights, which stay in L2) meets every group of kMr tokens in turn, and
  // each group's activations (kMr * k bytes) stay in L1 while the block's
  // tiles pass. Tile-major order instead streamed all m * k activation bytes
  // from L3 once per 8 rows. The order changes nothing in what is computed.
  constexpr size_t kBlockBytes = size_t{160} << 10;
  const int64_t block = std::max<int64_t>(1, static_cast<int64_t>(kBlockBytes / w.tile_bytes));
  for (int64_t tb = tile_begin; tb < tile_end; tb += block) {
    const int64_t te = std::min(tb + block, tile_end);
    for (int64_t t = 0; t < a.m; t += kMr) {
      const int64_t mr = std::min<int64_t>(kMr, a.m - t);
      for (int64_t tile = tb; tile < te; ++tile) {
        switch (mr) {
          case 4:
            Kernel<4>::Run(w, tile, a, t, y, ldy);
            break;
          case 3:
            Kernel<3>::Run(w, tile, a, t, y, ldy);
            break;
          case 2:
            Kernel<2>::Run(w, tile, a, t, y, ldy);
            break;
          default:
            Kernel<1>::Run(w, tile, a, t, y, ldy);
            break;
        }
      }
    }
  }
}

// Bytes per group of a tile whose quants are unpacked ahead (DriveUnpacked):
// 32 columns x 16 rows, one byte per weight, in the order the tile reads them.
constexpr size_t kUnpackedGroup = 512;

// unpack(gp, out) for every group of a K layout's tile, in order: gp at the
// group's quants (past its super-group's header), out advancing by
// kUnpackedGroup. The tile's lines are asked for as a batch's are
// (PrefetchAhead): EMBER_ISA=avx2 `ember_gemv_rate 2048 0.3 8` on the Zen 4
// host of stop 57, GB/s from memory, two rounds, Q5_K 4.9 / 4.8 -> 5.3 / 5.4,
// Q3_K 2.9 -> 3.4, Q6_K 5.0 -> 5.0 (16 tokens: +5%); prefill unchanged.
template <PackedLayout kLayout, class F>
inline void ForEachKGroup(const PackedMatrix& w, int64_t tile, uint8_t* out, F&& unpack) {
  const uint8_t* sg = w.tile(tile);
  for (int64_t s = 0; s < w.n_groups / kSuperGroups; ++s, sg += w.super_bytes) {
    for (size_t line = 0; line < w.super_bytes; line += 64) PrefetchAhead<kMr>(sg + line);
    for (int jg = 0; jg < kSuperGroups; ++jg, out += kUnpackedGroup) {
      unpack(sg + KHeaderBytes(kLayout) + jg * KGroupBytes(kLayout), out);
    }
  }
}

// Prefill over a layout whose unpacking is a large share of a tile's work for
// 4 tokens (the K-quants): each block of tiles is unpacked once, by
// Kernel<1>::Unpack(w, tile, out) (kUnpackedGroup bytes per group), into a
// scratch that stays in L2, and Kernel<MR>::RunUnpacked reads it for every
// group of kMr tokens, in Drive's order. The same bytes as the kernel unpacks
// itself, so the same sums. Up to kMr tokens (decode, small batches) there is
// nothing to share: Drive, unpacking as it goes.
template <template <int> class Kernel>
void DriveUnpacked(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                   const QuantizedActs& a, float* y, int64_t ldy) {
  if (a.m <= kMr) return Drive<Kernel>(w, tile_begin, tile_end, a, y, ldy);
  constexpr size_t kBlockBytes = size_t{192} << 10;
  const size_t u_tile = kUnpackedGroup * static_cast<size_t>(w.n_groups);
  const int64_t block = std::max<int64_t>(1, static_cast<int64_t>(kBlockBytes / u_tile));
  // u_tile is a multiple of 512, as aligned_alloc wants of the size.
  uint8_t* scratch =
      static_cast<uint8_t*>(std::aligned_alloc(64, static_cast<size_t>(block) * u_tile));
  if (scratch == nullptr) return Drive<Kernel>(w, tile_begin, tile_end, a, y, ldy);
  for (int64_t tb = tile_begin; tb < tile_end; tb += block) {
    const int64_t te = std::min(tb + block, tile_end);
    for (int64_t tile = tb; tile < te; ++tile)
      Kernel<1>::Unpack(w, tile, scratch + (tile - tb) * u_tile);
    for (int64_t t = 0; t < a.m; t += kMr) {
      const int64_t mr = std::min<int64_t>(kMr, a.m - t);
      for (int64_t tile = tb; tile < te; ++tile) {
        const uint8_t* pre = scratch + (tile - tb) * u_tile;
        switch (mr) {
          case 4:
            Kernel<4>::RunUnpacked(w, tile, a, t, y, ldy, pre);
            break;
          case 3:
            Kernel<3>::RunUnpacked(w, tile, a, t, y, ldy, pre);
            break;
          case 2:
            Kernel<2>::RunUnpacked(w, tile, a, t, y, ldy, pre);
            break;
          default:
            Kernel<1>::RunUnpacked(w, tile, a, t, y, ldy, pre);
            break;
        }
      }
    }
  }
  std::free(scratch);
}

}  // namespace
}  // namespace ember
#endif  // __x86_64__
