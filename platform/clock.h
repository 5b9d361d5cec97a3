// Seconds between two steady_clock readings, as a double: the timings ember
// reports (tokens per second, grammar table build time) and its measuring
// loops (bandwidth probes).
#pragma once

#include <chrono>

namespace ember {

inline double SecondsBetween(std::chrono::steady_clock::time_point a,
                             std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

inline double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return SecondsBetween(t0, std::chrono::steady_clock::now());
}

}  // namespace ember
