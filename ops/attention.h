// Attention of one query head over the cached keys and values of its KV head.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ember {

// q:      [head_dim] f32 (rounded to f16 before the dot, as the cache is f16)
// k, v:   n_kv cached rows, row j at k + j * stride (f16 elements)
// scores: scratch of n_kv floats; out: [head_dim] f32
// out = sum_j softmax_j(scale * q·k_j) v_j
using AttendHeadFn = void (*)(const float* q, const uint16_t* k, const uint16_t* v,
                             size_t stride, int64_t n_kv, int head_dim, float scale,
                             float* scores, float* out);

void AttendHead_ref(const float* q, const uint16_t* k, const uint16_t* v, size_t stride,
                    int64_t n_kv, int head_dim, float scale, float* scores, float* out);

}  // namespace ember
