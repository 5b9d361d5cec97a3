// The core's clock for the ISA ceiling tools (isa_ceiling_avx2.cpp,
// isa_ceiling_avx512vnni.cpp): a chain of dependent integer adds retires one
// add a cycle, so adds per second is the clock. x86 only (the asm).
#pragma once

#include <chrono>

namespace ember::bench {

using Clock = std::chrono::steady_clock;

inline double Seconds(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// GHz from 16 * iters dependent adds.
inline double MeasureClockGhz(long iters) {
  long x = 0;
  const auto t0 = Clock::now();
  for (long i = 0; i < 4 * iters; ++i) {
    asm volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
  }
  return 16.0 * iters / Seconds(t0) / 1e9;
}

}  // namespace ember::bench
