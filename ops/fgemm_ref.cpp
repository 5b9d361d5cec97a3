// The specification of the float GEMM (ops/fgemm.h): plain C++, one output at
// a time, in the contract's order.
#include <algorithm>
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

FloatMatrix GroupFloatRows(const FloatMatrix& w, int64_t group, uint8_t* dst) {
  FloatMatrix out = w;
  out.data = dst;
  out.group = group;
  if (group == 1) {
    std::memcpy(dst, w.data, w.bytes());
    return out;
  }
  // In the destination's order, group by group: the writes are one stream.
  const int64_t k = w.n_cols, k16 = k - k % 16;
  const size_t eb = w.elem_bytes(), chunk = 16 * eb, tail = static_cast<size_t>(k - k16) * eb;
  uint8_t* to = dst;
  for (int64_t g0 = 0; g0 < w.n_rows; g0 += group) {
    const int64_t g = std::min(group, w.n_rows - g0);
    for (int64_t i = 0; i < k16; i += 16) {
      for (int64_t j = 0; j < g; ++j, to += chunk) std::memcpy(to, w.row(g0 + j) + i * eb, chunk);
    }
    for (int64_t j = 0; j < g; ++j, to += tail) std::memcpy(to, w.row(g0 + j) + k16 * eb, tail);
  }
  return out;
}

void FloatRow(const FloatMatrix& w, int64_t r, float* out) {
  const FloatRowRef ref = w.row_ref(r);
  const int64_t k16 = w.n_cols - w.n_cols % 16;
  const size_t eb = w.elem_bytes();
  // Element i of the row: in chunk i / 16, or in the tail.
  auto at = [&](int64_t i) {
    return i < k16 ? ref.start + (i / 16) * ref.stride + (i % 16) * eb : ref.tail + (i - k16) * eb;
  };
  for (int64_t i = 0; i < w.n_cols; ++i) {
    switch (w.type) {
      case FloatWeight::kF32:
        std::memcpy(&out[i], at(i), 4);
        break;
      case FloatWeight::kF16:
      case FloatWeight::kBF16: {
        uint16_t h;
        std::memcpy(&h, at(i), 2);
        out[i] = w.type == FloatWeight::kF16 ? Fp16ToFp32(h) : Bf16ToFp32(h);
        break;
      }
    }
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
