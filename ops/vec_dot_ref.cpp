#include "ops/vec_dot.h"

#include "quant/blocks.h"
#include "quant/fp16.h"

namespace ember {

float VecDotQ4_0Q8_0_ref(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ4_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK; ++b) {
    int sumi = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      sumi += ((x[b].qs[j] & 0x0F) - 8) * y[b].qs[j];
      sumi += ((x[b].qs[j] >> 4) - 8) * y[b].qs[j + kQK / 2];
    }
    sum += static_cast<float>(sumi) * Fp16ToFp32(x[b].d) * Fp16ToFp32(y[b].d);
  }
  return sum;
}

float VecDotQ4_1Q8_1_ref(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ4_1*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK; ++b) {
    int sumi = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      sumi += (x[b].qs[j] & 0x0F) * y[b].qs[j];
      sumi += (x[b].qs[j] >> 4) * y[b].qs[j + kQK / 2];
    }
    // sum_j (q_j d + m) * a_j = d * da * sumi + m * (da * sum_j qa_j) = ... + m * s.
    sum += Fp16ToFp32(x[b].d) * Fp16ToFp32(y[b].d) * static_cast<float>(sumi) +
           Fp16ToFp32(x[b].m) * Fp16ToFp32(y[b].s);
  }
  return sum;
}

float VecDotQ8_0Q8_0_ref(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ8_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK; ++b) {
    int sumi = 0;
    for (int j = 0; j < kQK; ++j) sumi += x[b].qs[j] * y[b].qs[j];
    sum += static_cast<float>(sumi) * Fp16ToFp32(x[b].d) * Fp16ToFp32(y[b].d);
  }
  return sum;
}

float VecDotF16F16_ref(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const uint16_t*>(w);
  const auto* y = static_cast<const uint16_t*>(a);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += double(Fp16ToFp32(x[i])) * double(Fp16ToFp32(y[i]));
  return static_cast<float>(sum);
}

float VecDotBf16Bf16_ref(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const uint16_t*>(w);
  const auto* y = static_cast<const uint16_t*>(a);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += double(Bf16ToFp32(x[i])) * double(Bf16ToFp32(y[i]));
  return static_cast<float>(sum);
}

float VecDotF32F32_ref(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const float*>(w);
  const auto* y = static_cast<const float*>(a);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += double(x[i]) * double(y[i]);
  return static_cast<float>(sum);
}

const VecDotPair* FindVecDot(GgmlType weight_type) {
  static const VecDotPair kQ4_0{GgmlType::kQ8_0, VecDotQ4_0Q8_0_ref};
  static const VecDotPair kQ4_1{GgmlType::kQ8_1, VecDotQ4_1Q8_1_ref};
  static const VecDotPair kQ8_0{GgmlType::kQ8_0, VecDotQ8_0Q8_0_ref};
  static const VecDotPair kF16{GgmlType::kF16, VecDotF16F16_ref};
  static const VecDotPair kBf16{GgmlType::kBF16, VecDotBf16Bf16_ref};
  static const VecDotPair kF32{GgmlType::kF32, VecDotF32F32_ref};
  switch (weight_type) {
    case GgmlType::kQ4_0:
      return &kQ4_0;
    case GgmlType::kQ4_1:
      return &kQ4_1;
    case GgmlType::kQ8_0:
      return &kQ8_0;
    case GgmlType::kF16:
      return &kF16;
    case GgmlType::kBF16:
      return &kBf16;
    case GgmlType::kF32:
      return &kF32;
    default:
      return nullptr;
  }
}

}  // namespace ember
