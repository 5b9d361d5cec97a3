#include "ops/convert.h"
#include "quant/fp16.h"

namespace ember {

void Fp32ToFp16Row_ref(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = Fp32ToFp16(x[i]);
}

}  // namespace ember
