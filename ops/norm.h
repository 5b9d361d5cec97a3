// RMSNorm: y = x / sqrt(mean(x^2) + eps) * weight, over one row of n floats.
#pragma once

#include <cstdint>

namespace ember {

// The sum of squares is accumulated in double (as ggml does) so the result
// does not drift with the row length. `weight` may be nullptr (no scaling).
void RmsNorm_ref(const float* x, const float* weight, float* y, int64_t n, float eps);
using RmsNormFn = void (*)(const float* x, const float* weight, float* y, int64_t n, float eps);
// AVX2 builds only: the same, the sum in 8 lanes (within double rounding of _ref).
void RmsNorm_avx2(const float* x, const float* weight, float* y, int64_t n, float eps);
// AArch64 builds only: the same, the sum in 2-lane doubles (armhf keeps _ref:
// ARMv7 NEON has no double lanes).
void RmsNorm_neon(const float* x, const float* weight, float* y, int64_t n, float eps);

}  // namespace ember
