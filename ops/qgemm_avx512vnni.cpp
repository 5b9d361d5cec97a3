// Quantized GEMM on AVX-512 VNNI. One zmm holds 16 int32 lanes = the 16 rows
// of a tile; vpdpbusd multiplies each row's 4 weight bytes with 4 broadcast
// activation bytes and adds them into its lane: no horizontal sums. Weights
// are unpacked once per group and reused for up to kMr tokens (prefill).
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "ops/kernels.h"
#include "ops/qgemm_avx512vnni_common.h"
#include "quant/blocks.h"

namespace ember {
namespace {

// IQ4x16's grid for vpshufb: kIq4Grid + 128 (1..241, the values as unsigned
// bytes for vpdpbusd's unsigned operand) in each 128-bit lane, so that a
// nibble indexes its own lane's copy. The + 128 comes off the integer sums as
// an offset of -128 times the activations' qsum: sum((g + 128) a) - 128
// sum(a) = sum(g a), the same integer as qgemm_ref.cpp's. (Q8x16's signed
// weights instead need the activations flipped to unsigned and a second
// vpdpbusd per vector for sum(w); a lookup table can hold unsigned values
// for free.)
constexpr int kIq4Bias = 128;
struct Iq4Table {
  uint8_t v[64];
};
constexpr Iq4Table MakeIq4GridUnsigned() {
  Iq4Table t{};
  for (int i = 0; i < 64; ++i) t.v[i] = static_cast<uint8_t>(kIq4Grid[i % 16] + kIq4Bias);
  return t;
}
// A constant rather than a broadcast of kIq4Grid: GCC 12 warns that
// _mm512_broadcast_i32x4's "undefined" source is used uninitialized.
alignas(64) constexpr Iq4Table kIq4GridUnsigned = MakeIq4GridUnsigned();

// Q4, Q5 and IQ4 tiles, NT tiles at once: each 4-byte activation broadcast
// feeds NT vpdpbusd (one per tile), so a pair of tiles halves the broadcasts
// per multiply. Q5 adds 16 to the bytes its high-bit plane marks
// (AddHighBits). IQ4 looks the nibbles up in the grid (one vpshufb per
// unpacked vector) and takes kIq4Bias off as an offset.
template <int MR, int NT, PackedLayout kLayout, bool kHasMin, Stage S>
void TilesQ4(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
             int64_t ldy, uint8_t* stage) {
  const Staged<S, NT> staged{stage};
  constexpr bool kQ5 = kLayout == PackedLayout::kQ5x16;
  constexpr bool kIQ4 = kLayout == PackedLayout::kIQ4x16;
  // Without stored mins, what comes off the integer sum per unit of qsum.
  constexpr int kOffset = kIQ4 ? -kIq4Bias : PackedOffset(kLayout);
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  const __m512i grid = kIQ4 ? _mm512_load_si512(kIq4GridUnsigned.v) : _mm512_setzero_si512();
  __m512 acc[NT][MR];
  for (int j = 0; j < NT; ++j) {
    for (int i = 0; i < MR; ++i) acc[j][i] = _mm512_setzero_ps();
  }
  const uint8_t* gp[NT];
  for (int j = 0; j < NT; ++j) gp[j] = w.tile(tile + j);
  const int8_t* aq[MR];
  for (int i = 0; i < MR; ++i) aq[i] = a.q_row(t0 + i);
  for (int64_t g = 0; g < w.n_groups; ++g) {
    // Without stored mins the sums start from the offset (qgemm_ref.cpp's
    // kOffset * qsum): no add per tile after the products.
    __m512i isum[NT][MR];
    for (int i = 0; i < MR; ++i) {
      const __m512i start =
          kHasMin ? _mm512_setzero_si512() : _mm512_set1_epi32(kOffset * a.qsum_row(t0 + i)[g]);
      for (int j = 0; j < NT; ++j) isum[j][i] = start;
    }
    if constexpr (kQ5) PrefetchAhead<kLayout, MR, NT, S>(gp[0] + 256);
    __m512i plane[NT];  // Q5: the group's high-bit planes
    for (int j = 0; j < NT; ++j) {
      plane[j] = kQ5 ? _mm512_loadu_si512(gp[j] + 256) : _mm512_setzero_si512();
    }
    for (int s = 0; s < 4; ++s) {
      __m512i lo[NT], hi[NT];
      PrefetchAhead<kLayout, MR, NT, S>(gp[0] + 64 * s);
      for (int j = 0; j < NT; ++j) {
        staged.Two(g, 2 * s, j, &lo[j], &hi[j], [&](__m512i* l, __m512i* h) {
          const __m512i v = _mm512_loadu_si512(gp[j] + 64 * s);
          *l = _mm512_and_si512(v, low4);
          *h = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
          if constexpr (kQ5) AddHighBits(plane[j], 2 * s, l, h);
          if constexpr (kIQ4) {  // indices -> grid values + 128
            *l = _mm512_shuffle_epi8(grid, *l);
            *h = _mm512_shuffle_epi8(grid, *h);
          }
        });
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
        const __m512i sum = isum[j][i];
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

// Int8 tiles, NT at once as in TilesQ4. vpdpbusd needs one unsigned operand,
// two ways to the same integer sum(w a):
//  - up to two tokens, the weights go in as w + 128 (xor 0x80, once per vector
//    for the tokens) and the activations as they are: sum((w + 128) a) - 128
//    sum(a), the sums starting from -128 qsum as Q4's from its offset;
//  - from three tokens on, the activations go in as a + 128 (xor 0x80, once per
//    broadcast for all NT tiles) and 128 sum(w), from a vpdpbusd of ones with
//    w, is taken off.
// The first takes 8 vpdpbusd a group for one token where the second takes 16:
// `ember_gemv_rate 2048 0.3 M Q8_0` on a Zen 4 core, in cache, M = 1 80 -> 102
// GB/s, M = 2 52 -> 80, and from memory the same (31-33, 29-31). From three
// tokens the first is still faster in cache (M = 4 39 -> 43) but reads less
// from memory (M = 3 25 -> 22, M = 4 23-24 -> 15, M = 8 15 -> 11; 21 at M = 4
// with the weights' loads kept apart from the xor): not understood, measured.
template <int MR, int NT, Stage S>
void TilesQ8(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
             int64_t ldy) {
  constexpr bool kUnsignedWeights = MR <= 2;
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
    for (int i = 0; i < MR; ++i) {
      const __m512i start = kUnsignedWeights ? _mm512_set1_epi32(-128 * a.qsum_row(t0 + i)[g])
                                             : _mm512_setzero_si512();
      for (int j = 0; j < NT; ++j) isum[j][i] = start;
    }
    for (int j = 0; j < NT; ++j) wsum[j] = _mm512_setzero_si512();
    for (int s = 0; s < 8; ++s) {
      __m512i wq[NT];
      PrefetchAhead<PackedLayout::kQ8x16, MR, NT, S>(gp[0] + 64 * s);
      for (int j = 0; j < NT; ++j) {
        wq[j] = _mm512_loadu_si512(gp[j] + 64 * s);
        if constexpr (kUnsignedWeights) {
          wq[j] = _mm512_xor_si512(wq[j], flip);
        } else {
          wsum[j] = _mm512_dpbusd_epi32(wsum[j], ones, wq[j]);
        }
      }
      for (int i = 0; i < MR; ++i) {
        const __m512i b = Bcast4(aq[i] + g * 32 + 4 * s);
        for (int j = 0; j < NT; ++j) {
          isum[j][i] = kUnsignedWeights
                           ? _mm512_dpbusd_epi32(isum[j][i], wq[j], b)
                           : _mm512_dpbusd_epi32(isum[j][i], _mm512_xor_si512(b, flip), wq[j]);
        }
      }
    }
    for (int j = 0; j < NT; ++j) {
      const __m512i correction = _mm512_slli_epi32(wsum[j], 7);  // 0 for unsigned weights
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

template <PackedLayout kLayout, bool kHasMin>
struct Q4Kernel {
  template <int MR, int NT, Stage S>
  struct K {
    static constexpr bool kStaged = StagesUnpack(kLayout);
    static constexpr int kUnprefetchedM = UnprefetchedTokens(kLayout);
    static void Run(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0,
                    float* y, int64_t ldy, uint8_t* stage) {
      TilesQ4<MR, NT, kLayout, kHasMin, S>(w, tile, a, t0, y, ldy, stage);
    }
  };
};
// Int8 weights need no unpacking: the stage is not used.
template <int MR, int NT, Stage S>
struct Q8 {
  static constexpr bool kStaged = false;
  static constexpr int kUnprefetchedM = UnprefetchedTokens(PackedLayout::kQ8x16);
  static void Run(const PackedMatrix& w, int64_t tile, const QuantizedActs& a, int64_t t0, float* y,
                  int64_t ldy, uint8_t* /*stage*/) {
    TilesQ8<MR, NT, S>(w, tile, a, t0, y, ldy);
  }
};

}  // namespace

void QGemmQ4x16_avx512vnni(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                           const QuantizedActs& a, float* y, int64_t ldy) {
  if (w.has_min) {
    Drive<Q4Kernel<PackedLayout::kQ4x16, true>::K>(w, tile_begin, tile_end, a, y, ldy);
  } else {
    Drive<Q4Kernel<PackedLayout::kQ4x16, false>::K>(w, tile_begin, tile_end, a, y, ldy);
  }
}

void QGemmQ5x16_avx512vnni(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                           const QuantizedActs& a, float* y, int64_t ldy) {
  if (w.has_min) {
    Drive<Q4Kernel<PackedLayout::kQ5x16, true>::K>(w, tile_begin, tile_end, a, y, ldy);
  } else {
    Drive<Q4Kernel<PackedLayout::kQ5x16, false>::K>(w, tile_begin, tile_end, a, y, ldy);
  }
}

void QGemmQ8x16_avx512vnni(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                           const QuantizedActs& a, float* y, int64_t ldy) {
  Drive<Q8>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmIQ4x16_avx512vnni(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                            const QuantizedActs& a, float* y, int64_t ldy) {
  Drive<Q4Kernel<PackedLayout::kIQ4x16, false>::K>(w, tile_begin, tile_end, a, y, ldy);
}

}  // namespace ember
#endif  // __x86_64__
