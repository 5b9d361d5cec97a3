// Rows of f32 rounded to f16: the stores into an f16 KV cache, one token's
// keys and values per layer (n = n_head_kv * head_dim).
//
// y[i] = Fp32ToFp16(x[i]) (quant/fp16.h): round to nearest even, overflow to
// inf, subnormal results kept; a NaN becomes the quiet NaN sign | 0x7E00.
// Every variant gives these bits (the instructions keep part of a NaN's
// payload; the variants replace it).
#pragma once

#include <cstdint>

namespace ember {

void Fp32ToFp16Row_ref(const float* x, uint16_t* y, int64_t n);
using Fp32ToFp16RowFn = void (*)(const float* x, uint16_t* y, int64_t n);
// x86-64 builds only: F16C (vcvtps2ph), 8 per instruction.
void Fp32ToFp16Row_avx2(const float* x, uint16_t* y, int64_t n);
// AArch64 builds only: fcvtn, 4 per instruction (armhf keeps _ref: ARMv7 NEON
// converts to f16 only with the fp16 extension).
void Fp32ToFp16Row_neon(const float* x, uint16_t* y, int64_t n);

}  // namespace ember
