// What llama.cpp's file quantizers share and ember's must do the same way
// for a file to be llama-quantize's bytes (quantize_kquant.cpp,
// quantize_iq4.cpp; compiled with -ffp-contract=off, cmake/EmberFlags.cmake).
#pragma once

#include <cstdint>
#include <cstring>

namespace ember {

// Round half to even, for |v| < 2^22 (llama.cpp's nearest_int).
inline int NearestInt(float v) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: no fraction bits left
  const float shifted = v + kMagic;
  int32_t bits;
  std::memcpy(&bits, &shifted, 4);
  return (bits & 0x007FFFFF) - 0x00400000;
}

// Below this a (sub-)block counts as all zeros (ggml's GROUP_MAX_EPS).
inline constexpr float kGroupMaxEps = 1e-15f;

}  // namespace ember
