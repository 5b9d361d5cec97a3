// A set of Unicode code points as sorted, disjoint, non-adjacent ranges: the
// terminals of a grammar ("a", [a-z0-9], [^"\\], .).
#pragma once

#include <cstdint>
#include <vector>

namespace ember::grammar {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;

struct CodeRange {
  uint32_t lo;
  uint32_t hi;  // inclusive
};

class CharSet {
 public:
  CharSet() = default;
  static CharSet Single(uint32_t c) { return Range(c, c); }
  static CharSet Range(uint32_t lo, uint32_t hi);
  static CharSet Any() { return Range(0, kMaxCodePoint); }

  // Adds [lo, hi] (in any order relative to what is there) and keeps the
  // ranges sorted, disjoint and merged.
  void Add(uint32_t lo, uint32_t hi);
  void Add(const CharSet& other);
  // Every code point in [0, kMaxCodePoint] not in the set.
  CharSet Complement() const;

  bool Contains(uint32_t c) const;
  // Whether some code point in [lo, hi] is in the set.
  bool Intersects(uint32_t lo, uint32_t hi) const;
  // Whether every code point in [lo, hi] is in the set.
  bool ContainsRange(uint32_t lo, uint32_t hi) const;
  bool empty() const { return ranges_.empty(); }
  const std::vector<CodeRange>& ranges() const { return ranges_; }
  bool operator==(const CharSet& o) const;

 private:
  std::vector<CodeRange> ranges_;
};

}  // namespace ember::grammar
