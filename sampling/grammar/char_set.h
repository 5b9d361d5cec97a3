// A set of Unicode code points as sorted, disjoint, non-adjacent ranges: the
// terminals of a grammar ("a", [a-z0-9], [^"\\], .).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace ember::grammar {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;

// One UTF-8 character of s at s[i], strictly (RFC 3629): returns its length
// (1..4) and sets *cp, or 0 when the bytes there are not a whole valid
// character: a continuation or 0xC0, 0xC1, 0xF5..0xFF lead byte, a missing or
// malformed continuation byte, an overlong form, a surrogate, or a code point
// above U+10FFFF (platform/utf8.h's utf8::Decode). The grammar text parsers
// (GBNF, the schema converter's regular expressions) read their literals with it.
int DecodeUtf8Char(std::string_view s, size_t i, uint32_t* cp);

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
