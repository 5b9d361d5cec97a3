#include "sampling/grammar/char_set.h"

#include <algorithm>

#include "platform/utf8.h"

namespace ember::grammar {

int DecodeUtf8Char(std::string_view s, size_t i, uint32_t* cp) { return utf8::Decode(s, i, cp); }

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
