// Rotary position embedding, applied in place to one head vector.
#pragma once

#include <cstdint>
#include <vector>

namespace ember {

enum class RopeMode {
  kNormal,  // rotate adjacent pairs (x[2i], x[2i+1]): llama-style GGUFs
  kNeox,    // rotate (x[i], x[i + n_dims/2]): GPT-NeoX, Qwen, Gemma
};

// cos/sin of pos * base^(-2i/n_dims) [/ freq_factors[i]] for i < n_dims/2,
// for one position: cache[2i] = cos, cache[2i+1] = sin. The angle is advanced
// by repeated multiplication in float, as ggml does, so angles match it bit
// for bit. freq_factors may be nullptr (llama 3.x models ship rope_freqs).
void RopeCache(float* cache, int64_t pos, int n_dims, float freq_base, float freq_scale,
               const float* freq_factors);

// Rotates the first n_dims elements of x with a cache from RopeCache:
// (x0, x1) -> (x0 c - x1 s, x0 s + x1 c), each product rounded on its own.
// The rope sources are compiled with -ffp-contract=off -fno-tree-vectorize
// (cmake/EmberFlags.cmake) so that no compiler fuses a product into an fma:
// every variant, on every architecture, gives RopeApply_ref's bits.
void RopeApply_ref(float* x, const float* cache, int n_dims, RopeMode mode);
// The same for pairs [from, n_dims / 2) only (the SIMD variants' tails).
void RopeApplyFrom_ref(float* x, const float* cache, int n_dims, RopeMode mode, int from);
using RopeApplyFn = void (*)(float* x, const float* cache, int n_dims, RopeMode mode);
// AVX2 builds (x86-64) and AArch64 builds only: the same, bit for bit.
void RopeApply_avx2(float* x, const float* cache, int n_dims, RopeMode mode);
void RopeApply_neon(float* x, const float* cache, int n_dims, RopeMode mode);

}  // namespace ember
