// IQ4_NL and IQ4_XS blocks from floats, for tests only: ember reads these
// types but does not write them (no llama-quantize mix uses them yet), and
// the tests need valid blocks with realistic values. Plain round-to-nearest
// on the grid with the scale from each block's largest magnitude (not
// llama.cpp's search over scales): the kernel and repack tests care that the
// blocks are valid and varied, not that they are optimal.
//
// Header-only so that both test binaries (the kernel tests, which link only
// the kernel library, and the runtime tests' model builder) can use it.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/quantize.h"

namespace ember::test {

// The grid index whose value is nearest to v (the lower one on a tie).
inline uint8_t NearestIq4(float v) {
  uint8_t best = 0;
  for (uint8_t i = 1; i < 16; ++i) {
    if (std::fabs(v - kIq4Grid[i]) < std::fabs(v - kIq4Grid[best])) best = i;
  }
  return best;
}

// 32 values at x -> 16 bytes of indices (byte j: value j low, j + 16 high),
// on the grid scaled by d (d == 0: index 8, grid value 1, times 0).
inline void Iq4Nibbles(const float* x, float d, uint8_t* qs) {
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < 16; ++j) {
    const uint8_t lo = d != 0.0f ? NearestIq4(x[j] * id) : 8;
    const uint8_t hi = d != 0.0f ? NearestIq4(x[j + 16] * id) : 8;
    qs[j] = static_cast<uint8_t>(lo | (hi << 4));
  }
}

// IQ4_NL: d maps the block's value of largest magnitude to grid[0] = -127.
inline void QuantizeRowIQ4_NL(const float* x, BlockIQ4_NL* y, int64_t n) {
  for (int64_t b = 0; b < n / 32; ++b, x += 32) {
    y[b].d = Fp32ToFp16(SignedAbsMax(x, 32) / static_cast<float>(kIq4Grid[0]));
    Iq4Nibbles(x, Fp16ToFp32(y[b].d), y[b].qs);
  }
}

// IQ4_XS: each sub-block's ideal scale (as IQ4_NL's d) becomes a 6-bit
// ls - 32 in [-32, 31] times the super-block's d, which maps the sub-block
// scale of largest magnitude to -32.
inline void QuantizeRowIQ4_XS(const float* x, BlockIQ4_XS* y, int64_t n) {
  for (int64_t b = 0; b < n / 256; ++b, x += 256) {
    float scales[8], max_scale = 0.0f;
    for (int j = 0; j < 8; ++j) {
      scales[j] = SignedAbsMax(x + 32 * j, 32) / static_cast<float>(kIq4Grid[0]);
      if (std::fabs(scales[j]) > std::fabs(max_scale)) max_scale = scales[j];
    }
    BlockIQ4_XS& o = y[b];
    std::memset(&o, 0, sizeof(o));
    o.d = Fp32ToFp16(-max_scale / 32.0f);
    const float d = Fp16ToFp32(o.d);
    for (int j = 0; j < 8; ++j) {
      int l = d != 0.0f ? static_cast<int>(std::lround(scales[j] / d)) : 0;
      l = l < -32 ? -32 : (l > 31 ? 31 : l);
      const int ls = l + 32;
      o.scales_l[j / 2] = static_cast<uint8_t>(o.scales_l[j / 2] | ((ls & 0x0F) << (4 * (j % 2))));
      o.scales_h = static_cast<uint16_t>(o.scales_h | ((ls >> 4) << (2 * j)));
      Iq4Nibbles(x + 32 * j, d * static_cast<float>(l), o.qs + 16 * j);
    }
  }
}

// QuantizeRow, or the plain IQ4 quantizers above for IQ4_NL / IQ4_XS.
inline void QuantizeTestRow(GgmlType type, const float* x, void* dst, int64_t n) {
  if (type == GgmlType::kIQ4_NL) return QuantizeRowIQ4_NL(x, static_cast<BlockIQ4_NL*>(dst), n);
  if (type == GgmlType::kIQ4_XS) return QuantizeRowIQ4_XS(x, static_cast<BlockIQ4_XS*>(dst), n);
  QuantizeRow(type, x, dst, n);
}

}  // namespace ember::test
