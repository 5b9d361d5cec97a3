// The kernel table: one function pointer per kernel family, chosen once from
// the CPU's features (or EMBER_ISA) — dispatch high up, never inside loops.
#pragma once

#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/convert.h"
#include "ops/fgemm.h"
#include "ops/ggml_numerics.h"
#include "ops/norm.h"
#include "ops/qgemm.h"
#include "ops/rope.h"
#include "platform/cpu_features.h"
#include "platform/status.h"

namespace ember {

struct Kernels {
  Isa isa = Isa::kRef;                     // the ISA the table was built for
  QGemmFn qgemm[kPackedLayoutCount] = {};  // by PackedLayout: qgemm_for(w.layout)
  QuantizeActRowsFn quantize_act_rows = nullptr;  // the activations every QGemm reads
  FGemmFn fgemm = nullptr;                 // F32 / F16 / BF16 weights as stored
  FloatRowFn float_row = nullptr;          // one such row widened to f32
  // The rows fgemm's decode block reads at once: F16 / BF16 matrices are
  // grouped by it at load (FloatMatrix::group), so the block reads one stream.
  int64_t float_group = 1;
  // From how many threads fgemm beats the float libraries for F16 / BF16
  // weights at every batch size, prefill included (0: never; FloatLibraryFor,
  // ops/fgemm_library.h).
  int fgemm_widened_from_threads = 0;
  AttendHeadFn attend_head = nullptr;
  AttendHeadQ8Fn attend_head_q8 = nullptr;
  AttendHeadF32Fn attend_head_f32 = nullptr;  // --kv-type f32
  AttendBlockFn attend_block = nullptr;       // prefill: tokens x GQA heads per call
  // attend_block in stages, for one block split over threads (ops/attention.h)
  AttendScoresFn attend_scores = nullptr;
  AttendMaxFn attend_max = nullptr;
  AttendExpFn attend_exp = nullptr;
  AttendValuesFn attend_values = nullptr;
  SwiGluFn swiglu = nullptr;
  RmsNormFn rms_norm = nullptr;
  RopeApplyFn rope_apply = nullptr;  // every variant gives RopeApply_ref's bits
  GeGluFn geglu = nullptr;           // for Gemma-style feed-forwards; no model uses it yet
  Fp32ToFp16RowFn fp32_to_fp16_row = nullptr;  // f16 KV cache stores
  // --numerics ggml (ops/ggml_numerics.h)
  VecDotFn ggml_dot_q4_1 = nullptr;
  VecDotFn ggml_dot_q8_0 = nullptr;
  VecDotFn ggml_dot_q4_0 = nullptr;
  VecDotFn ggml_dot_q4_0_repacked = nullptr;
  float (*ggml_dot_f16)(const uint16_t* x, const uint16_t* y, int n) = nullptr;
  void (*ggml_scale_f16)(uint16_t* y, float v, int n) = nullptr;
  void (*ggml_mad_f16)(uint16_t* y, const uint16_t* x, float v, int n) = nullptr;
  GgmlAttendTiledBlockFn ggml_attend_tiled_block = nullptr;

  QGemmFn qgemm_for(PackedLayout layout) const { return qgemm[static_cast<int>(layout)]; }
  // Sets the four TileGroup layouts' kernels of one ISA.
  void SetQGemm(QGemmFn q4x16, QGemmFn q5x16, QGemmFn q8x16, QGemmFn iq4x16) {
    qgemm[static_cast<int>(PackedLayout::kQ4x16)] = q4x16;
    qgemm[static_cast<int>(PackedLayout::kQ5x16)] = q5x16;
    qgemm[static_cast<int>(PackedLayout::kQ8x16)] = q8x16;
    qgemm[static_cast<int>(PackedLayout::kIQ4x16)] = iq4x16;
  }
  // Sets the K layouts' kernels of one ISA.
  void SetQGemmK(QGemmFn q4kx16, QGemmFn q5kx16) {
    qgemm[static_cast<int>(PackedLayout::kQ4Kx16)] = q4kx16;
    qgemm[static_cast<int>(PackedLayout::kQ5Kx16)] = q5kx16;
  }
  // Sets the kernels of one ISA for the K layouts with scales per 16.
  void SetQGemmK16(QGemmFn q3kx16, QGemmFn q2kx16, QGemmFn q6kx16) {
    qgemm[static_cast<int>(PackedLayout::kQ3Kx16)] = q3kx16;
    qgemm[static_cast<int>(PackedLayout::kQ2Kx16)] = q2kx16;
    qgemm[static_cast<int>(PackedLayout::kQ6Kx16)] = q6kx16;
  }
};

// The table for `isa`: the best variant of each family at or below that level
// (ref for families without a variant there). The CPU must support `isa`.
Kernels KernelsFor(Isa isa);

// The process-wide table (EMBER_ISA or the best for this CPU); an error if
// EMBER_ISA is unknown or unsupported here.
Status ActiveKernels(const Kernels** out);

// The process-wide table, or the reference table when EMBER_ISA is invalid
// (callers validate once up front with ActiveKernels; Session::Create does).
const Kernels& Active();

// ISA levels for which this build has variants (for tests: sweep them all).
bool HasVariantsFor(Isa isa);

// Variants compiled per ISA (defined in the per-ISA files).
void AttendHead_avx2(const float* q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                     float scale, float* scores, float* out);
void AttendBlock_avx2(const float* const* q, const int64_t* n_first, const int64_t* n_visible,
                      int n_q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                      float scale, float* scratch, float* const* out);
void AttendScores_avx2(const float* qt, int n_q, const KvSpan* spans, int n_spans, size_t stride,
                       int head_dim, float scale, float* kf, float* st);
void AttendMax_avx2(const int64_t* n_first, const int64_t* n_visible, int n_q, int64_t r0,
                    int64_t r1, const float* st, float* mx);
void AttendExp_avx2(const int64_t* n_first, const int64_t* n_visible, int n_q, int64_t r0,
                    int64_t r1, const float* mx, float* st);
void AttendValues_avx2(const float* st, int n_q, const KvSpan* spans, int n_spans, size_t stride,
                       int d0, int d1, float* const* out);
// 16 queries per zmm; 8 or fewer, or head_dim % 32 != 0, go to AttendBlock_avx2.
void AttendBlock_avx512(const float* const* q, const int64_t* n_first, const int64_t* n_visible,
                        int n_q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                        float scale, float* scratch, float* const* out);
void AttendHeadF32_avx2(const float* q, const KvSpanF32* spans, int n_spans, size_t stride,
                        int head_dim, float scale, float* scores, float* out);
void AttendHeadQ8_avx2(const float* q, const KvSpanQ8* spans, int n_spans, size_t stride,
                       size_t scale_stride, int head_dim, float scale, float* scores, float* out);
void QuantizeActRows_avx2(const float* x, int64_t t0, int64_t t1, QuantizedActs* acts);
void QuantizeActRows_avx512(const float* x, int64_t t0, int64_t t1, QuantizedActs* acts);
void QGemmQ4x16_avx2(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*, int64_t);
void QGemmQ5x16_avx2(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*, int64_t);
void QGemmQ8x16_avx2(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*, int64_t);
void QGemmIQ4x16_avx2(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*, int64_t);
void QGemmQ4Kx16_avx2(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*, int64_t);
void QGemmQ5Kx16_avx2(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*, int64_t);
void QGemmQ3Kx16_avx2(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*, int64_t);
void QGemmQ2Kx16_avx2(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*, int64_t);
void QGemmQ6Kx16_avx2(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*, int64_t);
void QGemmQ4x16_avx512vnni(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                           int64_t);
void QGemmQ5x16_avx512vnni(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                           int64_t);
void QGemmQ8x16_avx512vnni(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                           int64_t);
void QGemmIQ4x16_avx512vnni(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                            int64_t);
void QGemmQ4Kx16_avx512vnni(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                            int64_t);
void QGemmQ5Kx16_avx512vnni(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                            int64_t);
void QGemmQ3Kx16_avx512vnni(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                            int64_t);
void QGemmQ2Kx16_avx512vnni(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                            int64_t);
void QGemmQ6Kx16_avx512vnni(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                            int64_t);
void QuantizeActRows_neon(const float* x, int64_t t0, int64_t t1, QuantizedActs* acts);
void AttendHead_neon(const float* q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                     float scale, float* scores, float* out);
void AttendHeadF32_neon(const float* q, const KvSpanF32* spans, int n_spans, size_t stride,
                        int head_dim, float scale, float* scores, float* out);
void AttendHeadQ8_neon(const float* q, const KvSpanQ8* spans, int n_spans, size_t stride,
                       size_t scale_stride, int head_dim, float scale, float* scores, float* out);
void AttendBlock_neon(const float* const* q, const int64_t* n_first, const int64_t* n_visible,
                      int n_q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                      float scale, float* scratch, float* const* out);
void AttendScores_neon(const float* qt, int n_q, const KvSpan* spans, int n_spans, size_t stride,
                       int head_dim, float scale, float* kf, float* st);
void AttendMax_neon(const int64_t* n_first, const int64_t* n_visible, int n_q, int64_t r0,
                    int64_t r1, const float* st, float* mx);
void AttendExp_neon(const int64_t* n_first, const int64_t* n_visible, int n_q, int64_t r0,
                    int64_t r1, const float* mx, float* st);
void AttendValues_neon(const float* st, int n_q, const KvSpan* spans, int n_spans, size_t stride,
                       int d0, int d1, float* const* out);
void QGemmQ4x16_neon(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*, int64_t);
void QGemmQ5x16_neon(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*, int64_t);
void QGemmQ8x16_neon(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*, int64_t);
void QGemmIQ4x16_neon(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*, int64_t);
void QGemmQ4Kx16_neon(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*, int64_t);
void QGemmQ5Kx16_neon(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*, int64_t);
void QGemmQ3Kx16_neon(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*, int64_t);
void QGemmQ2Kx16_neon(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*, int64_t);
void QGemmQ6Kx16_neon(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*, int64_t);
void QGemmQ4x16_neon_dot(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                         int64_t);
void QGemmQ5x16_neon_dot(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                         int64_t);
void QGemmQ8x16_neon_dot(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                         int64_t);
void QGemmIQ4x16_neon_dot(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                          int64_t);
void QGemmQ4Kx16_neon_dot(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                          int64_t);
void QGemmQ5Kx16_neon_dot(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                          int64_t);
void QGemmQ3Kx16_neon_dot(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                          int64_t);
void QGemmQ2Kx16_neon_dot(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                          int64_t);
void QGemmQ6Kx16_neon_dot(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                          int64_t);
void QGemmQ4x16_neon_i8mm(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                          int64_t);
void QGemmQ5x16_neon_i8mm(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                          int64_t);
void QGemmQ8x16_neon_i8mm(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                          int64_t);
void QGemmIQ4x16_neon_i8mm(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                           int64_t);
void QGemmQ4Kx16_neon_i8mm(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                           int64_t);
void QGemmQ5Kx16_neon_i8mm(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                           int64_t);
void QGemmQ3Kx16_neon_i8mm(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                           int64_t);
void QGemmQ2Kx16_neon_i8mm(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                           int64_t);
void QGemmQ6Kx16_neon_i8mm(const PackedMatrix&, int64_t, int64_t, const QuantizedActs&, float*,
                           int64_t);

}  // namespace ember
