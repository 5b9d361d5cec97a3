// GGML tensor types as they appear in GGUF files: the numeric ids and, per
// type, how many elements one block holds and how many bytes it takes.
// Formats are data: one row per type in kGgmlTypeTraits (ggml_type.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ember {

enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kIQ2_XXS = 16,
  kIQ2_XS = 17,
  kIQ3_XXS = 18,
  kIQ1_S = 19,
  kIQ4_NL = 20,
  kIQ3_S = 21,
  kIQ2_S = 22,
  kIQ4_XS = 23,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kIQ1_M = 29,
  kBF16 = 30,
  kTQ1_0 = 34,
  kTQ2_0 = 35,
  kMXFP4 = 39,
  // ember's native layouts (quant/packed.h) stored in a GGUF file by
  // `ember quantize --type native`; ids far from ggml's, which no other reader
  // knows. Sizes per 32 columns of a row equal Q4_0, Q4_1, Q8_0, Q5_0 and
  // Q5_1's (IQ4x16: 18, as IQ4_NL's), so
  // the usual row arithmetic gives the tensor size when the rows are a
  // multiple of 16 (the writer only packs such matrices); the bytes are
  // tile-major.
  kEmberQ4x16 = 0x4500,     // Q4x16, m = -8 d
  kEmberQ4x16Min = 0x4501,  // Q4x16 with per-row mins
  kEmberQ8x16 = 0x4502,     // Q8x16
  // Retired ids (RetiredNativeType says why): still named, so that a file
  // written before is refused with a message that says so
  // (runtime/model/model.cpp). Q5x16 / Q5Kx16 with each vector's 64 high bits
  // in a row (until 2026-11-27; the plane is bit-sliced now); Q6x16 (Q6_K with
  // an fp16 d per row and group of 32, 7 bits per weight).
  kEmberQ5x16Retired = 0x4503,
  kEmberQ5x16MinRetired = 0x4504,
  kEmberQ6x16Retired = 0x4505,
  kEmberIQ4x16 = 0x4506,  // IQ4x16 (IQ4_NL / IQ4_XS grid indices, a scale per 32)
  // The K layouts count in super-groups of 256 columns (148 / 180 bytes per
  // row: 4.625 / 5.625 bits per weight).
  kEmberQ4Kx16 = 0x4507,  // Q4Kx16 (Q4_K's quants, scales, mins, d and dmin)
  kEmberQ5Kx16Retired = 0x4508,
  kEmberQ3Kx16 = 0x4509,    // Q3Kx16 (Q3_K's quants, scales and d; 114 bytes per 256)
  kEmberQ2Kx16 = 0x450A,    // Q2Kx16 (Q2_K's quants, scales, mins, d and dmin; 84)
  kEmberQ6Kx16 = 0x450B,    // Q6Kx16 (Q6_K's quants, scales and d; 210, Q6_K's own size)
  kEmberQ5x16 = 0x450C,     // Q5x16, m = -16 d
  kEmberQ5x16Min = 0x450D,  // Q5x16 with per-row mins
  kEmberQ5Kx16 = 0x450E,    // Q5Kx16 (Q5_K's)
};

struct GgmlTypeTraits {
  GgmlType type;
  const char* name;
  uint32_t block_elems;  // elements per block (1 for plain types)
  uint32_t block_bytes;  // bytes per block
  // A retired native layout's id: why this ember no longer reads it (the
  // loader refuses such a tensor with it); nullptr for the rest.
  const char* retired = nullptr;
};

// Returns the traits of `id`, or nullptr for an id we do not know.
const GgmlTypeTraits* FindGgmlType(uint32_t id);
const char* GgmlTypeName(GgmlType type);

// Bytes of a row of `n` elements; requires n % block_elems == 0.
size_t GgmlRowBytes(GgmlType type, uint64_t n);

}  // namespace ember
