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
