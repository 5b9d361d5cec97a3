// Row conversions between float and the block formats (reference code: the
// specification that faster variants are tested against).
#pragma once

#include <cstddef>
#include <cstdint>

#include "platform/status.h"
#include "quant/blocks.h"
#include "quant/ggml_type.h"

namespace ember {

// x[n] -> blocks; n % 32 == 0. Scales as ggml computes them: d = max|x| / 127.
void QuantizeRowQ8_0(const float* x, BlockQ8_0* y, int64_t n);
void QuantizeRowQ8_1(const float* x, BlockQ8_1* y, int64_t n);
// One symmetric int8 group of any length n with an f32 scale (the q8 KV cache:
// one group per token and head): *scale = max|x| / 127, q = round(x / scale).
void QuantizeGroupI8(const float* x, int8_t* q, float* scale, int64_t n);
// d = max|x| / -8 (sign kept), as ggml's reference Q4_0 quantizer.
void QuantizeRowQ4_0(const float* x, BlockQ4_0* y, int64_t n);
void QuantizeRowQ4_1(const float* x, BlockQ4_1* y, int64_t n);
// d = max|x| / -16 (sign kept), as Q4_0; Q5_1 as Q4_1 with 31 steps.
void QuantizeRowQ5_0(const float* x, BlockQ5_0* y, int64_t n);
void QuantizeRowQ5_1(const float* x, BlockQ5_1* y, int64_t n);

// K-quants (quantize_kquant.cpp), n % 256 == 0: llama.cpp's error-minimizing
// searches without an importance matrix, in its float order (the same bytes).
void QuantizeRowQ4_K(const float* x, BlockQ4_K* y, int64_t n);
void QuantizeRowQ5_K(const float* x, BlockQ5_K* y, int64_t n);
void QuantizeRowQ6_K(const float* x, BlockQ6_K* y, int64_t n);
void QuantizeRowQ2_K(const float* x, BlockQ2_K* y, int64_t n);
void QuantizeRowQ3_K(const float* x, BlockQ3_K* y, int64_t n);
// IQ4 (quantize_iq4.cpp): llama.cpp's scale search without an importance
// matrix, the same bytes. IQ4_NL n % 32 == 0, IQ4_XS n % 256 == 0.
void QuantizeRowIQ4_NL(const float* x, BlockIQ4_NL* y, int64_t n);
void QuantizeRowIQ4_XS(const float* x, BlockIQ4_XS* y, int64_t n);

// Block -> float, with ggml's float operations in ggml's order (so the values
// are the GGUF dequantized values, bit for bit).
void DequantizeRowQ5_0(const BlockQ5_0* x, float* y, int64_t n);
void DequantizeRowQ5_1(const BlockQ5_1* x, float* y, int64_t n);
void DequantizeRowQ4_K(const BlockQ4_K* x, float* y, int64_t n);
void DequantizeRowQ5_K(const BlockQ5_K* x, float* y, int64_t n);
void DequantizeRowQ6_K(const BlockQ6_K* x, float* y, int64_t n);
void DequantizeRowQ2_K(const BlockQ2_K* x, float* y, int64_t n);
void DequantizeRowQ3_K(const BlockQ3_K* x, float* y, int64_t n);
void DequantizeRowIQ4_NL(const BlockIQ4_NL* x, float* y, int64_t n);
void DequantizeRowIQ4_XS(const BlockIQ4_XS* x, float* y, int64_t n);

// The value of largest magnitude in x[0, n), sign kept (the first one on a
// tie), as llama.cpp's quantizers pick the value a block's scale maps.
float SignedAbsMax(const float* x, int n);

// Whether QuantizeRow supports `type` (F32, F16, BF16, Q8_0, Q8_1, Q4_0, Q4_1,
// Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS).
bool CanQuantize(GgmlType type);
// float x[n] -> one row of `type` at `dst`. Requires CanQuantize.
void QuantizeRow(GgmlType type, const float* x, void* dst, int64_t n);

// Whether DequantizeRow supports `type` (as QuantizeRow, without Q8_1).
bool CanDequantize(GgmlType type);
// One row of `n` elements of `type` at `src` -> float. Requires CanDequantize.
void DequantizeRow(GgmlType type, const void* src, float* dst, int64_t n);

}  // namespace ember
