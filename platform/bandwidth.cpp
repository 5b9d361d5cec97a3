#include "platform/bandwidth.h"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <vector>

namespace ember {

double MeasureReadBandwidth(int n_threads, size_t bytes, int reps) {
  const size_t n = bytes / sizeof(uint64_t);
  std::vector<uint64_t> buf(n);
  // Touch every page first (from all threads, like the weights later).
#pragma omp parallel for num_threads(n_threads) schedule(static)
  for (size_t i = 0; i < n; ++i) buf[i] = i;
  double best = 0.0;
  uint64_t sink = 0;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    uint64_t total = 0;
    // Four independent xor chains per thread let the loads stream; the
    // compiler vectorises this loop at -O2/-O3.
#pragma omp parallel for num_threads(n_threads) schedule(static) reduction(^ : total)
    for (size_t i = 0; i < n; i += 4) {
      total ^= buf[i] ^ buf[i + 1] ^ buf[i + 2] ^ buf[i + 3];
    }
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    sink ^= total;
    if (s > 0) best = std::max(best, static_cast<double>(n * sizeof(uint64_t)) / s / 1e9);
  }
  // Keep the reads from being optimised away.
  if (sink == 0x5eed) std::abort();
  return best;
}

}  // namespace ember
