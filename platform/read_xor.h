// The inner loop of the read-bandwidth probe (platform/bandwidth.cpp): one
// thread streams once through its own contiguous slice of a large buffer, as
// a decode thread streams through its share of every weight matrix.
//
// Contract: every variant returns the xor of the bytes / 8 whole 64-bit words
// at p (any alignment; a tail of fewer than 8 bytes is not read): the bits of
// ReadXor_ref. The result is what keeps the loads from being optimised away,
// and it lets a test check that a variant really reads every word.
//
// How they read: the widest loads the ISA has, eight independent xor
// accumulators (so no load waits on the one before it and the core keeps as
// many cache-line misses in flight as it can), in `streams` forward streams
// that the hardware prefetchers follow: the bytes cut into `streams` equal
// parts of whole steps, read a step of each part in turn (what is left past
// the parts, less than a step per stream, after them as one stream). One
// stream is how decode's GEMV reads its share of a matrix; several read
// more on some machines (docs/PERFORMANCE.md "Stop 39": 4 streams +20% on
// a Zen 3 guest), which the probe must see to measure the real roof.
#pragma once

#include <cstddef>
#include <cstdint>

#include "platform/cpu_features.h"

namespace ember {

using ReadXorFn = uint64_t (*)(const void* p, size_t bytes, int streams);

// streams < 1 reads as 1.
uint64_t ReadXor_ref(const void* p, size_t bytes, int streams);     // every architecture
uint64_t ReadXor_avx2(const void* p, size_t bytes, int streams);    // x86-64: 32-byte loads
uint64_t ReadXor_avx512(const void* p, size_t bytes, int streams);  // x86-64: 64-byte loads
uint64_t ReadXor_neon(const void* p, size_t bytes, int streams);    // ARM NEON: 16-byte loads

// The order every variant reads in: step(offset) for each whole step of kStep
// bytes of [0, bytes), in `streams` parts read a step of each in turn, then the
// whole steps past the parts as one stream. Returns the bytes it covered, a
// multiple of kStep; what is left the variant reads itself.
template <size_t kStep, class Step>
inline size_t ForEachStep(size_t bytes, int streams, Step&& step) {
  const size_t ns = static_cast<size_t>(streams > 1 ? streams : 1);
  const size_t part = bytes / kStep / ns * kStep;  // bytes per stream
  for (size_t i = 0; i < part; i += kStep) {
    for (size_t s = 0; s < ns; ++s) step(s * part + i);
  }
  size_t i = ns * part;
  for (; i + kStep <= bytes; i += kStep) step(i);
  return i;
}

// The variant for an ISA level (its widest loads: AVX-512 for both AVX-512
// levels, NEON for all NEON levels); nullptr when this build has none for it
// (another architecture).
ReadXorFn ReadXorFor(Isa isa);

// The variant the probe uses: the widest this CPU supports. Not EMBER_ISA:
// the probe measures the machine's memory, not the kernels a user forced.
ReadXorFn HostReadXor();

}  // namespace ember
