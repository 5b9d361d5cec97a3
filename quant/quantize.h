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
// d = max|x| / -8 (sign kept), as ggml's reference Q4_0 quantizer.
void QuantizeRowQ4_0(const float* x, BlockQ4_0* y, int64_t n);
void QuantizeRowQ4_1(const float* x, BlockQ4_1* y, int64_t n);

// Whether QuantizeRow supports `type` (Q8_0, Q8_1, Q4_0, Q4_1, F16, BF16, F32).
bool CanQuantize(GgmlType type);
// float x[n] -> one row of `type` at `dst`. Requires CanQuantize.
void QuantizeRow(GgmlType type, const float* x, void* dst, int64_t n);

// Whether DequantizeRow supports `type`.
bool CanDequantize(GgmlType type);
// One row of `n` elements of `type` at `src` -> float. Requires CanDequantize.
void DequantizeRow(GgmlType type, const void* src, float* dst, int64_t n);

}  // namespace ember
