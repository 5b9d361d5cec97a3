#include "sampling/grammar/char_set.h"

#include <algorithm>

namespace ember::grammar {

int DecodeUtf8Char(std::string_view s, size_t i, uint32_t* cp) {
  if (i >= s.size()) return 0;
  const auto b0 = static_cast<uint8_t>(s[i]);
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  // The second byte's allowed range excludes overlong forms (E0, F0),
  // surrogates (ED) and code points above U+10FFFF (F4).
  int len = 0;
  uint8_t lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  uint32_t v = b0 & (0x7Fu >> len);
  for (int k = 1; k < len; ++k) {
    if (i + static_cast<size_t>(k) >= s.size()) return 0;
    const auto b = static_cast<uint8_t>(s[i + static_cast<size_t>(k)]);
    if (b < lo || b > hi) return 0;
    lo = 0x80;
    hi = 0xBF;
    v = (v << 6) | (b & 0x3Fu);
  }
  *cp = v;
  return len;
}

CharSet CharSet::Range(uint32_t lo, uint32_t hi) {
  CharSet s;
  s.Add(lo, hi);
  return s;
}

void CharSet::Add(uint32_t lo, uint32_t hi) {
  if (lo > hi) std::swap(lo, hi);
  hi = std::min(hi, kMaxCodePoint);
  if (lo > hi) return;
  // Ranges entirely before [lo, hi] and not adjacent to it stay; the ones that
  // overlap or touch it merge into one.
  auto first = std::lower_bound(ranges_.begin(), ranges_.end(), lo,
                                [](const CodeRange& r, uint32_t v) { return r.hi + 1 < v; });
  auto last = first;
  while (last != ranges_.end() && last->lo <= hi + 1) {
    lo = std::min(lo, last->lo);
    hi = std::max(hi, last->hi);
    ++last;
  }
  first = ranges_.erase(first, last);
  ranges_.insert(first, CodeRange{lo, hi});
}

void CharSet::Add(const CharSet& other) {
  for (const CodeRange& r : other.ranges_) Add(r.lo, r.hi);
}

CharSet CharSet::Complement() const {
  CharSet out;
  uint32_t next = 0;  // first code point not yet covered
  for (const CodeRange& r : ranges_) {
    if (r.lo > next) out.ranges_.push_back({next, r.lo - 1});
    if (r.hi >= kMaxCodePoint) return out;
    next = r.hi + 1;
  }
  if (next <= kMaxCodePoint) out.ranges_.push_back({next, kMaxCodePoint});
  return out;
}

bool CharSet::Contains(uint32_t c) const { return Intersects(c, c); }

bool CharSet::Intersects(uint32_t lo, uint32_t hi) const {
  // The first range that ends at or after lo.
  auto it = std::lower_bound(ranges_.begin(), ranges_.end(), lo,
                             [](const CodeRange& r, uint32_t v) { return r.hi < v; });
  return it != ranges_.end() && it->lo <= hi;
}

bool CharSet::ContainsRange(uint32_t lo, uint32_t hi) const {
  // Ranges are merged: a covered [lo, hi] lies inside one of them.
  auto it = std::lower_bound(ranges_.begin(), ranges_.end(), lo,
                             [](const CodeRange& r, uint32_t v) { return r.hi < v; });
  return it != ranges_.end() && it->lo <= lo && it->hi >= hi;
}

bool CharSet::operator==(const CharSet& o) const {
  if (ranges_.size() != o.ranges_.size()) return false;
  for (size_t i = 0; i < ranges_.size(); ++i) {
    if (ranges_[i].lo != o.ranges_[i].lo || ranges_[i].hi != o.ranges_[i].hi) return false;
  }
  return true;
}

}  // namespace ember::grammar
