#include "platform/bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include <unistd.h>

#include "platform/clock.h"
#include "platform/read_xor.h"
#include "platform/streamed_memory.h"

namespace ember {
namespace {

// Slices start on page boundaries: whole pages per thread, and every vector
// load of the wide variants falls inside one cache line.
constexpr size_t kPage = 4096;

// Passes go on past `reps` until this long has been spent in them. The rate
// moves from one moment to the next on shared and virtual machines: on the
// 2-vCPU KVM guest of docs/PERFORMANCE.md two threads read 42-52 GB/s for a
// while and 80-92 GB/s the next (wherever the host puts the vCPUs), so the
// best of five 256 MiB passes (30 ms) often caught a low moment and decode,
// which runs for seconds, then read faster than the "peak".
constexpr double kMinSeconds = 0.25;

// A buffer of whole pages, in the memory the packed weights live in (huge
// pages where the system gives them, platform/streamed_memory.h): the probe
// rates the reads decode makes, and with 4 KiB pages it read 13-17% less on
// the Zen 3 guest of docs/PERFORMANCE.md.
struct ReadBuffer {
  StreamedBuffer data;
  size_t bytes = 0;
};

// Slice c of n_slices: [begin, end) in bytes, whole pages, the last one
// taking the remainder. Thread c of a pass reads slice c, as decode's thread c
// reads its contiguous share of each weight matrix (ops/matmul.cpp).
struct Slice {
  size_t begin, end;
};
Slice SliceOf(size_t bytes, int c, int n_slices) {
  const size_t pages = bytes / kPage, n = static_cast<size_t>(n_slices);
  const size_t u = static_cast<size_t>(c);
  return {pages * u / n * kPage, u + 1 == n ? bytes : pages * (u + 1) / n * kPage};
}

// At least `bytes` (and one page), every page written by the thread that will
// read its slice with n_threads threads, so no page fault lands inside a
// timed pass and, on NUMA machines, the pages sit by their reader. The values
// (each word its own index) keep the xor from being trivially zero.
ReadBuffer TouchedBuffer(size_t bytes, int n_threads) {
  ReadBuffer buf;
  buf.bytes = std::max(kPage, (bytes + kPage - 1) / kPage * kPage);
  buf.data = AllocStreamed(buf.bytes);
  uint64_t* words = reinterpret_cast<uint64_t*>(buf.data.get());
  const size_t total = buf.bytes;
#pragma omp parallel for num_threads(n_threads) schedule(static, 1)
  for (int c = 0; c < n_threads; ++c) {
    const Slice s = SliceOf(total, c, n_threads);
    for (size_t i = s.begin / 8; i < s.end / 8; ++i) words[i] = i;
  }
  return buf;
}

// Streams per thread a pass reads its slice in (platform/read_xor.h); the
// best pass of either counts. One is how decode reads; four read 20% more at
// 1 thread and 25% more at 2 on the Zen 3 guest of docs/PERFORMANCE.md
// ("Stop 39"; 2-3% on the AVX-512 host of "Bandwidth probe"), and the roof
// is what the memory gives, not what one way of reading it gets.
constexpr int kStreamChoices[] = {1, 4};

// One timed read of the whole buffer, thread c streaming through slice c in
// `streams` streams; GB/s (0 if the clock did not move). The time includes
// waking the threads and waiting for the slowest, as a decode matmul's does.
double ReadPass(const ReadBuffer& buf, ReadXorFn read, int n_threads, int streams, uint64_t* sink) {
  const unsigned char* p = buf.data.get();
  const size_t bytes = buf.bytes;
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t total = 0;
#pragma omp parallel for num_threads(n_threads) schedule(static, 1) reduction(^ : total)
  for (int c = 0; c < n_threads; ++c) {
    const Slice s = SliceOf(bytes, c, n_threads);
    total ^= read(p + s.begin, s.end - s.begin, streams);
  }
  const double secs = SecondsSince(t0);
  *sink ^= total;
  return secs > 0 ? static_cast<double>(bytes) / secs / 1e9 : 0.0;
}

void KeepAlive(uint64_t sink) {
  // Keep the reads from being optimised away.
  if (sink == 0x5eed) std::abort();
}

// MeasureReadBandwidth's passes, on the calling thread.
double MeasureHere(int n_threads, size_t bytes, int reps) {
  n_threads = std::max(1, n_threads);
  const ReadXorFn read = HostReadXor();
  const ReadBuffer buf = TouchedBuffer(bytes, n_threads);
  double best = 0.0;
  uint64_t sink = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps || SecondsSince(t0) < kMinSeconds; ++r) {
    for (int streams : kStreamChoices) {
      best = std::max(best, ReadPass(buf, read, n_threads, streams, &sink));
    }
  }
  KeepAlive(sink);
  return best;
}

}  // namespace

double MeasureReadBandwidth(int n_threads, size_t bytes, int reps) {
  // On a thread of its own, whose OpenMP pool ends with it (as the scheduler's
  // profile, platform/scheduler.cpp): a pool left idle on the caller's thread
  // counts as busy to libgomp, which then makes every other team's threads
  // sleep between regions when threads outnumber CPUs (a load-time team on the
  // loading thread cost a batcher's decode ~30%, docs/PERFORMANCE.md "Stop 54").
  double gbps = 0.0;
  std::thread worker([&] { gbps = MeasureHere(n_threads, bytes, reps); });
  worker.join();
  return gbps;
}

std::vector<double> MeasureReadBandwidthProfile(int max_threads, size_t bytes, int reps) {
  max_threads = std::max(1, max_threads);
  const ReadXorFn read = HostReadXor();
  const ReadBuffer buf = TouchedBuffer(bytes, max_threads);
  std::vector<double> best(static_cast<size_t>(max_threads), 0.0);
  uint64_t sink = 0;
  // kMinSeconds for the whole profile, not per count: the rounds are one
  // continuous read, and the profile of a 64-core machine stays short.
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps || SecondsSince(t0) < kMinSeconds; ++r) {
    for (int t = 1; t <= max_threads; ++t) {
      for (int streams : kStreamChoices) {
        best[static_cast<size_t>(t - 1)] =
            std::max(best[static_cast<size_t>(t - 1)], ReadPass(buf, read, t, streams, &sink));
      }
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
