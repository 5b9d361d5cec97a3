// The specification of the float GEMM (ops/fgemm.h): plain C++, one output at
// a time, in the contract's order.
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/fgemm.h"
#include "quant/fp16.h"

namespace ember {

bool IsFloatWeight(GgmlType type) {
  return type == GgmlType::kF32 || type == GgmlType::kF16 || type == GgmlType::kBF16;
}

FloatWeight FloatWeightOf(GgmlType type) {
  switch (type) {
    case GgmlType::kF16:
      return FloatWeight::kF16;
    case GgmlType::kBF16:
      return FloatWeight::kBF16;
    default:
      return FloatWeight::kF32;
  }
}

void FloatRow(const FloatMatrix& w, int64_t r, float* out) {
  const uint8_t* p = w.row(r);
  switch (w.type) {
    case FloatWeight::kF32:
      for (int64_t i = 0; i < w.n_cols; ++i) std::memcpy(&out[i], p + 4 * i, 4);
      break;
    case FloatWeight::kF16:
      for (int64_t i = 0; i < w.n_cols; ++i) {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        out[i] = Fp16ToFp32(h);
      }
      break;
    case FloatWeight::kBF16:
      for (int64_t i = 0; i < w.n_cols; ++i) {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        out[i] = Bf16ToFp32(h);
      }
      break;
  }
}

void FGemm_ref(const FloatMatrix& w, int64_t row_begin, int64_t row_end, const float* x, int64_t m,
               float* y, int64_t ldy) {
  const int64_t k = w.n_cols, k16 = k - k % 16;
  std::vector<float> row(static_cast<size_t>(k));
  float* wr = row.data();
  for (int64_t r = row_begin; r < row_end; ++r) {
    FloatRow(w, r, wr);
    for (int64_t t = 0; t < m; ++t) {
      const float* xt = x + t * k;
      float s[16] = {};
      for (int64_t i = 0; i < k16; i += 16) {
        for (int j = 0; j < 16; ++j) s[j] = std::fma(wr[i + j], xt[i + j], s[j]);
      }
      for (int j = 0; j < 8; ++j) s[j] += s[j + 8];
      for (int j = 0; j < 4; ++j) s[j] += s[j + 4];
      for (int j = 0; j < 2; ++j) s[j] += s[j + 2];
      float acc = s[0] + s[1];
      for (int64_t i = k16; i < k; ++i) acc = std::fma(wr[i], xt[i], acc);
      y[t * ldy + r] = acc;
    }
  }
}

}  // namespace ember
