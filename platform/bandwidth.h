// Memory read bandwidth, measured: the ceiling for decode, which reads every
// weight byte once per token (docs/DESIGN.md §3, §8).
//
// A pass reads the whole buffer once the way decode reads its weights: thread
// c streams through the c-th contiguous slice with the widest loads the CPU
// has (platform/read_xor.h), and the pass takes as long as its slowest thread.
// The figure is the best pass: the roof a well-written streaming read reaches
// on this machine, which decode can approach but not pass (a probe that reads
// slower than the kernels, as the earlier scalar loop did, puts decode above
// 100% of it).
#pragma once

#include <cstddef>
#include <vector>

namespace ember {

// Reads a buffer of `bytes` (much larger than the caches) with n_threads
// threads, `reps` times and for at least a quarter of a second, and returns
// the best rate in GB/s (1e9 bytes/s). Runs on a thread of its own, so that no
// OpenMP pool stays behind on the caller's (bandwidth.cpp says why).
double MeasureReadBandwidth(int n_threads, size_t bytes = size_t{256} << 20, int reps = 5);

// The read bandwidth for 1..max_threads threads over one buffer of `bytes`:
// out[i] is the best of the passes with i + 1 threads: at least `reps` of
// each, for at least a quarter of a second in all. The passes go round the
// thread counts, so a burst of other load on the machine costs one pass of
// each count rather than every pass of one count.
std::vector<double> MeasureReadBandwidthProfile(int max_threads, size_t bytes, int reps);

// The buffer size for MeasureReadBandwidthProfile: 256 MiB (far beyond the
// last-level caches of the machines ember targets), or an eighth of the RAM
// on boards with less than 2 GiB, at least 32 MiB.
size_t ProfileBufferBytes();

}  // namespace ember
