// llama.cpp's CPU arithmetic, reproduced bit for bit ("--numerics ggml").
//
// ember's own kernels compute the same functions in other orders (16-row
// tiles, int8 groups of their own, attention in blocks), so their logits differ
// from llama.cpp's in the last bits, and on a small model such differences
// move greedy choices at near-ties (docs/VALIDATION.md). These functions
// instead perform ggml's float operations in ggml's order, as llama.cpp
// (0c1e57098, the peer of bench/peer) compiles them natively for an x86-64
// CPU with AVX-512F/DQ: the same roundings, the same fused multiply-adds,
// the same lane structure of its SIMD code, written here as scalar loops with
// explicit std::fma (these sources are compiled with -ffp-contract=off, so the
// compiler adds no fusing of its own). libm's expf, cosf and sinf are called
// where ggml calls them. Only the paths llama.cpp takes for llama-architecture
// models with Q4_1 / Q8_0 weights, an F16 KV cache and flash attention (its
// default on CPU) are reproduced; scripts/validate.sh checks the result
// against the peer.
//
// The scalar functions are the specification; the dot products also have
// AVX2 variants (ops/ggml_numerics_avx2.cpp) that the tests hold to their bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ops/attention.h"
#include "ops/rope.h"
#include "ops/vec_dot.h"
#include "quant/blocks.h"

namespace ember {

// --- matrix products (ggml_compute_forward_mul_mat's vec_dot path) -----------

// Activations, as ggml's x86 quantize_row_q8_0 / q8_1: per block of 32,
// amax over the block, d = amax / 127 (stored as fp16), q = round-half-even
// (x * (127 / amax)); Q8_1 also stores s = fp16(d * sum(q)).
void GgmlQuantizeRowQ8_0(const float* x, BlockQ8_0* y, int64_t n);
void GgmlQuantizeRowQ8_1(const float* x, BlockQ8_1* y, int64_t n);

// Dot products of one weight row with one activation row, as ggml's x86
// AVX2 kernels: eight float lanes, lane j holding the integer sum of block
// columns 4j..4j+3; per block acc[j] = fma(d_w * d_a, float(lane sum), acc[j]),
// then the lanes summed in hsum order ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)).
// Q4_1 adds the blocks' m * s in a separate float sum (fused multiply-adds)
// at the end.
float GgmlVecDotQ4_1Q8_1_ref(int64_t n, const void* w, const void* a);
float GgmlVecDotQ8_0Q8_0_ref(int64_t n, const void* w, const void* a);
float GgmlVecDotQ4_0Q8_0_ref(int64_t n, const void* w, const void* a);
// Q4_0 matrices llama.cpp repacks at load on x86 (into its 8-row interleaved
// q4_0_8x8 layout: every matrix of 8k rows, a tied output included): its
// GEMV/GEMM kernels sum each block's 32 products as one integer and
// accumulate acc = fma(float(sum), d_w * d_a, acc), block after block.
float GgmlVecDotQ4_0Q8_0Repacked_ref(int64_t n, const void* w, const void* a);
// x86-64 builds: the same with AVX2 and FMA, bit for bit.
float GgmlVecDotQ4_1Q8_1_avx2(int64_t n, const void* w, const void* a);
float GgmlVecDotQ8_0Q8_0_avx2(int64_t n, const void* w, const void* a);
float GgmlVecDotQ4_0Q8_0_avx2(int64_t n, const void* w, const void* a);
float GgmlVecDotQ4_0Q8_0Repacked_avx2(int64_t n, const void* w, const void* a);
// ... and with AVX-512 VNNI (vpdpbusd on 256-bit vectors).
float GgmlVecDotQ4_1Q8_1_avx512vnni(int64_t n, const void* w, const void* a);
float GgmlVecDotQ8_0Q8_0_avx512vnni(int64_t n, const void* w, const void* a);
float GgmlVecDotQ4_0Q8_0_avx512vnni(int64_t n, const void* w, const void* a);
float GgmlVecDotQ4_0Q8_0Repacked_avx512vnni(int64_t n, const void* w, const void* a);

// The pair for a weight type, with ggml's activation quantizer and the active
// kernel table's dot product (ops/kernels.h); `repacked`: the matrix is one
// llama.cpp repacks (Q4_0, see above). nullptr for types whose llama.cpp path
// is not reproduced (K-quants go through its tiled kernels, F16/F32 through
// others).
struct GgmlVecDotPair {
  GgmlType activation_type;
  void (*quantize)(const float* x, void* y, int64_t n);
  VecDotFn dot;
};
const GgmlVecDotPair* FindGgmlVecDot(GgmlType weight_type, bool repacked = false);

// --- element-wise operations -------------------------------------------------

// ggml_v_expf for AVX-512 (a polynomial after range reduction, scaled with
// vscalefps), one lane. Within 2 ulp of expf; inf above ~88.7, 0 below ~-104.
float GgmlExpAvx512(float x);

// gate[i] = silu(gate[i]) * up[i] as ggml_vec_swiglu_f32: 16 lanes at a time
// x / (1 + GgmlExpAvx512(-x)), the n % 16 tail with libm's expf.
void GgmlSwiGlu(float* gate, const float* up, int64_t n);

// RoPE rotation of one head in place with a RopeCache (ops/rope.h), as
// ggml's rotate_pairs is compiled: (x0, x1) -> (fma(x0, c, -(x1 s)),
// fma(x0, s, x1 c)), the same for both pair layouts.
void GgmlRopeApply(float* x, const float* cache, int n_dims, RopeMode mode);

// --- attention (ggml_compute_forward_flash_attn_ext_f16) ----------------------

// Every attention function below takes one query of one head against the
// first n_visible rows of its KV head in `spans` (context order, f16; row j
// of the context is llama.cpp's KV cell j, as for one sequence from an empty
// cache) and writes out: [head_dim] f32.

// Flash attention's one-row path (batches of fewer than kGgmlTileQ tokens):
// the query rounded to f16, each score an f16 dot product (four 16-lane
// accumulators), an online softmax with libm's expf, the weighted values
// accumulated in f16.
void GgmlAttendOneRow(const float* q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                      float scale, int64_t n_visible, float* out);

// The tiled path llama.cpp takes when a batch holds at least kGgmlTileQ
// tokens: the query in f32, cells in tiles of kGgmlTileKv from cell 0, each
// score a chain of fused multiply-adds, a softmax per tile with
// GgmlExpAvx512 (sums in double), the values accumulated in f32.
constexpr int kGgmlTileQ = 64;
constexpr int kGgmlTileKv = 64;
void GgmlAttendTiled(const float* q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                     float scale, int64_t n_visible, float* out);

// The primitives of the one-row form, as ggml's vec.h has them for f16
// (AVX-512F build): a dot product of two f16 rows (four 16-lane accumulators
// over steps of 64, combined (0 + 2) + (1 + 3), reduced as GCC expands
// _mm512_reduce_add_ps, widened to double, the n % 64 tail added in double);
// y = f16(y * v); y = f16(fma(x, v, y)). The attention forms take them from the
// kernel table (ops/kernels.h); the variants give _ref's bits.
float GgmlDotF16_ref(const uint16_t* x, const uint16_t* y, int n);
void GgmlScaleF16_ref(uint16_t* y, float v, int n);
void GgmlMadF16_ref(uint16_t* y, const uint16_t* x, float v, int n);
// x86-64 builds, AVX-512 (F, BW, VL): the same bits.
float GgmlDotF16_avx512(const uint16_t* x, const uint16_t* y, int n);
void GgmlScaleF16_avx512(uint16_t* y, float v, int n);
void GgmlMadF16_avx512(uint16_t* y, const uint16_t* x, float v, int n);

// GgmlAttendTiled for n_q queries of one KV head at once (tokens x the heads of
// a GQA group in a batch of kGgmlTileQ or more tokens), query m seeing the
// first n_visible[m] rows of `spans`: each tile's keys and values are converted
// once for all of them, as llama.cpp converts them once per tile of queries.
// Every query's result is GgmlAttendTiled's, bit for bit. scratch:
// GgmlTiledScratch(head_dim, n_q) floats.
inline int64_t GgmlTiledScratch(int head_dim, int n_q) {
  return 2 * int64_t{kGgmlTileKv} * head_dim + kGgmlTileKv + 2 * int64_t{n_q};
}
using GgmlAttendTiledBlockFn = void (*)(const float* const* q, const int64_t* n_visible, int n_q,
                                        const KvSpan* spans, int n_spans, size_t stride,
                                        int head_dim, float scale, float* scratch,
                                        float* const* out);
void GgmlAttendTiledBlock_ref(const float* const* q, const int64_t* n_visible, int n_q,
                              const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                              float scale, float* scratch, float* const* out);
// x86-64 builds, AVX-512 (F, BW, VL, DQ): the same bits.
void GgmlAttendTiledBlock_avx512(const float* const* q, const int64_t* n_visible, int n_q,
                                 const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                                 float scale, float* scratch, float* const* out);

// A single-token batch whose KV view (n_kv cells, llama.cpp's padded count,
// see GgmlKvCells) reaches kGgmlSplitKvMin: the cells are split into
// n_threads chunks of ceil(n_kv / n_threads), each chunk's one-row result is
// kept unnormalized, and the chunks are combined in order.
constexpr int64_t kGgmlSplitKvMin = 512;
void GgmlAttendSplit(const float* q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                     float scale, int64_t n_visible, int64_t n_kv, int n_threads, float* out);

// llama.cpp's KV view for a batch whose highest cell is n_used - 1: n_used
// rounded up to a multiple of 256, at least 256 (its cache has a multiple of
// 256 cells, so the view never exceeds it).
int64_t GgmlKvCells(int64_t n_used);

}  // namespace ember
