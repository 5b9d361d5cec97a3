// IQ4_NL and IQ4_XS rows from floats: llama.cpp's search without an importance
// matrix, in its float order, so that `ember quantize --type IQ4_NL` writes the
// bytes llama-quantize writes (tests/quant/quantize_llama_test.cpp holds the
// peer's hashes). Both formats put each weight on the same 16-value
// non-linear grid (kIq4Grid); they differ in where the scale lives:
//   IQ4_NL: an fp16 scale per block of 32;
//   IQ4_XS: per 256, an fp16 `d` and a 6-bit signed scale per 32 (d * (ls - 32)).
// The search (docs/QUANTIZE.md, "The quantizers"): per block of 32, weights
// w = x^2; a first scale maps the value of largest magnitude to the grid's
// end (-127), then 15 candidate scales (grid end + t, t = -7..7, over that
// value) each give the nearest grid points and their least-squares scale
// sum(w q x) / sum(w q^2); the one with the largest sum(w q x)^2 / sum(w q^2)
// (least weighted error) wins. IQ4_XS then rounds the 8 block scales to 6 bits
// against the one of largest magnitude and requantizes every weight.
#include <cmath>
#include <cstring>

#include "quant/fp16.h"
#include "quant/quantize.h"
#include "quant/quantize_rounding.h"

namespace ember {
namespace {

constexpr int kBlock = 32;
// The search tries the grid's end moved by -kTries .. kTries (llama.cpp's ntry).
constexpr int kTries = 7;

// The index of the grid value nearest to v; a value halfway between two grid
// points takes the upper one (llama.cpp's best_index_int8).
int NearestGrid(float v) {
  if (v <= kIq4Grid[0]) return 0;
  if (v >= kIq4Grid[15]) return 15;
  int hi = 1;
  while (v >= kIq4Grid[hi]) ++hi;  // kIq4Grid[hi - 1] <= v < kIq4Grid[hi]
  return v - kIq4Grid[hi - 1] < kIq4Grid[hi] - v ? hi - 1 : hi;
}

// The weighted sums of x[32] quantized with inverse scale `inv`:
// sum(w q x) and sum(w q^2), q = kIq4Grid[nearest]; the indices into L if given.
void GridSums(const float* x, const float* w, float inv, uint8_t* L, float* sum_qx, float* sum_q2) {
  float qx = 0, q2 = 0;
  for (int j = 0; j < kBlock; ++j) {
    const int l = NearestGrid(inv * x[j]);
    if (L != nullptr) L[j] = static_cast<uint8_t>(l);
    const float q = kIq4Grid[l];
    qx += w[j] * q * x[j];
    q2 += w[j] * q * q;
  }
  *sum_qx = qx;
  *sum_q2 = q2;
}

// The best scale of one block x[32] (0 for an all-zero block).
float SearchBlockScale(const float* x) {
  float w[kBlock];
  float amax = 0, max = 0;  // the value of largest magnitude, sign kept, first on a tie
  for (int j = 0; j < kBlock; ++j) {
    w[j] = x[j] * x[j];
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  if (amax < kGroupMaxEps) return 0;
  float sum_qx, sum_q2;
  GridSums(x, w, 1 / (-max / kIq4Grid[0]), nullptr, &sum_qx, &sum_q2);
  float d = sum_q2 > 0 ? sum_qx / sum_q2 : 0.0f;
  float best = d * sum_qx;
  for (int t = -kTries; t <= kTries; ++t) {
    GridSums(x, w, static_cast<float>(t + kIq4Grid[0]) / max, nullptr, &sum_qx, &sum_q2);
    if (sum_q2 > 0 && sum_qx * sum_qx > best * sum_q2) {
      d = sum_qx / sum_q2;
      best = d * sum_qx;
    }
  }
  return d;
}

// 32 grid indices -> 16 bytes: weight j in the low nibble of byte j, weight
// j + 16 in its high nibble (as Q4_0).
void PackNibbles(const uint8_t* L, uint8_t* qs) {
  for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>(L[j] | (L[j + 16] << 4));
}

// x[32] on the grid at scale d (inverse 0 when d is 0: every index is the
// grid point nearest 0).
void QuantizeBlockAt(const float* x, float d, uint8_t* qs) {
  uint8_t L[kBlock];
  const float inv = d != 0 ? 1 / d : 0.0f;
  for (int j = 0; j < kBlock; ++j) L[j] = static_cast<uint8_t>(NearestGrid(inv * x[j]));
  PackNibbles(L, qs);
}

}  // namespace

void QuantizeRowIQ4_NL(const float* x, BlockIQ4_NL* y, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b, x += kBlock) {
    const float d = SearchBlockScale(x);
    y[b].d = Fp32ToFp16(d);
    // The indices are those of the float scale, not of its fp16 rounding.
    QuantizeBlockAt(x, d, y[b].qs);
  }
}

void QuantizeRowIQ4_XS(const float* x, BlockIQ4_XS* y, int64_t n) {
  constexpr int kSub = kQK_K / kBlock;
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    float scale[kSub];
    float max_scale = 0, amax_scale = 0;  // the scale of largest magnitude, sign kept
    for (int j = 0; j < kSub; ++j) {
      scale[j] = SearchBlockScale(x + kBlock * j);
      if (std::fabs(scale[j]) > amax_scale) {
        amax_scale = std::fabs(scale[j]);
        max_scale = scale[j];
      }
    }
    // That scale maps to -32, the end of the 6-bit range (ls - 32 in -32..31).
    const float d = -max_scale / 32;
    BlockIQ4_XS& out = y[b];
    out.d = Fp32ToFp16(d);
    out.scales_h = 0;
    std::memset(out.scales_l, 0, sizeof(out.scales_l));
    const float inv_d = d != 0 ? 1 / d : 0.0f;
    for (int j = 0; j < kSub; ++j) {
      int ls = NearestInt(inv_d * scale[j]);
      ls = ls < -32 ? -32 : ls > 31 ? 31 : ls;
      QuantizeBlockAt(x + kBlock * j, d * static_cast<float>(ls), out.qs + 16 * j);
      ls += 32;
      out.scales_l[j / 2] |= static_cast<uint8_t>((ls & 0x0F) << (4 * (j % 2)));
      out.scales_h |= static_cast<uint16_t>((ls >> 4) << (2 * j));
    }
  }
}

}  // namespace ember
