#include "sampling/temperature_draw.h"

#include <cmath>
#include <vector>

namespace ember {

int32_t DrawWithTemperature(const float* logits, int64_t n, float temperature, Rng& rng) {
  float max = logits[0];
  for (int64_t i = 1; i < n; ++i) max = std::fmax(max, logits[i]);
  std::vector<double> p(static_cast<size_t>(n));
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    p[i] = std::exp(static_cast<double>(logits[i] - max) / temperature);
    sum += p[i];
  }
  const double u = rng.NextDouble() * sum;
  double acc = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    acc += p[i];
    if (u < acc) return static_cast<int32_t>(i);
  }
  return static_cast<int32_t>(n - 1);  // u rounded up to sum
}

}  // namespace ember
