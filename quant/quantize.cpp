#include "quant/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/fp16.h"

namespace ember {

void QuantizeRowQ8_0(const float* x, BlockQ8_0* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK) {
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::fmax(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = Fp32ToFp16(d);
    // Halves away from zero (roundf), as llama-quantize writes Q8_0 files.
    for (int j = 0; j < kQK; ++j) y[b].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
  }
}

void QuantizeGroupI8(const float* x, int8_t* q, float* scale, int64_t n) {
  float amax = 0.0f;
  for (int64_t j = 0; j < n; ++j) amax = std::fmax(amax, std::fabs(x[j]));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  *scale = d;
  for (int64_t j = 0; j < n; ++j) q[j] = static_cast<int8_t>(std::nearbyint(x[j] * id));
}

void QuantizeRowQ8_1(const float* x, BlockQ8_1* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK) {
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::fmax(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    int sum = 0;
    for (int j = 0; j < kQK; ++j) {
      const int q = static_cast<int>(std::nearbyint(x[j] * id));
      y[b].qs[j] = static_cast<int8_t>(q);
      sum += q;
    }
    y[b].d = Fp32ToFp16(d);
    y[b].s = Fp32ToFp16(static_cast<float>(sum) * d);
  }
}

void QuantizeRowQ4_0(const float* x, BlockQ4_0* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK) {
    // The value of largest magnitude maps to -8, keeping its sign in d.
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kQK; ++j) {
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = Fp32ToFp16(d);
    for (int j = 0; j < kQK / 2; ++j) {
      const int q0 = std::min(15, static_cast<int>(x[j] * id + 8.5f));
      const int q1 = std::min(15, static_cast<int>(x[j + kQK / 2] * id + 8.5f));
      y[b].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

void QuantizeRowQ4_1(const float* x, BlockQ4_1* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK) {
    float min = x[0], max = x[0];
    for (int j = 1; j < kQK; ++j) {
      min = std::fmin(min, x[j]);
      max = std::fmax(max, x[j]);
    }
    const float d = (max - min) / 15.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = Fp32ToFp16(d);
    y[b].m = Fp32ToFp16(min);
    for (int j = 0; j < kQK / 2; ++j) {
      const int q0 = std::min(15, static_cast<int>((x[j] - min) * id + 0.5f));
      const int q1 = std::min(15, static_cast<int>((x[j + kQK / 2] - min) * id + 0.5f));
      y[b].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

float SignedAbsMax(const float* x, int n) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < n; ++j) {
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

namespace {

// 5-bit quants q[32] -> the low nibbles (qs, Q4_0 order) and the high bits (qh).
void Pack5(const int* q, uint8_t* qs, uint8_t* qh) {
  uint32_t h = 0;
  for (int j = 0; j < kQK / 2; ++j) {
    qs[j] = static_cast<uint8_t>((q[j] & 0x0F) | ((q[j + kQK / 2] & 0x0F) << 4));
    h |= static_cast<uint32_t>(q[j] >> 4) << j;
    h |= static_cast<uint32_t>(q[j + kQK / 2] >> 4) << (j + kQK / 2);
  }
  std::memcpy(qh, &h, 4);
}

// The 5-bit quant of weight j (0..31) of a Q5_0 / Q5_1 block.
int Unpack5(const uint8_t* qs, const uint8_t* qh, int j) {
  uint32_t h;
  std::memcpy(&h, qh, 4);
  const int lo = j < kQK / 2 ? (qs[j] & 0x0F) : (qs[j - kQK / 2] >> 4);
  return lo | static_cast<int>(((h >> j) & 1) << 4);
}

}  // namespace

void QuantizeRowQ5_0(const float* x, BlockQ5_0* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK) {
    const float d = SignedAbsMax(x, kQK) / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = Fp32ToFp16(d);
    int q[kQK];
    for (int j = 0; j < kQK; ++j) q[j] = std::min(31, static_cast<int>(x[j] * id + 16.5f));
    Pack5(q, y[b].qs, y[b].qh);
  }
}

void QuantizeRowQ5_1(const float* x, BlockQ5_1* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK) {
    float min = x[0], max = x[0];
    for (int j = 1; j < kQK; ++j) {
      min = std::fmin(min, x[j]);
      max = std::fmax(max, x[j]);
    }
    const float d = (max - min) / 31.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = Fp32ToFp16(d);
    y[b].m = Fp32ToFp16(min);
    int q[kQK];
    for (int j = 0; j < kQK; ++j) q[j] = std::min(31, static_cast<int>((x[j] - min) * id + 0.5f));
    Pack5(q, y[b].qs, y[b].qh);
  }
}

void DequantizeRowQ5_0(const BlockQ5_0* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, y += kQK) {
    const float d = Fp16ToFp32(x[b].d);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(Unpack5(x[b].qs, x[b].qh, j) - 16) * d;
  }
}

void DequantizeRowQ5_1(const BlockQ5_1* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, y += kQK) {
    const float d = Fp16ToFp32(x[b].d);
    const float m = Fp16ToFp32(x[b].m);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(Unpack5(x[b].qs, x[b].qh, j)) * d + m;
  }
}

bool CanQuantize(GgmlType type) {
  switch (type) {
    case GgmlType::kF32:
    case GgmlType::kF16:
    case GgmlType::kBF16:
    case GgmlType::kQ4_0:
    case GgmlType::kQ4_1:
    case GgmlType::kQ8_0:
    case GgmlType::kQ8_1:
    case GgmlType::kQ5_0:
    case GgmlType::kQ5_1:
    case GgmlType::kQ4_K:
    case GgmlType::kQ5_K:
    case GgmlType::kQ6_K:
    case GgmlType::kQ2_K:
    case GgmlType::kQ3_K:
    case GgmlType::kIQ4_NL:
    case GgmlType::kIQ4_XS:
      return true;
    default:
      return false;
  }
}

void QuantizeRow(GgmlType type, const float* x, void* dst, int64_t n) {
  switch (type) {
    case GgmlType::kF32:
      std::memcpy(dst, x, static_cast<size_t>(n) * sizeof(float));
      return;
    case GgmlType::kF16: {
      auto* d = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = Fp32ToFp16(x[i]);
      return;
    }
    case GgmlType::kBF16: {
      auto* d = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = Fp32ToBf16(x[i]);
      return;
    }
    case GgmlType::kQ4_0:
      return QuantizeRowQ4_0(x, static_cast<BlockQ4_0*>(dst), n);
    case GgmlType::kQ4_1:
      return QuantizeRowQ4_1(x, static_cast<BlockQ4_1*>(dst), n);
    case GgmlType::kQ8_0:
      return QuantizeRowQ8_0(x, static_cast<BlockQ8_0*>(dst), n);
    case GgmlType::kQ8_1:
      return QuantizeRowQ8_1(x, static_cast<BlockQ8_1*>(dst), n);
    case GgmlType::kQ5_0:
      return QuantizeRowQ5_0(x, static_cast<BlockQ5_0*>(dst), n);
    case GgmlType::kQ5_1:
      return QuantizeRowQ5_1(x, static_cast<BlockQ5_1*>(dst), n);
    case GgmlType::kQ4_K:
      return QuantizeRowQ4_K(x, static_cast<BlockQ4_K*>(dst), n);
    case GgmlType::kQ5_K:
      return QuantizeRowQ5_K(x, static_cast<BlockQ5_K*>(dst), n);
    case GgmlType::kQ6_K:
      return QuantizeRowQ6_K(x, static_cast<BlockQ6_K*>(dst), n);
    case GgmlType::kQ2_K:
      return QuantizeRowQ2_K(x, static_cast<BlockQ2_K*>(dst), n);
    case GgmlType::kQ3_K:
      return QuantizeRowQ3_K(x, static_cast<BlockQ3_K*>(dst), n);
    case GgmlType::kIQ4_NL:
      return QuantizeRowIQ4_NL(x, static_cast<BlockIQ4_NL*>(dst), n);
    case GgmlType::kIQ4_XS:
      return QuantizeRowIQ4_XS(x, static_cast<BlockIQ4_XS*>(dst), n);
    default:
      return;
  }
}

bool CanDequantize(GgmlType type) {
  switch (type) {
    case GgmlType::kF32:
    case GgmlType::kF16:
    case GgmlType::kBF16:
    case GgmlType::kQ4_0:
    case GgmlType::kQ4_1:
    case GgmlType::kQ8_0:
    case GgmlType::kQ5_0:
    case GgmlType::kQ5_1:
    case GgmlType::kQ4_K:
    case GgmlType::kQ5_K:
    case GgmlType::kQ6_K:
    case GgmlType::kQ2_K:
    case GgmlType::kQ3_K:
    case GgmlType::kIQ4_NL:
    case GgmlType::kIQ4_XS:
      return true;
    default:
      return false;
  }
}

void DequantizeRow(GgmlType type, const void* src, float* dst, int64_t n) {
  switch (type) {
    case GgmlType::kF32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case GgmlType::kF16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = Fp16ToFp32(s[i]);
      return;
    }
    case GgmlType::kBF16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = Bf16ToFp32(s[i]);
      return;
    }
    case GgmlType::kQ4_0: {
      const auto* b = static_cast<const BlockQ4_0*>(src);
      for (int64_t k = 0; k < n / kQK; ++k, dst += kQK) {
        const float d = Fp16ToFp32(b[k].d);
        for (int j = 0; j < kQK / 2; ++j) {
          dst[j] = static_cast<float>((b[k].qs[j] & 0x0F) - 8) * d;
          dst[j + kQK / 2] = static_cast<float>((b[k].qs[j] >> 4) - 8) * d;
        }
      }
      return;
    }
    case GgmlType::kQ4_1: {
      const auto* b = static_cast<const BlockQ4_1*>(src);
      for (int64_t k = 0; k < n / kQK; ++k, dst += kQK) {
        const float d = Fp16ToFp32(b[k].d);
        const float m = Fp16ToFp32(b[k].m);
        for (int j = 0; j < kQK / 2; ++j) {
          dst[j] = static_cast<float>(b[k].qs[j] & 0x0F) * d + m;
          dst[j + kQK / 2] = static_cast<float>(b[k].qs[j] >> 4) * d + m;
        }
      }
      return;
    }
    case GgmlType::kQ8_0: {
      const auto* b = static_cast<const BlockQ8_0*>(src);
      for (int64_t k = 0; k < n / kQK; ++k, dst += kQK) {
        const float d = Fp16ToFp32(b[k].d);
        for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(b[k].qs[j]) * d;
      }
      return;
    }
    case GgmlType::kQ5_0:
      return DequantizeRowQ5_0(static_cast<const BlockQ5_0*>(src), dst, n);
    case GgmlType::kQ5_1:
      return DequantizeRowQ5_1(static_cast<const BlockQ5_1*>(src), dst, n);
    case GgmlType::kQ4_K:
      return DequantizeRowQ4_K(static_cast<const BlockQ4_K*>(src), dst, n);
    case GgmlType::kQ5_K:
      return DequantizeRowQ5_K(static_cast<const BlockQ5_K*>(src), dst, n);
    case GgmlType::kQ6_K:
      return DequantizeRowQ6_K(static_cast<const BlockQ6_K*>(src), dst, n);
    case GgmlType::kQ2_K:
      return DequantizeRowQ2_K(static_cast<const BlockQ2_K*>(src), dst, n);
    case GgmlType::kQ3_K:
      return DequantizeRowQ3_K(static_cast<const BlockQ3_K*>(src), dst, n);
    case GgmlType::kIQ4_NL:
      return DequantizeRowIQ4_NL(static_cast<const BlockIQ4_NL*>(src), dst, n);
    case GgmlType::kIQ4_XS:
      return DequantizeRowIQ4_XS(static_cast<const BlockIQ4_XS*>(src), dst, n);
    default:
      return;
  }
}

}  // namespace ember
