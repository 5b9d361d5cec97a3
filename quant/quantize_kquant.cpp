// K-quant rows (Q4_K, Q5_K, Q6_K) <-> float, written from the block layouts in
// quant/blocks.h. Dequantization is the specification the repacking is
// measured against; the quantizers exist to make test and synthetic models.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/fp16.h"
#include "quant/quantize.h"

namespace ember {
namespace {

int Clamp(int v, int lo, int hi) { return std::min(hi, std::max(lo, v)); }

// Inverse of UnpackScaleMinK4: 8 six-bit scales and mins into 12 bytes.
void PackScaleMinK4(const int* sc, const int* m, uint8_t* scales) {
  std::memset(scales, 0, 12);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      scales[j] |= static_cast<uint8_t>(sc[j]);
      scales[j + 4] |= static_cast<uint8_t>(m[j]);
    } else {
      scales[j + 4] = static_cast<uint8_t>((sc[j] & 0x0F) | ((m[j] & 0x0F) << 4));
      scales[j - 4] |= static_cast<uint8_t>((sc[j] >> 4) << 6);
      scales[j] |= static_cast<uint8_t>((m[j] >> 4) << 6);
    }
  }
}

// One Q4_K / Q5_K super-block x[256] -> d, dmin, packed scales and quants
// q[256] in [0, nmax]. Per sub-block of 32 the range [min(x, 0), max(x)] is cut
// into nmax steps (the min is stored as -dmin * m, so it is never positive);
// the sub-block scales and mins are rounded to 6 bits against d and dmin.
void QuantizeSuperBlockK(const float* x, int nmax, uint16_t* d, uint16_t* dmin, uint8_t* scales,
                         int* q) {
  float scale[8], mn[8], max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < 8; ++j) {
    float lo = 0.0f, hi = x[32 * j];
    for (int l = 0; l < 32; ++l) {
      lo = std::fmin(lo, x[32 * j + l]);
      hi = std::fmax(hi, x[32 * j + l]);
    }
    scale[j] = (hi - lo) / static_cast<float>(nmax);
    mn[j] = -lo;
    max_scale = std::fmax(max_scale, scale[j]);
    max_min = std::fmax(max_min, mn[j]);
  }
  *d = Fp32ToFp16(max_scale / 63.0f);
  *dmin = Fp32ToFp16(max_min / 63.0f);
  const float df = Fp16ToFp32(*d), dminf = Fp16ToFp32(*dmin);
  int sc[8], m[8];
  for (int j = 0; j < 8; ++j) {
    sc[j] = df > 0.0f ? Clamp(static_cast<int>(std::nearbyint(scale[j] / df)), 0, 63) : 0;
    m[j] = dminf > 0.0f ? Clamp(static_cast<int>(std::nearbyint(mn[j] / dminf)), 0, 63) : 0;
    const float ds = df * static_cast<float>(sc[j]), dm = dminf * static_cast<float>(m[j]);
    for (int l = 0; l < 32; ++l) {
      const float v = (x[32 * j + l] + dm) / ds;
      q[32 * j + l] = ds > 0.0f ? Clamp(static_cast<int>(std::nearbyint(v)), 0, nmax) : 0;
    }
  }
  PackScaleMinK4(sc, m, scales);
}

// Quants q[256] in [0, 15] -> Q4_K's qs (see BlockQ4_K).
void PackNibblesK(const int* q, uint8_t* qs) {
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      qs[32 * c + l] =
          static_cast<uint8_t>((q[64 * c + l] & 0x0F) | ((q[64 * c + 32 + l] & 0x0F) << 4));
    }
  }
}

// The 4-bit part of weight 32 j + l (sub-block j) of a Q4_K / Q5_K block.
int NibbleK(const uint8_t* qs, int j, int l) {
  const uint8_t byte = qs[32 * (j / 2) + l];
  return j % 2 == 0 ? (byte & 0x0F) : (byte >> 4);
}

}  // namespace

void QuantizeRowQ4_K(const float* x, BlockQ4_K* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    int q[kQK_K];
    QuantizeSuperBlockK(x, 15, &y[b].d, &y[b].dmin, y[b].scales, q);
    PackNibblesK(q, y[b].qs);
  }
}

void QuantizeRowQ5_K(const float* x, BlockQ5_K* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    int q[kQK_K];
    QuantizeSuperBlockK(x, 31, &y[b].d, &y[b].dmin, y[b].scales, q);
    PackNibblesK(q, y[b].qs);
    std::memset(y[b].qh, 0, sizeof(y[b].qh));
    for (int j = 0; j < 8; ++j) {
      for (int l = 0; l < 32; ++l) y[b].qh[l] |= static_cast<uint8_t>((q[32 * j + l] >> 4) << j);
    }
  }
}

void QuantizeRowQ6_K(const float* x, BlockQ6_K* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    // Per sub-block of 16: the value of largest magnitude maps to q - 32 = -32.
    float scale[16], max_scale = 0.0f;
    for (int i = 0; i < 16; ++i) {
      float amax = 0.0f, vmax = 0.0f;
      for (int l = 0; l < 16; ++l) {
        if (std::fabs(x[16 * i + l]) > amax) {
          amax = std::fabs(x[16 * i + l]);
          vmax = x[16 * i + l];
        }
      }
      scale[i] = vmax / -32.0f;
      max_scale = std::fmax(max_scale, std::fabs(scale[i]));
    }
    y[b].d = Fp32ToFp16(max_scale / 127.0f);
    const float df = Fp16ToFp32(y[b].d);
    int q[kQK_K];
    for (int i = 0; i < 16; ++i) {
      const int sc =
          df > 0.0f ? Clamp(static_cast<int>(std::nearbyint(scale[i] / df)), -127, 127) : 0;
      y[b].scales[i] = static_cast<int8_t>(sc);
      const float s = df * static_cast<float>(sc);
      for (int l = 0; l < 16; ++l) {
        const int v = s != 0.0f ? static_cast<int>(std::nearbyint(x[16 * i + l] / s)) : 0;
        q[16 * i + l] = Clamp(v, -32, 31) + 32;
      }
    }
    for (int h = 0; h < 2; ++h) {
      const int* qq = q + 128 * h;
      uint8_t* ql = y[b].ql + 64 * h;
      uint8_t* qh = y[b].qh + 32 * h;
      for (int l = 0; l < 32; ++l) {
        ql[l] = static_cast<uint8_t>((qq[l] & 0x0F) | ((qq[l + 64] & 0x0F) << 4));
        ql[l + 32] = static_cast<uint8_t>((qq[l + 32] & 0x0F) | ((qq[l + 96] & 0x0F) << 4));
        qh[l] = static_cast<uint8_t>((qq[l] >> 4) | ((qq[l + 32] >> 4) << 2) |
                                     ((qq[l + 64] >> 4) << 4) | ((qq[l + 96] >> 4) << 6));
      }
    }
  }
}

// d * sc and dmin * m are exact in float (11-bit times 6-bit significands) and
// so is their product with q: each weight is rounded once, in the subtraction.
void DequantizeRowQ4_K(const BlockQ4_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = Fp16ToFp32(x[b].d), dmin = Fp16ToFp32(x[b].dmin);
    for (int j = 0; j < 8; ++j, y += 32) {
      int sc, m;
      UnpackScaleMinK4(x[b].scales, j, &sc, &m);
      const float ds = d * static_cast<float>(sc), dm = dmin * static_cast<float>(m);
      for (int l = 0; l < 32; ++l) y[l] = ds * static_cast<float>(NibbleK(x[b].qs, j, l)) - dm;
    }
  }
}

void DequantizeRowQ5_K(const BlockQ5_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = Fp16ToFp32(x[b].d), dmin = Fp16ToFp32(x[b].dmin);
    for (int j = 0; j < 8; ++j, y += 32) {
      int sc, m;
      UnpackScaleMinK4(x[b].scales, j, &sc, &m);
      const float ds = d * static_cast<float>(sc), dm = dmin * static_cast<float>(m);
      for (int l = 0; l < 32; ++l) {
        const int q = NibbleK(x[b].qs, j, l) | (((x[b].qh[l] >> j) & 1) << 4);
        y[l] = ds * static_cast<float>(q) - dm;
      }
    }
  }
}

// d * scale * (q - 32) is exact in float (11 + 7 + 5 significant bits).
// Weight 128 h + 32 p + l takes its low 4 bits from ql[64 h + 32 (p % 2) + l]
// (low nibble for p < 2, high for p >= 2) and its top 2 from qh[32 h + l]
// at bit 2 p; loops run along l so that they vectorize.
void DequantizeRowQ6_K(const BlockQ6_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = Fp16ToFp32(x[b].d);
    for (int h = 0; h < 2; ++h) {
      const uint8_t* qh = x[b].qh + 32 * h;
      for (int p = 0; p < 4; ++p, y += 32) {
        const uint8_t* ql = x[b].ql + 64 * h + 32 * (p % 2);
        const int lo_shift = p < 2 ? 0 : 4;
        for (int half = 0; half < 2; ++half) {
          const float s = d * static_cast<float>(x[b].scales[8 * h + 2 * p + half]);
          for (int l = 16 * half; l < 16 * half + 16; ++l) {
            const int q = ((ql[l] >> lo_shift) & 0x0F) | (((qh[l] >> (2 * p)) & 3) << 4);
            y[l] = s * static_cast<float>(q - 32);
          }
        }
      }
    }
  }
}

}  // namespace ember
