// GBNF for the decimal integers in a range (JSON schema minimum/maximum):
// exactly the integers in [lo, hi], written as JSON writes them (no leading
// zeros, no "-0", no "+").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ember {

// Integers without an upper bound have at most this many digits (as JSON
// numbers in the grammars: a model cannot run on forever).
constexpr int kMaxIntegerDigits = 16;

// A GBNF expression (no rules) for the integers in [lo, hi]; an absent bound
// is open (within kMaxIntegerDigits digits). Requires lo <= hi when both are given.
std::string IntRangeGbnf(std::optional<int64_t> lo, std::optional<int64_t> hi);

// The same for magnitudes (non-negative integers) in [lo, hi]; hi absent: open.
std::string UintRangeGbnf(uint64_t lo, std::optional<uint64_t> hi);

}  // namespace ember
