#include "platform/bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <unistd.h>

namespace ember {
namespace {

// A buffer of n words, every page touched (from n_threads threads, like the
// weights later), so no page fault lands inside a timed pass.
std::vector<uint64_t> TouchedBuffer(size_t n, int n_threads) {
  std::vector<uint64_t> buf(n);
#pragma omp parallel for num_threads(n_threads) schedule(static)
  for (size_t i = 0; i < n; ++i) buf[i] = i;
  return buf;
}

// One timed read of the whole buffer; GB/s (0 if the clock did not move).
double ReadPass(const std::vector<uint64_t>& buf, int n_threads, uint64_t* sink) {
  const size_t n = buf.size() & ~size_t{3};
  const uint64_t* p = buf.data();
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t total = 0;
  // Four independent xor chains per thread let the loads stream; the
  // compiler vectorises this loop at -O2/-O3.
#pragma omp parallel for num_threads(n_threads) schedule(static) reduction(^ : total)
  for (size_t i = 0; i < n; i += 4) {
    total ^= p[i] ^ p[i + 1] ^ p[i + 2] ^ p[i + 3];
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  *sink ^= total;
  return s > 0 ? static_cast<double>(n * sizeof(uint64_t)) / s / 1e9 : 0.0;
}

void KeepAlive(uint64_t sink) {
  // Keep the reads from being optimised away.
  if (sink == 0x5eed) std::abort();
}

}  // namespace

double MeasureReadBandwidth(int n_threads, size_t bytes, int reps) {
  n_threads = std::max(1, n_threads);
  const std::vector<uint64_t> buf = TouchedBuffer(std::max<size_t>(bytes / 8, 4), n_threads);
  double best = 0.0;
  uint64_t sink = 0;
  for (int r = 0; r < reps; ++r) best = std::max(best, ReadPass(buf, n_threads, &sink));
  KeepAlive(sink);
  return best;
}

std::vector<double> MeasureReadBandwidthProfile(int max_threads, size_t bytes, int reps) {
  max_threads = std::max(1, max_threads);
  const std::vector<uint64_t> buf = TouchedBuffer(std::max<size_t>(bytes / 8, 4), max_threads);
  std::vector<double> best(static_cast<size_t>(max_threads), 0.0);
  uint64_t sink = 0;
  for (int r = 0; r < reps; ++r) {
    for (int t = 1; t <= max_threads; ++t) {
      best[static_cast<size_t>(t - 1)] =
          std::max(best[static_cast<size_t>(t - 1)], ReadPass(buf, t, &sink));
    }
  }
  KeepAlive(sink);
  return best;
}

size_t ProfileBufferBytes() {
  size_t bytes = size_t{256} << 20;
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) {
    const double ram = static_cast<double>(pages) * static_cast<double>(page);
    if (ram < 2.0 * (1 << 30))
      bytes = std::max<size_t>(size_t{32} << 20, static_cast<size_t>(ram / 8));
  }
#endif
  return bytes;
}

}  // namespace ember
