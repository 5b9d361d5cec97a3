// GGUF block formats as data: one struct per format, its size checked.
// A block holds 32 weights of one row (QK = 32), a K-quant super-block 256.
#pragma once

#include <cstdint>

namespace ember {

constexpr int kQK = 32;  // elements per block of the 32-wide formats

// Q4_0: x = (q - 8) * d, q in [0, 15]. qs[j] holds x[j] (low nibble) and x[j + 16] (high).
struct BlockQ4_0 {
  uint16_t d;  // fp16 scale
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_0) == 18);

// Q4_1: x = q * d + m, q in [0, 15]; nibble order as Q4_0.
struct BlockQ4_1 {
  uint16_t d;  // fp16 scale
  uint16_t m;  // fp16 minimum
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_1) == 20);

// Q5_0: x = (q - 16) * d, q in [0, 31]. qs as Q4_0 holds the low 4 bits; bit j
// of qh (little-endian uint32) is bit 4 of x[j].
struct BlockQ5_0 {
  uint16_t d;  // fp16 scale
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_0) == 22);

// Q5_1: x = q * d + m, q in [0, 31]; bits as Q5_0.
struct BlockQ5_1 {
  uint16_t d;  // fp16 scale
  uint16_t m;  // fp16 minimum
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_1) == 24);

// Q8_0: x = q * d.
struct BlockQ8_0 {
  uint16_t d;  // fp16 scale
  int8_t qs[kQK];
};
static_assert(sizeof(BlockQ8_0) == 34);

// Q8_1: x = q * d; s = d * sum(q), so a Q4_1 dot product can add m * s.
struct BlockQ8_1 {
  uint16_t d;  // fp16 scale
  uint16_t s;  // fp16 d * sum(qs)
  int8_t qs[kQK];
};
static_assert(sizeof(BlockQ8_1) == 36);

// K-quants: super-blocks of 256 weights (QK_K) of one row.
constexpr int kQK_K = 256;

// Q4_K: 8 sub-blocks of 32; sub-block j: x = d * sc[j] * q - dmin * m[j], q in
// [0, 15], sc and m 6-bit (see UnpackScaleMinK4). Quants come in 4 chunks of 64
// weights: qs[32 c + l] holds weight 64 c + l (low nibble, sub-block 2c) and
// weight 64 c + 32 + l (high nibble, sub-block 2c + 1).
struct BlockQ4_K {
  uint16_t d;     // fp16 scale of the sub-block scales
  uint16_t dmin;  // fp16 scale of the sub-block mins
  uint8_t scales[12];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ4_K) == 144);

// Q5_K: as Q4_K with q in [0, 31]; bit 4 of weight 64 c + l is bit 2c of qh[l],
// of weight 64 c + 32 + l bit 2c + 1 of qh[l].
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ5_K) == 176);

// Q6_K: 16 sub-blocks of 16; weight i: x = d * scales[i / 16] * (q - 32), q in
// [0, 63]. Two halves of 128 weights; in half h, for l in [0, 32):
//   weight 128h + l      low 4 bits: ql[64h + l] & 15,      high 2: qh[32h + l] bits 0-1
//   weight 128h + l + 32 low 4 bits: ql[64h + l + 32] & 15, high 2: qh[32h + l] bits 2-3
//   weight 128h + l + 64 low 4 bits: ql[64h + l] >> 4,      high 2: qh[32h + l] bits 4-5
//   weight 128h + l + 96 low 4 bits: ql[64h + l + 32] >> 4, high 2: qh[32h + l] bits 6-7
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];
  uint8_t qh[kQK_K / 4];
  int8_t scales[kQK_K / 16];
  uint16_t d;  // fp16, last in the block
};
static_assert(sizeof(BlockQ6_K) == 210);

// Q2_K: 16 sub-blocks of 16; weight i: x = d * (scales[i / 16] & 15) * q -
// dmin * (scales[i / 16] >> 4), q in [0, 3]. Two halves of 128 weights; in half
// h, weight 128h + 32p + l (p = 0..3, l < 32) is bits 2p, 2p+1 of qs[32h + l].
struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];  // low nibble: scale, high nibble: min
  uint8_t qs[kQK_K / 4];
  uint16_t d;     // fp16 scale of the scales
  uint16_t dmin;  // fp16 scale of the mins
};
static_assert(sizeof(BlockQ2_K) == 84);

// Q3_K: 16 sub-blocks of 16; weight i: x = d * (sc[i / 16] - 32) * (q - 4), q
// in [0, 7]: its low 2 bits as Q2_K's qs, its bit 2 in hmask: weight i at bit
// i / 32 of hmask[i % 32]. sc is 6 bits (see UnpackScaleQ3_K).
struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];
  uint8_t qs[kQK_K / 4];
  uint8_t scales[12];
  uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110);

// IQ4_NL: blocks of 32 on a non-linear grid: x = d * kIq4Grid[q], q in [0, 15];
// byte j holds weight j (low nibble) and weight j + 16 (high), as Q4_0.
struct BlockIQ4_NL {
  uint16_t d;
  uint8_t qs[16];
};
static_assert(sizeof(BlockIQ4_NL) == 18);

// IQ4_XS: super-blocks of 256, 8 sub-blocks of 32 with 6-bit scales: sub-block
// j is x = d * (ls_j - 32) * kIq4Grid[q], ls_j's low 4 bits in scales_l[j / 2]
// (low nibble for even j), its top 2 at bits 2j, 2j+1 of scales_h; qs as
// IQ4_NL's, 16 bytes per sub-block.
struct BlockIQ4_XS {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[kQK_K / 64];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockIQ4_XS) == 136);

// The IQ4 grid (the values of the format: llama.cpp's kvalues_iq4nl).
constexpr int8_t kIq4Grid[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                 1,    13,   25,  38,  53,  69,  89,  113};

inline int UnpackScaleIQ4_XS(const BlockIQ4_XS& b, int j) {
  return ((b.scales_l[j / 2] >> (4 * (j % 2))) & 0x0F) | (((b.scales_h >> (2 * j)) & 3) << 4);
}

// The 6-bit scale of sub-block j (0..15) of a Q3_K block, before the -32: the
// low 4 bits in the low (j < 8) or high (j >= 8) nibble of scales[j % 8], the
// top 2 bits at bit 2 (j / 4) of scales[8 + j % 4].
inline int UnpackScaleQ3_K(const uint8_t* scales, int j) {
  const int lo = j < 8 ? scales[j] & 0x0F : scales[j - 8] >> 4;
  return lo | (((scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4);
}

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K / Q5_K block. The 12
// bytes hold, for j < 4, sc in scales[j] bits 0-5 and m in scales[j + 4] bits
// 0-5; for j >= 4, the low 4 bits of sc and m in scales[j + 4] (low, high
// nibble) and their top 2 bits in bits 6-7 of scales[j - 4] and scales[j].
inline void UnpackScaleMinK4(const uint8_t* scales, int j, int* sc, int* m) {
  if (j < 4) {
    *sc = scales[j] & 63;
    *m = scales[j + 4] & 63;
  } else {
    *sc = (scales[j + 4] & 0x0F) | ((scales[j - 4] >> 6) << 4);
    *m = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
  }
}

}  // namespace ember
