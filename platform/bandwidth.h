// Memory read bandwidth, measured: the ceiling for decode, which reads every
// weight byte once per token (../shared/DESIGN.md §3, §8).
#pragma once

#include <cstddef>

namespace ember {

// Reads a buffer of `bytes` (much larger than the caches) with n_threads
// threads, `reps` times, and returns the best rate in GB/s (1e9 bytes/s).
double MeasureReadBandwidth(int n_threads, size_t bytes = size_t{256} << 20, int reps = 5);

}  // namespace ember
