// GGUF block formats as data: one struct per format, its size checked.
// Each block holds 32 weights of one row (QK = 32).
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

}  // namespace ember
