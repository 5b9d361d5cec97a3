#include "ops/kernels.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace ember {

bool OneTokenPrefetchFor(const CpuFeatures& cpu) {
  // AMD family 0x19 with AVX-512 is Zen 4 (Zen 3, the same family, has none
  // and runs the AVX2 kernels, which keep their prefetch: it paid there).
  return !(cpu.amd && cpu.family == 0x19);
}

namespace {
std::atomic<int> forced_prefetch{-1};
}  // namespace

bool OneTokenPrefetch() {
  static const bool by_default = [] {
    const char* env = std::getenv("EMBER_DECODE_PREFETCH");
    if (env != nullptr && std::strcmp(env, "on") == 0) return true;
    if (env != nullptr && std::strcmp(env, "off") == 0) return false;
    return OneTokenPrefetchFor(HostCpu());
  }();
  const int forced = forced_prefetch.load(std::memory_order_relaxed);
  return forced < 0 ? by_default : forced != 0;
}

void ForceOneTokenPrefetch(int mode) {
  forced_prefetch.store(mode < 0 ? -1 : mode != 0 ? 1 : 0, std::memory_order_relaxed);
}

Kernels KernelsFor(Isa isa) {
  Kernels k;
  k.isa = isa;
  k.SetQGemm(QGemmQ4x16_ref, QGemmQ5x16_ref, QGemmQ8x16_ref, QGemmIQ4x16_ref);
  k.SetQGemmK(QGemmQ4Kx16_ref, QGemmQ5Kx16_ref);
  k.SetQGemmK16(QGemmQ3Kx16_ref, QGemmQ2Kx16_ref, QGemmQ6Kx16_ref);
  k.quantize_act_rows = QuantizeActRows_ref;
  k.fgemm = FGemm_ref;
  k.float_row = FloatRow;
  k.attend_head = AttendHead_ref;
  k.attend_head_q8 = AttendHeadQ8_ref;
  k.attend_head_f32 = AttendHeadF32_ref;
  k.attend_block = AttendBlock_ref;
  k.attend_scores = AttendScores_ref;
  k.attend_max = AttendMax_ref;
  k.attend_exp = AttendExp_ref;
  k.attend_values = AttendValues_ref;
  k.swiglu = SwiGlu_ref;
  k.rms_norm = RmsNorm_ref;
  k.rope_apply = RopeApply_ref;
  k.geglu = GeGlu_ref;
  k.fp32_to_fp16_row = Fp32ToFp16Row_ref;
  k.ggml_dot_q4_1 = GgmlVecDotQ4_1Q8_1_ref;
  k.ggml_dot_q8_0 = GgmlVecDotQ8_0Q8_0_ref;
  k.ggml_dot_q4_0 = GgmlVecDotQ4_0Q8_0_ref;
  k.ggml_dot_q4_0_repacked = GgmlVecDotQ4_0Q8_0Repacked_ref;
  k.ggml_dot_f16 = GgmlDotF16_ref;
  k.ggml_scale_f16 = GgmlScaleF16_ref;
  k.ggml_mad_f16 = GgmlMadF16_ref;
  k.ggml_attend_tiled_block = GgmlAttendTiledBlock_ref;
#if defined(__x86_64__)
  if (isa != Isa::kRef) {  // AVX2 is in every x86 level above ref
    k.ggml_dot_q4_1 = GgmlVecDotQ4_1Q8_1_avx2;
    k.ggml_dot_q8_0 = GgmlVecDotQ8_0Q8_0_avx2;
    k.ggml_dot_q4_0 = GgmlVecDotQ4_0Q8_0_avx2;
    k.ggml_dot_q4_0_repacked = GgmlVecDotQ4_0Q8_0Repacked_avx2;
    k.attend_head = AttendHead_avx2;
    k.attend_head_q8 = AttendHeadQ8_avx2;
    k.attend_head_f32 = AttendHeadF32_avx2;
    k.attend_block = AttendBlock_avx2;
    k.attend_scores = AttendScores_avx2;
    k.attend_max = AttendMax_avx2;
    k.attend_exp = AttendExp_avx2;
    k.attend_values = AttendValues_avx2;
    k.quantize_act_rows = QuantizeActRows_avx2;
    k.fgemm = FGemm_avx2;
    k.float_row = FloatRow_avx2;
    k.float_group = kFloatGroupAvx2;
    k.swiglu = SwiGlu_avx2;
    k.rms_norm = RmsNorm_avx2;
    k.rope_apply = RopeApply_avx2;
    k.geglu = GeGlu_avx2;
    k.fp32_to_fp16_row = Fp32ToFp16Row_avx2;
  }
  if (isa == Isa::kAvx512 || isa == Isa::kAvx512Vnni) {
    k.attend_block = AttendBlock_avx512;
    k.quantize_act_rows = QuantizeActRows_avx512;
    k.fgemm = FGemm_avx512;
    k.float_group = kFloatGroupAvx512;
    k.fgemm_widened_from_threads = 2;
    k.ggml_dot_f16 = GgmlDotF16_avx512;
    k.ggml_scale_f16 = GgmlScaleF16_avx512;
    k.ggml_mad_f16 = GgmlMadF16_avx512;
    k.ggml_attend_tiled_block = GgmlAttendTiledBlock_avx512;
  }
  if (isa == Isa::kAvx2 || isa == Isa::kAvx512) {
    // Plain AVX-512 (without VNNI) uses the AVX2 kernels: same layout, and
    // without dpbusd the 512-bit maddubs path gains little over it.
    k.SetQGemm(QGemmQ4x16_avx2, QGemmQ5x16_avx2, QGemmQ8x16_avx2, QGemmIQ4x16_avx2);
    k.SetQGemmK(QGemmQ4Kx16_avx2, QGemmQ5Kx16_avx2);
    k.SetQGemmK16(QGemmQ3Kx16_avx2, QGemmQ2Kx16_avx2, QGemmQ6Kx16_avx2);
  } else if (isa == Isa::kAvx512Vnni) {
    k.SetQGemm(QGemmQ4x16_avx512vnni, QGemmQ5x16_avx512vnni, QGemmQ8x16_avx512vnni,
               QGemmIQ4x16_avx512vnni);
    k.SetQGemmK(QGemmQ4Kx16_avx512vnni, QGemmQ5Kx16_avx512vnni);
    k.SetQGemmK16(QGemmQ3Kx16_avx512vnni, QGemmQ2Kx16_avx512vnni, QGemmQ6Kx16_avx512vnni);
    k.ggml_dot_q4_1 = GgmlVecDotQ4_1Q8_1_avx512vnni;
    k.ggml_dot_q8_0 = GgmlVecDotQ8_0Q8_0_avx512vnni;
    k.ggml_dot_q4_0 = GgmlVecDotQ4_0Q8_0_avx512vnni;
    k.ggml_dot_q4_0_repacked = GgmlVecDotQ4_0Q8_0Repacked_avx512vnni;
  }
#elif defined(__aarch64__) || (defined(__arm__) && defined(__ARM_NEON))
  if (isa != Isa::kRef) {
    // On ARMv7, NEON flushes subnormals to zero: equal to _ref wherever no
    // product or partial sum is subnormal (ops/fgemm.h).
    k.fgemm = FGemm_neon;
    k.float_row = FloatRow_neon;
#if defined(__aarch64__)
    k.float_group = kFloatGroupNeon64;
#endif
  }
  if (isa == Isa::kNeon) {
    k.SetQGemm(QGemmQ4x16_neon, QGemmQ5x16_neon, QGemmQ8x16_neon, QGemmIQ4x16_neon);
    k.SetQGemmK(QGemmQ4Kx16_neon, QGemmQ5Kx16_neon);
    k.SetQGemmK16(QGemmQ3Kx16_neon, QGemmQ2Kx16_neon, QGemmQ6Kx16_neon);
  }
#if defined(__aarch64__)
  // These kernels need only base NEON. armhf keeps their _ref
  // versions: ARMv7 NEON has no double lanes, flushes subnormals to zero and
  // has no round-to-nearest convert (ops/exp_poly_neon.h).
  if (isa != Isa::kRef) {
    k.attend_head = AttendHead_neon;
    k.attend_head_f32 = AttendHeadF32_neon;
    k.attend_head_q8 = AttendHeadQ8_neon;
    k.attend_block = AttendBlock_neon;
    k.attend_scores = AttendScores_neon;
    k.attend_max = AttendMax_neon;
    k.attend_exp = AttendExp_neon;
    k.attend_values = AttendValues_neon;
    k.swiglu = SwiGlu_neon;
    k.rms_norm = RmsNorm_neon;
    k.rope_apply = RopeApply_neon;
    k.geglu = GeGlu_neon;
    k.fp32_to_fp16_row = Fp32ToFp16Row_neon;
    k.quantize_act_rows = QuantizeActRows_neon;
  }
  if (isa == Isa::kNeonDot) {
    k.SetQGemm(QGemmQ4x16_neon_dot, QGemmQ5x16_neon_dot, QGemmQ8x16_neon_dot, QGemmIQ4x16_neon_dot);
    k.SetQGemmK(QGemmQ4Kx16_neon_dot, QGemmQ5Kx16_neon_dot);
    k.SetQGemmK16(QGemmQ3Kx16_neon_dot, QGemmQ2Kx16_neon_dot, QGemmQ6Kx16_neon_dot);
  } else if (isa == Isa::kNeonI8mm) {
    k.SetQGemm(QGemmQ4x16_neon_i8mm, QGemmQ5x16_neon_i8mm, QGemmQ8x16_neon_i8mm,
               QGemmIQ4x16_neon_i8mm);  // smmla for batches, sdot for one token
    k.SetQGemmK(QGemmQ4Kx16_neon_i8mm, QGemmQ5Kx16_neon_i8mm);
    k.SetQGemmK16(QGemmQ3Kx16_neon_i8mm, QGemmQ2Kx16_neon_i8mm, QGemmQ6Kx16_neon_i8mm);
  }
#endif
#endif
  return k;
}

bool HasVariantsFor(Isa isa) {
  switch (isa) {
    case Isa::kRef:
      return true;
#if defined(__x86_64__)
    case Isa::kAvx2:
    case Isa::kAvx512:
    case Isa::kAvx512Vnni:
      return true;
#elif defined(__aarch64__)
    case Isa::kNeon:
    case Isa::kNeonDot:
    case Isa::kNeonI8mm:
      return true;
#elif defined(__arm__) && defined(__ARM_NEON)
    case Isa::kNeon:
      return true;
#endif
    default:
      return false;
  }
}

Status ActiveKernels(const Kernels** out) {
  static Isa isa;
  static const Status status = SelectIsa(&isa);
  static const Kernels table = KernelsFor(status.ok() ? isa : Isa::kRef);
  if (!status.ok()) return status;
  *out = &table;
  return Status::Ok();
}

}  // namespace ember

namespace ember {
const Kernels& Active() {
  static const Kernels fallback = KernelsFor(Isa::kRef);
  const Kernels* k = nullptr;
  return ActiveKernels(&k).ok() ? *k : fallback;
}
}  // namespace ember
