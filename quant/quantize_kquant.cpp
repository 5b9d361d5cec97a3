// K-quant rows (Q4_K, Q5_K, Q6_K) <-> float, written from the block layouts in
// quant/blocks.h. Dequantization is the specification the repacking is
// measured against. The quantizers implement llama.cpp's reference algorithms
// without an importance matrix (the searches described at each function), in
// the same float order, so `ember quantize` writes what llama-quantize would.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/fp16.h"
#include "quant/quantize.h"
#include "quant/quantize_rounding.h"

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

// Fits x[n] ≈ scale * L + min (L in [0, nmax], min <= 0) minimizing the
// weighted squared error, as llama.cpp's K-quant search does: start from the
// [min(x, 0), max(x)] grid, then try nstep + 1 grids whose step is (max -
// min) / (nmax + rmin + rdelta * is) and, for the quants each gives, the
// least-squares scale and min (min clamped to <= 0); keep the one of least
// weighted squared (or, use_mad, absolute) error. Returns
// the scale, sets *neg_min = -min and L. The float operations follow the
// reference order so that the same input gives the same bytes.
float FitScaleMin(const float* x, const float* w, int n, int nmax, float rmin, float rdelta,
                  int nstep, bool use_mad, uint8_t* L, float* neg_min) {
  // The error of one weight: squared, or absolute (Q2_K's "mad").
  auto error = [use_mad](float diff) { return use_mad ? std::fabs(diff) : diff * diff; };
  float lo = x[0], hi = x[0];
  float sum_w = w[0], sum_x = w[0] * x[0];
  for (int i = 1; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (lo > 0) lo = 0;
  if (hi == lo) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    *neg_min = -lo;
    return 0.0f;
  }
  float iscale = static_cast<float>(nmax) / (hi - lo);
  float scale = 1 / iscale;
  float best = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = static_cast<uint8_t>(Clamp(NearestInt(iscale * (x[i] - lo)), 0, nmax));
    const float diff = scale * L[i] + lo - x[i];
    best += w[i] * error(diff);
  }
  uint8_t trial[32];
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax)) / (hi - lo);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = Clamp(NearestInt(iscale * (x[i] - lo)), 0, nmax);
      trial[i] = static_cast<uint8_t>(l);
      sum_l += w[i] * static_cast<float>(l);
      sum_l2 += w[i] * static_cast<float>(l) * static_cast<float>(l);
      sum_xl += w[i] * static_cast<float>(l) * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (!(det > 0)) continue;
    float s = (sum_w * sum_xl - sum_x * sum_l) / det;
    float m = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    if (m > 0) {
      m = 0;
      s = sum_xl / sum_l2;
    }
    float err = 0;
    for (int i = 0; i < n; ++i) {
      const float diff = s * trial[i] + m - x[i];
      err += w[i] * error(diff);
    }
    if (err < best) {
      std::memcpy(L, trial, static_cast<size_t>(n));
      best = err;
      scale = s;
      lo = m;
    }
  }
  *neg_min = -lo;
  return scale;
}

// One Q4_K / Q5_K super-block x[256] -> d, dmin, packed scales and quants
// q[256] in [0, nmax] (llama.cpp's reference quantizer without an importance
// matrix): per sub-block of 32 a FitScaleMin weighted by rms(x) + |x| (grids
// rmin, rdelta, nstep: -1, 0.1, 20 for Q4_K; -0.5, 0.1, 15 for Q5_K); the
// sub-block scales and mins rounded to 6 bits of the largest; then every
// weight requantized against its rounded scale and min.
void QuantizeSuperBlockK(const float* x, int nmax, uint16_t* d, uint16_t* dmin, uint8_t* scales,
                         int* q) {
  const float rmin = nmax == 15 ? -1.0f : -0.5f;
  const int nstep = nmax == 15 ? 20 : 15;
  uint8_t L[kQK_K];
  float scale[8], mn[8], max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < 8; ++j) {
    const float* xj = x + 32 * j;
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += xj[l] * xj[l];
    const float av_x = std::sqrt(sum_x2 / 32);
    float w[32];
    for (int l = 0; l < 32; ++l) w[l] = av_x + std::fabs(xj[l]);
    scale[j] = FitScaleMin(xj, w, 32, nmax, rmin, 0.1f, nstep, false, L + 32 * j, &mn[j]);
    if (scale[j] > max_scale) max_scale = scale[j];
    if (mn[j] > max_min) max_min = mn[j];
  }
  const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
  int sc[8], m[8];
  for (int j = 0; j < 8; ++j) {
    // As the reference: the int narrowed to a byte, then capped at 63.
    sc[j] = std::min(63, static_cast<int>(static_cast<uint8_t>(NearestInt(inv_scale * scale[j]))));
    m[j] = std::min(63, static_cast<int>(static_cast<uint8_t>(NearestInt(inv_min * mn[j]))));
  }
  PackScaleMinK4(sc, m, scales);
  *d = Fp32ToFp16(max_scale / 63.0f);
  *dmin = Fp32ToFp16(max_min / 63.0f);
  const float df = Fp16ToFp32(*d), dminf = Fp16ToFp32(*dmin);
  for (int j = 0; j < 8; ++j) {
    const float ds = df * static_cast<float>(sc[j]);
    if (ds != 0.0f) {
      const float dm = dminf * static_cast<float>(m[j]);
      for (int l = 0; l < 32; ++l) {
        L[32 * j + l] = static_cast<uint8_t>(Clamp(NearestInt((x[32 * j + l] + dm) / ds), 0, nmax));
      }
    }  // a zero scale keeps the fit's quants (they multiply 0)
    for (int l = 0; l < 32; ++l) q[32 * j + l] = L[32 * j + l];
  }
}

// Q6_K's sub-block fit: x[16] ≈ scale * (L - 32), L in [0, 63], weighted by
// x^2 (llama.cpp's make_qx_quants, rmse type 1): the largest-magnitude value
// maps to -32, then 18 nearby grids -(32 + 0.1 is) / max, is = -9..9, each
// with its least-squares scale; keep the one with the largest sum(w x l)^2 /
// sum(w l^2) (the smallest error). Returns the scale.
float FitScaleQ6(const float* x, int8_t* L) {
  constexpr int kNmax = 32;
  const float vmax = SignedAbsMax(x, 16);
  if (std::fabs(vmax) < kGroupMaxEps) {
    for (int i = 0; i < 16; ++i) L[i] = 0;
    return 0.0f;
  }
  auto fit = [&](float iscale, float* sumlx, float* suml2, int8_t* out) {
    *sumlx = *suml2 = 0;
    for (int i = 0; i < 16; ++i) {
      const int l = Clamp(NearestInt(iscale * x[i]), -kNmax, kNmax - 1);
      if (out != nullptr) out[i] = static_cast<int8_t>(l + kNmax);
      const float w = x[i] * x[i];
      *sumlx += w * x[i] * static_cast<float>(l);
      *suml2 += w * static_cast<float>(l) * static_cast<float>(l);
    }
  };
  float sumlx, suml2;
  fit(-kNmax / vmax, &sumlx, &suml2, L);
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    const float iscale = -(kNmax + 0.1f * static_cast<float>(is)) / vmax;
    fit(iscale, &sumlx, &suml2, nullptr);
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      fit(iscale, &sumlx, &suml2, L);
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// Q3_K's sub-block fit: x[16] ≈ scale * (L - 4), L in [0, 7], weighted by x^2
// (llama.cpp's make_q3_quants with its rmse search): the largest-magnitude
// value maps to -4, then up to 5 passes of coordinate descent, each weight
// moved to the quant the current least-squares scale prefers when that
// lowers the error. Returns the scale.
float FitScaleQ3(const float* x, int8_t* L) {
  constexpr int kNmax = 4;
  const float vmax = SignedAbsMax(x, 16);
  if (std::fabs(vmax) < kGroupMaxEps) {
    for (int i = 0; i < 16; ++i) L[i] = 0;
    return 0.0f;
  }
  const float iscale = -kNmax / vmax;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < 16; ++i) {
    L[i] = static_cast<int8_t>(Clamp(NearestInt(iscale * x[i]), -kNmax, kNmax - 1));
    const float w = x[i] * x[i];
    sumlx += w * x[i] * L[i];
    suml2 += w * L[i] * L[i];
  }
  for (int pass = 0; pass < 5; ++pass) {
    int changed = 0;
    for (int i = 0; i < 16; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * L[i];
      if (!(slx > 0)) continue;
      float sl2 = suml2 - w * L[i] * L[i];
      const int l = Clamp(NearestInt(x[i] * sl2 / slx), -kNmax, kNmax - 1);
      if (l == L[i]) continue;
      slx += w * x[i] * l;
      sl2 += w * l * l;
      if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
        L[i] = static_cast<int8_t>(l);
        sumlx = slx;
        suml2 = sl2;
        ++changed;
      }
    }
    if (changed == 0) break;
  }
  for (int i = 0; i < 16; ++i) L[i] = static_cast<int8_t>(L[i] + kNmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// Quants L[256] of 2 bits -> Q2_K / Q3_K's qs: weight 128h + 32p + l at bits
// 2p, 2p+1 of qs[32h + l].
void Pack2Bits(const uint8_t* L, uint8_t* qs) {
  for (int h = 0; h < 2; ++h) {
    for (int l = 0; l < 32; ++l) {
      const uint8_t* q = L + 128 * h + l;
      qs[32 * h + l] = static_cast<uint8_t>(q[0] | (q[32] << 2) | (q[64] << 4) | (q[96] << 6));
    }
  }
}

// The 2-bit part of weight i of a Q2_K / Q3_K block.
int Crumb(const uint8_t* qs, int i) {
  return (qs[32 * (i / 128) + i % 32] >> (2 * ((i % 128) / 32))) & 3;
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
    // Per sub-block of 16 a FitScaleQ6; the scales to int8 against the one of
    // largest magnitude (which maps to -128), then every weight requantized.
    int8_t L[kQK_K];
    float scale[16];
    for (int i = 0; i < 16; ++i) scale[i] = FitScaleQ6(x + 16 * i, L + 16 * i);
    const float max_scale = SignedAbsMax(scale, 16);
    if (std::fabs(max_scale) < kGroupMaxEps) {
      std::memset(&y[b], 0, sizeof(BlockQ6_K));
      continue;
    }
    const float iscale = -128.0f / max_scale;
    y[b].d = Fp32ToFp16(1 / iscale);
    for (int i = 0; i < 16; ++i) {
      y[b].scales[i] = static_cast<int8_t>(std::min(127, NearestInt(iscale * scale[i])));
    }
    const float df = Fp16ToFp32(y[b].d);
    for (int i = 0; i < 16; ++i) {
      const float s = df * static_cast<float>(y[b].scales[i]);
      if (s == 0.0f) continue;  // keeps the fit's quants, as the reference
      for (int l = 0; l < 16; ++l) {
        L[16 * i + l] = static_cast<int8_t>(Clamp(NearestInt(x[16 * i + l] / s), -32, 31) + 32);
      }
    }
    int q[kQK_K];
    for (int i = 0; i < kQK_K; ++i) q[i] = L[i];
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

void QuantizeRowQ2_K(const float* x, BlockQ2_K* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    // Per sub-block of 16 a FitScaleMin (2 bits, weighted by |x|, absolute
    // error); scales and mins to 4 bits of the largest of each.
    uint8_t L[kQK_K];
    float scale[16], mn[16], max_scale = 0.0f, max_min = 0.0f;
    for (int j = 0; j < 16; ++j) {
      float w[16];
      for (int l = 0; l < 16; ++l) w[l] = std::fabs(x[16 * j + l]);
      scale[j] = FitScaleMin(x + 16 * j, w, 16, 3, -0.5f, 0.1f, 15, true, L + 16 * j, &mn[j]);
      if (scale[j] > max_scale) max_scale = scale[j];
      if (mn[j] > max_min) max_min = mn[j];
    }
    // The int is narrowed to a byte as the reference does (it is <= 15).
    for (int j = 0; j < 16; ++j) {
      y[b].scales[j] =
          max_scale > 0 ? static_cast<uint8_t>(NearestInt(15.0f / max_scale * scale[j])) : 0;
    }
    y[b].d = Fp32ToFp16(max_scale > 0 ? max_scale / 15.0f : 0.0f);
    if (max_min > 0) {
      for (int j = 0; j < 16; ++j) {
        y[b].scales[j] |= static_cast<uint8_t>(NearestInt(15.0f / max_min * mn[j]) << 4);
      }
    }
    y[b].dmin = Fp32ToFp16(max_min > 0 ? max_min / 15.0f : 0.0f);
    const float df = Fp16ToFp32(y[b].d), dminf = Fp16ToFp32(y[b].dmin);
    for (int j = 0; j < 16; ++j) {
      const float d = df * static_cast<float>(y[b].scales[j] & 0x0F);
      if (d == 0.0f) continue;  // keeps the fit's quants, as the reference
      const float dm = dminf * static_cast<float>(y[b].scales[j] >> 4);
      for (int l = 0; l < 16; ++l) {
        L[16 * j + l] = static_cast<uint8_t>(Clamp(NearestInt((x[16 * j + l] + dm) / d), 0, 3));
      }
    }
    Pack2Bits(L, y[b].qs);
  }
}

void QuantizeRowQ3_K(const float* x, BlockQ3_K* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    // Per sub-block of 16 a FitScaleQ3; the scales to 6 bits against the one
    // of largest magnitude (which maps to -32), then every weight requantized.
    int8_t L[kQK_K];
    float scale[16];
    for (int j = 0; j < 16; ++j) scale[j] = FitScaleQ3(x + 16 * j, L + 16 * j);
    const float max_scale = SignedAbsMax(scale, 16);
    std::memset(y[b].scales, 0, sizeof(y[b].scales));
    if (max_scale != 0.0f) {
      const float iscale = -32.0f / max_scale;
      for (int j = 0; j < 16; ++j) {
        // Narrowed to int8 first, as the reference.
        const int l = Clamp(static_cast<int8_t>(NearestInt(iscale * scale[j])), -32, 31) + 32;
        if (j < 8) {
          y[b].scales[j] = static_cast<uint8_t>(l & 0x0F);
        } else {
          y[b].scales[j - 8] |= static_cast<uint8_t>((l & 0x0F) << 4);
        }
        y[b].scales[8 + j % 4] |= static_cast<uint8_t>((l >> 4) << (2 * (j / 4)));
      }
      y[b].d = Fp32ToFp16(1 / iscale);
    } else {
      y[b].d = Fp32ToFp16(0.0f);
    }
    const float df = Fp16ToFp32(y[b].d);
    for (int j = 0; j < 16; ++j) {
      const float d = df * static_cast<float>(UnpackScaleQ3_K(y[b].scales, j) - 32);
      if (d == 0.0f) continue;
      for (int l = 0; l < 16; ++l) {
        L[16 * j + l] = static_cast<int8_t>(Clamp(NearestInt(x[16 * j + l] / d), -4, 3) + 4);
      }
    }
    std::memset(y[b].hmask, 0, sizeof(y[b].hmask));
    uint8_t low[kQK_K];
    for (int i = 0; i < kQK_K; ++i) {
      int q = L[i];
      if (q > 3) {
        y[b].hmask[i % 32] |= static_cast<uint8_t>(1 << (i / 32));
        q -= 4;
      }
      low[i] = static_cast<uint8_t>(q);
    }
    Pack2Bits(low, y[b].qs);
  }
}

void DequantizeRowQ2_K(const BlockQ2_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b, y += kQK_K) {
    const float d = Fp16ToFp32(x[b].d), dmin = Fp16ToFp32(x[b].dmin);
    for (int i = 0; i < kQK_K; ++i) {
      const uint8_t sc = x[b].scales[i / 16];
      const float dl = d * static_cast<float>(sc & 0x0F), ml = dmin * static_cast<float>(sc >> 4);
      y[i] = dl * static_cast<float>(Crumb(x[b].qs, i)) - ml;
    }
  }
}

void DequantizeRowQ3_K(const BlockQ3_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b, y += kQK_K) {
    const float d = Fp16ToFp32(x[b].d);
    for (int i = 0; i < kQK_K; ++i) {
      const float dl = d * static_cast<float>(UnpackScaleQ3_K(x[b].scales, i / 16) - 32);
      const int high = (x[b].hmask[i % 32] >> (i / 32)) & 1;
      y[i] = dl * static_cast<float>(Crumb(x[b].qs, i) - (high ? 0 : 4));
    }
  }
}

// IQ4: the grid value times the block's scale (d * (ls - 32) for IQ4_XS), in
// llama.cpp's order.
void DequantizeRowIQ4_NL(const BlockIQ4_NL* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / 32; ++b, y += 32) {
    const float d = Fp16ToFp32(x[b].d);
    for (int j = 0; j < 16; ++j) {
      y[j] = d * static_cast<float>(kIq4Grid[x[b].qs[j] & 0x0F]);
      y[j + 16] = d * static_cast<float>(kIq4Grid[x[b].qs[j] >> 4]);
    }
  }
}

void DequantizeRowIQ4_XS(const BlockIQ4_XS* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = Fp16ToFp32(x[b].d);
    for (int j = 0; j < 8; ++j, y += 32) {
      const float dl = d * static_cast<float>(UnpackScaleIQ4_XS(x[b], j) - 32);
      const uint8_t* qs = x[b].qs + 16 * j;
      for (int l = 0; l < 16; ++l) {
        y[l] = dl * static_cast<float>(kIq4Grid[qs[l] & 0x0F]);
        y[l + 16] = dl * static_cast<float>(kIq4Grid[qs[l] >> 4]);
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
