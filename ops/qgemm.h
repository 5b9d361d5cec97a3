// Quantized GEMM/GEMV over ember's native layouts (quant/packed.h):
//   Y[m, n] = X[m, k] · W[n, k]^T
// X is quantized once per call to int8 groups of 32 (QuantizedActs); each
// kernel multiplies integer groups exactly (int32 sums) and applies the float
// scales once per group. Every output element is computed by one thread in a
// fixed order, so results do not depend on the thread count, and every ISA
// variant computes the same integer sums as its _ref twin.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "platform/cpu_features.h"
#include "quant/packed.h"

namespace ember {

// Activations [m, k] as int8 groups of 32: x ≈ q * d, with the group sums of q
// (the term that a weight's min or offset multiplies).
struct QuantizedActs {
  int64_t m = 0, k = 0;
  std::vector<int8_t> q;        // [m, k], 64-byte aligned rows not required
  std::vector<float> d;         // [m, k / 32]
  std::vector<int32_t> qsum;    // [m, k / 32] sum(q): times a layout's offset (Q4_0's -8,
                                // Q5_0's -16), taken off the integer sum exactly
  std::vector<float> sm;        // [m, k / 32] (max|x| / 127) * sum(q) rounded to fp16:
                                // multiplies stored mins, as ggml's Q8_1 blocks carry it
  std::vector<int32_t> qsum16;  // [m, k / 16] sum(q) per 16 columns: times Q6_K's offset
                                // -32 (Q3_K's -4, Q2_K's mins) inside each of its scales per 16
  std::vector<float> dqsum;     // [m, k / 32] d * float(qsum), exact (|qsum| < 2^12 times
                                // an fp16 value): what the K layouts' 6-bit mins multiply

  // Sets m and k and sizes the arrays for them (k a multiple of 32).
  void Resize(int64_t rows, int64_t cols) {
    m = rows;
    k = cols;
    q.resize(static_cast<size_t>(m * k));
    d.resize(static_cast<size_t>(m * k / 32));
    qsum.resize(static_cast<size_t>(m * k / 32));
    sm.resize(static_cast<size_t>(m * k / 32));
    qsum16.resize(static_cast<size_t>(m * k / 16));
    dqsum.resize(static_cast<size_t>(m * k / 32));
  }

  const int8_t* q_row(int64_t t) const { return q.data() + t * k; }
  const float* d_row(int64_t t) const { return d.data() + t * (k / 32); }
  const int32_t* qsum_row(int64_t t) const { return qsum.data() + t * (k / 32); }
  const float* sm_row(int64_t t) const { return sm.data() + t * (k / 32); }
  const int32_t* qsum16_row(int64_t t) const { return qsum16.data() + t * (k / 16); }
  const float* dqsum_row(int64_t t) const { return dqsum.data() + t * (k / 32); }

  // Group g of row t when it holds a NaN or an infinity, which have no int8
  // image: q and the sums 0, the scales NaN, so that every product it enters
  // is NaN (as in float arithmetic), never a finite number that hides it.
  void SetNonFinite(int64_t t, int64_t g) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::fill_n(q.data() + t * k + g * 32, 32, int8_t{0});
    d[t * (k / 32) + g] = nan;
    qsum[t * (k / 32) + g] = 0;
    sm[t * (k / 32) + g] = nan;
    qsum16[t * (k / 16) + 2 * g] = 0;
    qsum16[t * (k / 16) + 2 * g + 1] = 0;
    dqsum[t * (k / 32) + g] = nan;
  }
};

// x [m, k] floats -> acts. Per group: q = round-to-nearest-even(x * (127 / max|x|)),
// d = max|x| / 127 rounded to fp16 (as ggml stores it), qsum = sum(q),
// sm = fp16((max|x| / 127) * sum(q)), qsum16 = sum(q) of each 16 columns, dqsum = d *
// float(qsum). These are
// exactly ggml's Q8_0 / Q8_1 activations, so the integer sums and scales equal llama.cpp's.
// A group holding a NaN or an infinity is QuantizedActs::SetNonFinite's.
void QuantizeActs_ref(const float* x, int64_t m, int64_t k, QuantizedActs* acts);
// The same for tokens [t0, t1) of x [acts->m, acts->k] into acts, already
// sized (QuantizedActs::Resize): a token's bytes depend on its row of x
// alone, so threads quantize the tokens of a batch apart (ops/matmul.cpp).
void QuantizeActRows_ref(const float* x, int64_t t0, int64_t t1, QuantizedActs* acts);
using QuantizeActRowsFn = void (*)(const float* x, int64_t t0, int64_t t1, QuantizedActs* acts);
// x [m, k] into acts through `rows` (a kernel table's quantize_act_rows).
inline void QuantizeActs(QuantizeActRowsFn rows, const float* x, int64_t m, int64_t k,
                         QuantizedActs* acts) {
  acts->Resize(m, k);
  rows(x, 0, m, acts);
}

// Computes output rows [16 * tile_begin, min(16 * tile_end, n)) for all m tokens:
// y[t * ldy + row]. W's layout must match the kernel's.
using QGemmFn = void (*)(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                         const QuantizedActs& a, float* y, int64_t ldy);

void QGemmQ4x16_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                    const QuantizedActs& a, float* y, int64_t ldy);
void QGemmQ5x16_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                    const QuantizedActs& a, float* y, int64_t ldy);
void QGemmQ8x16_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                    const QuantizedActs& a, float* y, int64_t ldy);
void QGemmIQ4x16_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                     const QuantizedActs& a, float* y, int64_t ldy);
void QGemmQ4Kx16_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                     const QuantizedActs& a, float* y, int64_t ldy);
void QGemmQ5Kx16_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                     const QuantizedActs& a, float* y, int64_t ldy);
void QGemmQ3Kx16_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                     const QuantizedActs& a, float* y, int64_t ldy);
void QGemmQ2Kx16_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                     const QuantizedActs& a, float* y, int64_t ldy);
void QGemmQ6Kx16_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                     const QuantizedActs& a, float* y, int64_t ldy);

// Whether the AVX-512 VNNI kernels prefetch the weights in software (8 KiB
// ahead) when they multiply one token (decode). It paid on the Zen 5 host
// where it was introduced (Q4_0 from memory 39 -> 42-45 GB/s), but one token
// on a Zen 4 core reads more with the hardware prefetchers alone: one thread,
// a 256 MiB matrix with k = 2048, 3 alternating rounds, GB/s with -> without:
// Q6_K 22-24 -> 28-29, Q5_K 20-21 -> 27-29, Q5_0 27-29 -> 32-34, Q4_K 27-29
// -> 28-30, Q8_0 28-31 -> 33 (docs/PERFORMANCE.md "Stop 50"). So do two
// tokens of every layout but Q3_K and Q2_K (UnprefetchedTokens in
// ops/qgemm_avx512vnni_common.h; the K layouts then prefetch their
// activations instead); larger batches keep it everywhere (Q4_0 at
// 8 tokens: 163 GMAC/s with it, 105 without).
// The results are the same bits either way. EMBER_DECODE_PREFETCH=on|off
// overrides the CPU's default (to measure it on another core).
bool OneTokenPrefetch();
bool OneTokenPrefetchFor(const CpuFeatures& cpu);  // the default for a CPU
// Tests: 1 forces the prefetch on, 0 off, -1 returns to the default (the
// environment's or the CPU's), so both paths are tested on every host.
void ForceOneTokenPrefetch(int mode);

}  // namespace ember
