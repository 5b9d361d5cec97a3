// Dot products of one weight row with one activation row, per weight format.
// The activation is quantized first to the format's partner (as ggml's
// vec_dot_type): Q4_0 and Q8_0 weights pair with Q8_0 activations, Q4_1 with
// Q8_1, F16 with F16, BF16 with BF16, F32 with F32. These are the scalar
// reference versions: the specification for the SIMD kernels.
#pragma once

#include <cstdint>

#include "quant/ggml_type.h"

namespace ember {

// n = elements in the row (a multiple of the block size).
float VecDotQ4_0Q8_0_ref(int64_t n, const void* w, const void* a);
float VecDotQ4_1Q8_1_ref(int64_t n, const void* w, const void* a);
float VecDotQ8_0Q8_0_ref(int64_t n, const void* w, const void* a);
float VecDotF16F16_ref(int64_t n, const void* w, const void* a);
float VecDotBf16Bf16_ref(int64_t n, const void* w, const void* a);
float VecDotF32F32_ref(int64_t n, const void* w, const void* a);

using VecDotFn = float (*)(int64_t n, const void* w, const void* a);

// The activation format that weights of `type` are multiplied against, and
// the dot product for the pair; nullptr when `type` has no matmul path.
struct VecDotPair {
  GgmlType activation_type;
  VecDotFn dot;
};
const VecDotPair* FindVecDot(GgmlType weight_type);

}  // namespace ember
