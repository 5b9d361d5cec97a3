// Pieces shared by the AVX-512 VNNI quantized-GEMM kernels
// (qgemm_avx512vnni.cpp, qgemm_kquant_avx512vnni.cpp): internal linkage, so
// include only from sources compiled with the AVX-512 flags.
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ops/qgemm.h"
#include "ops/qgemm_act_prefetch.h"

namespace ember {
namespace {

constexpr int kMr = 4;  // tokens per register tile in tile pairs (kMrOneTile below: one tile)

// One tile at a time (decode, and small batches: below) streams the weights
// once: a software prefetch 8 KiB ahead of each 64-byte load keeps more lines
// in flight than the hardware prefetcher does for a loop whose loads are
// spaced by arithmetic. Measured from a 256 MiB matrix on one thread
// (ember_gemv_rate, 3 alternating rounds, a Zen 5 host): Q4 39 -> 42-45 GB/s,
// Q8 42 -> 43-44; 1, 2 and 16 KiB ahead were no better or worse. Weights are
// tile-major, so ahead is the same stream. (Tile pairs read two streams a tile
// apart, where 8 KiB ahead of the first lands in the second: no prefetch
// there.) One token (two for some layouts: UnprefetchedTokens below) on a Zen
// 4 core reads more without it (Stage::kNoPrefetch, OneTokenPrefetch in
// ops/qgemm.h).
constexpr int kPrefetchBytes = 8192;

// Prefill passes over a tile pair once per group of kMr tokens, and each pass
// unpacked the same weights again: for Q6_K a quarter of the instructions
// (unpack, AND / shift / ternlog, 56 per group against 64 vpdpbusd). The
// first pass now keeps the unpacked vectors, the rest read them back
// (kWrite, kRead), where that pays (StagesUnpack below). The integer sums,
// and so the bits, are the same. Batches below kPairFromM go one tile at a time and
// unpack in place (kNone), and one token (or two: UnprefetchedTokens) where
// OneTokenPrefetch() says so does the same without the software prefetch
// (kNoPrefetch).
enum class Stage { kNone, kWrite, kRead, kNoPrefetch };

// Where OneTokenPrefetch() is false, the batches up to this many tokens go
// without the prefetch too: two for the layouts that read more so at two
// tokens on Zen 4 (ember_gemv_rate 2048 0.3 2, GMAC/s, three rounds: Q4_0
// 90-93 -> 100-105, Q8_0 49-52 -> 53-59, Q5_0 63-65 -> 67-71, IQ4_NL 92-100 ->
// 97-107), one for Q3_K and Q2_K. Q4_K, Q5_K and Q6_K went from one to two
// in stop 52 together with their activations' request (PrefetchActs, which
// every kNoPrefetch kernel makes for each of its tokens): two tokens from
// memory, GB/s of weights, medians of 3 rounds at k = 2048 / 8192, Q4_K
// 24.9 / 22.1 -> 31.3 / 24.0, Q5_K 21.1 / 20.1 -> 28.2 / 25.8, Q6_K 19.4 /
// 19.2 -> 28.1 / 26.5; without the activations' request two tokens without
// the prefetch read less than with it (Q5_K 19.9 / 17.1, as stop 50 found),
// and Q3_K / Q2_K read the same or less either way (Q2_K at 8192: 16.0 ->
// 13.1).
constexpr int UnprefetchedTokens(PackedLayout layout) {
  return layout == PackedLayout::kQ3Kx16 || layout == PackedLayout::kQ2Kx16 ? 1 : 2;
}

// A batch of a few tokens (one tile at a time: draft verification, the
// server's parallel sequences) spends 2-4x longer per weight line than one
// token, and with the single prefetch above it read well below its own
// arithmetic rate: from memory against in cache, one thread, k = 2048, GB/s,
// Q4_0 M = 4 19-20 against 24.5, Q6_K 15 against 27. Its lines are asked for
// twice instead: into L2 16 KiB ahead, then into L1 4 KiB ahead.
// `ember_gemv_rate 2048 0.3 M` on a Zen 4 core, two alternating rounds, 8 KiB
// (T0) -> 4 KiB (T0) + 16 KiB (T1): M = 4 Q4_0 19.9 / 20.0 -> 22.7 / 22.7,
// Q5_0 16.9 -> 23.2 / 22.9, Q6_K 15.0 / 15.4 -> 25.7 / 26.0, Q4_K 16.6 / 17.4
// -> 22.5 / 22.2, Q8_0 22.3 / 22.2 -> 26.4 / 23.7; M = 3 Q6_K 18 -> 29, Q4_K
// 18 -> 27; M = 8 Q8_0 15.5 -> 20, Q6_K 11 -> 14; in cache the same. 4 KiB
// alone gained half of it; 1-2 KiB or 16-32 KiB at L1 alone read less than 8.
// Where a pass nearly keeps up with memory the two levels read less than the
// 8 KiB: Q8_0 at three tokens (48 GB/s in cache; 26 -> 21-24 from memory), as
// one token (Q4_0 28.5 -> 22.8 with OneTokenPrefetch() forced on); Q4x16 at
// three tokens (31 in cache) was even at k = 2048 but SmolLM2's step of three
// (Q4_1, k = 576, ember_batch_step -t 1) took 4.85 -> 5.45 ms. Those keep the
// 8 KiB (or none: OneTokenPrefetch). The real models' steps, base -> two
// levels, ms, ember_batch_step --depth 100, three alternating rounds at 2
// threads: Qwen2.5-0.5B M = 4 14.1 / 13.9 / 14.2 -> 13.2 / 12.8 / 12.7, M = 8
// 18.5 / 18.1 / 17.9 -> 16.1 / 16.1 / 19.8; Gemma 3 M = 8 14.4 / 11.2 / 11.4
// -> 12.6 / 10.0 / 9.9; at 1 thread Qwen2.5 M = 4 22.7 / 22.1 -> 18.3 / 18.2.
struct PrefetchPlan {
  int l1_bytes;  // _MM_HINT_T0 this far ahead
  int l2_bytes;  // _MM_HINT_T1 this far ahead, or 0
};
constexpr PrefetchPlan PrefetchFor(PackedLayout layout, int tokens) {
  const int two_levels_from =
      layout == PackedLayout::kQ8x16 || layout == PackedLayout::kQ4x16 ? 4 : 3;
  return tokens >= two_levels_from ? PrefetchPlan{4096, 16384} : PrefetchPlan{kPrefetchBytes, 0};
}

template <PackedLayout kLayout, int MR, int NT, Stage S>
inline void PrefetchAhead(const uint8_t* p) {
  if constexpr (NT == 1 && S != Stage::kNoPrefetch) {
    constexpr PrefetchPlan kPlan = PrefetchFor(kLayout, MR);
    _mm_prefetch(reinterpret_cast<const char*>(p + kPlan.l1_bytes), _MM_HINT_T0);
    if constexpr (kPlan.l2_bytes > 0) {
      _mm_prefetch(reinterpret_cast<const char*>(p + kPlan.l2_bytes), _MM_HINT_T1);
    }
  }
}

// One tile at a time, a K super-group's header (its scales, read by each
// group's epilogue after the group's quants) is loaded first, each line in
// address order: otherwise the stream jumps back to it from the first
// group's quants, and a Zen 4 core's hardware prefetchers then kept fewer
// lines in flight (docs/PERFORMANCE.md "Stop 50"). A byte of each line is
// read through a volatile pointer, so the load is kept though its value is
// not used (the epilogues load the scales again, from L1). The header's lines
// are first prefetched ahead as every load of the stage is (PrefetchAhead).
template <PackedLayout kLayout, int MR, int NT, Stage S>
inline void TouchHeader(const uint8_t* p, size_t bytes) {
  for (size_t line = 0; line < bytes; line += 64) PrefetchAhead<kLayout, MR, NT, S>(p + line);
  if constexpr (NT == 1) {
    for (size_t line = 0; line < bytes; line += 64) {
      static_cast<void>(*static_cast<const volatile uint8_t*>(p + line));
    }
  }
}

inline __m512i Bcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// Q5x16's high bits of a sub-chunk's two unpacked vectors v (low nibbles)
// and v + 1 (high nibbles), added as 16 under a mask: bit v of each byte of
// the group's 64-byte high-bit plane (quant/packed.h) tested into a mask
// register.
inline void AddHighBits(__m512i plane, int v, __m512i* lo, __m512i* hi) {
  const __m512i sixteen = _mm512_set1_epi8(16);
  const __mmask64 k_lo = _mm512_test_epi8_mask(plane, _mm512_set1_epi8(static_cast<char>(1 << v)));
  const __mmask64 k_hi = _mm512_test_epi8_mask(plane, _mm512_set1_epi8(static_cast<char>(2 << v)));
  *lo = _mm512_mask_add_epi8(*lo, k_lo, *lo, sixteen);
  *hi = _mm512_mask_add_epi8(*hi, k_hi, *hi, sixteen);
}

// Sub-chunk S (columns 8S..8S+7) of a Q6Kx16 group, 16 rows: the
// nibbles v unpack as Q4x16's (lo: vector 2S, hi: vector 2S + 1), and crumb
// vector cr (S / 2: columns 16 (S / 2)..) holds their bits 4-5 at bits 2k,
// 2k+1 of each byte (vector 4 (S / 2) + k, k = 2 (S % 2) and 2 (S % 2) + 1):
// shifted to bits 4-5 and ORed in under a mask (one vpternlogd). 16-bit shifts
// are fine: what they carry across a byte boundary lands outside bits 4-5.
// The quants are then 0..63, unsigned for vpdpbusd.
template <int S>
inline void UnpackQ6(__m512i v, __m512i cr, __m512i* lo, __m512i* hi) {
  const __m512i low4 = _mm512_set1_epi8(0x0F), bits45 = _mm512_set1_epi8(0x30);
  constexpr int kOr = 0xF8;  // vpternlogd: a | (b & c)
  __m512i top_lo = cr, top_hi = _mm512_srli_epi16(cr, 2);
  if constexpr (S % 2 == 0) {
    top_lo = _mm512_slli_epi16(cr, 4);
    top_hi = _mm512_slli_epi16(cr, 2);
  }
  *lo = _mm512_ternarylogic_epi32(_mm512_and_si512(v, low4), top_lo, bits45, kOr);
  *hi = _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(v, 4), low4), top_hi, bits45,
                                  kOr);
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

// A tile pair's unpacked weight vectors, [group][vector v < 8][tile j < NT]
// [64 bytes] (2 KiB per group: L2 for the k of these models).
template <Stage S, int NT>
struct Staged {
  uint8_t* p;
  uint8_t* at(int64_t g, int v, int j) const { return p + ((g * 8 + v) * NT + j) * 64; }
  // Vectors v and v + 1 of tile j in group g: unpack(lo, hi) unless read back.
  template <class F>
  void Two(int64_t g, int v, int j, __m512i* lo, __m512i* hi, F&& unpack) const {
    if constexpr (S == Stage::kRead) {
      *lo = _mm512_load_si512(at(g, v, j));
      *hi = _mm512_load_si512(at(g, v + 1, j));
    } else {
      unpack(lo, hi);
      if constexpr (S == Stage::kWrite) {
        _mm512_store_si512(at(g, v, j), *lo);
        _mm512_store_si512(at(g, v + 1, j), *hi);
      }
    }
  }
  // Vector v of tile j in group g: unpack() unless read back.
  template <class F>
  __m512i One(int64_t g, int v, int j, F&& unpack) const {
    if constexpr (S == Stage::kRead) {
      return _mm512_load_si512(at(g, v, j));
    } else {
      const __m512i x = unpack();
      if constexpr (S == Stage::kWrite) _mm512_store_si512(at(g, v, j), x);
      return x;
    }
  }
};

// This thread's stage for a tile pair of n_groups groups.
inline uint8_t* StageBuffer(int64_t n_groups) {
  struct alignas(64) Line {
    uint8_t b[64];
  };
  thread_local std::vector<Line> buffer;
  const size_t lines = static_cast<size_t>(n_groups) * 8 * 2;
  if (buffer.size() < lines) buffer.resize(lines);
  return buffer.data()->b;
}

// Whether a layout's prefill keeps its unpacked vectors (Staged): where the
// unpacking costs more than the two loads of reading them back. Measured as
// in Stage's note, base -> staged: Q5_0 140 -> 168, Q5_K 124 -> 151, Q6_K 127
// -> 153, Q3_K 121 -> 150; the nibble split alone (Q4_0 168 -> 169, IQ4_NL 162
// -> 161, Q4_K 148 -> 145) and Q2_K's crumbs (108 -> 111) gain nothing.
constexpr bool StagesUnpack(PackedLayout layout) {
  return layout == PackedLayout::kQ5x16 || layout == PackedLayout::kQ5Kx16 ||
         layout == PackedLayout::kQ6Kx16 || layout == PackedLayout::kQ3Kx16;
}

// Kernel<MR, NT, S>::Run(w, tile, a, t0, y, ldy, stage) for a run-time mr in
// 1..MR; Kernel<...>::kStaged says whether Drive passes it a stage.
template <template <int, int, Stage> class Kernel, int NT, Stage S, int MR>
inline void RunTokens(int64_t mr, const PackedMatrix& w, int64_t tile, const QuantizedActs& a,
                      int64_t t0, float* y, int64_t ldy, uint8_t* stage) {
  if constexpr (MR > 1) {
    if (mr < MR) return RunTokens<Kernel, NT, S, MR - 1>(mr, w, tile, a, t0, y, ldy, stage);
  }
  Kernel<MR, NT, S>::Run(w, tile, a, t0, y, ldy, stage);
}

// Batches of fewer than kPairFromM tokens (decode, draft verification, a step
// of the server's parallel sequences) go one tile at a time with the prefetch
// above, tokens in groups of kMrOneTile = 8: the weight stream stays ahead of
// the arithmetic, and a pass of 8 tokens unpacks each weight vector once
// (8 int32 sums + 8 float accumulators are 16 of the 32 zmm registers). Tile
// pairs (each broadcast feeds two tiles) do less arithmetic per weight but
// overlapped it with the stream worse. From memory, one thread,
// 4 tokens, GMAC/s, pairs -> one tile at a time (ember_gemv_rate K 0.5 4, two
// rounds at k = 2048): Q4_0 87 / 76 -> 100 / 104, Q4_K 69 / 77 -> 89 / 88, Q6_K
// 44 / 49 -> 67 / 66, Q3_K 56 / 61 -> 118 / 107; at k = 896 Q5_0 46 -> 78, Q4_0
// 69 -> 83. Q8_0 alone lost a little (65-72 -> 59-60; 896: 59 -> 54), but a whole
// model with its Q8_0 output matrix did not: Qwen2.5-Coder-0.5B, M = 4,
// ember_batch_step, three rounds, ms: 1 thread pairs 36.8 / 36.1 / 33.4, one
// tile 25.7 / 28.9 / 24.0, Q8 still in pairs 36.5 / 26.9 / 26.9; 2 threads 26.3 /
// 21.8 / 20.5, 22.3 / 15.2 / 15.9, 16.8 / 15.0 / 17.7 (M = 1: 19-23 and 13-17 ms).
// Larger batches (prefill) are bound by the arithmetic and keep the pairs.
constexpr int64_t kPairFromM = 17;
// Groups of 4 tokens passed over each tile twice for M = 8 and recomputed its
// unpacking: one tile, from memory, one thread, 8 tokens, GMAC/s, kMr -> 8
// (ember_gemv_rate 2048 0.4 8, two rounds alike): Q4_0 122 -> 142, Q5_0 86 ->
// 105, Q8_0 86 -> 101, Q6_K 69 -> 89, IQ4_NL 105 -> 142, Q4_K 117 -> 133, Q5_K
// 92 -> 110, Q3_K 106 -> 130, Q2_K 124 -> 125. In cache, 8 tokens of Q4_0 run
// at ~178 GMAC/s, about what the two 256-bit integer-multiply pipes allow
// (64 vpdpbusd zmm + 16 float mul/fma per group of 4096 multiply-adds).
constexpr int kMrOneTile = 8;

template <template <int, int, Stage> class Kernel>
void Drive(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end, const QuantizedActs& a,
           float* y, int64_t ldy) {
  constexpr bool kStaged = Kernel<1, 2, Stage::kNone>::kStaged;
  uint8_t* stage = kStaged && a.m >= kPairFromM ? StageBuffer(w.n_groups) : nullptr;
  constexpr int kUnprefetched = Kernel<1, 2, Stage::kNone>::kUnprefetchedM;
  if (a.m <= kUnprefetched && !OneTokenPrefetch()) {
    for (int64_t tile = tile_begin; tile < tile_end; ++tile) {
      RunTokens<Kernel, 1, Stage::kNoPrefetch, kUnprefetched>(a.m, w, tile, a, 0, y, ldy, nullptr);
    }
    return;
  }
  for (int64_t tile = tile_begin; tile < tile_end;) {
    const bool pair = a.m >= kPairFromM && tile + 1 < tile_end;
    const int64_t step = pair ? kMr : kMrOneTile;
    for (int64_t t = 0; t < a.m; t += step) {
      const int64_t mr = std::min<int64_t>(step, a.m - t);
      if (!pair) {
        RunTokens<Kernel, 1, Stage::kNone, kMrOneTile>(mr, w, tile, a, t, y, ldy, nullptr);
      } else if (!kStaged) {
        RunTokens<Kernel, 2, Stage::kNone, kMr>(mr, w, tile, a, t, y, ldy, nullptr);
      } else if (t == 0) {
        RunTokens<Kernel, 2, Stage::kWrite, kMr>(mr, w, tile, a, t, y, ldy, stage);
      } else {
        RunTokens<Kernel, 2, Stage::kRead, kMr>(mr, w, tile, a, t, y, ldy, stage);
      }
    }
    tile += pair ? 2 : 1;
  }
}

}  // namespace
}  // namespace ember
#endif  // __x86_64__
