#include "sampling/grammar/walker.h"

#include <algorithm>

namespace ember::grammar {
namespace {

constexpr int32_t kUnset = -2;

// The code points a partial character can still become.
void PartialRange(const Utf8Partial& p, uint32_t* lo, uint32_t* hi) {
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};  // by length: no overlong forms
  const uint32_t shift = 6u * p.left;
  *lo = std::max(p.value << shift, kMin[p.len]);
  *hi = std::min((p.value << shift) | ((1u << shift) - 1), kMaxCodePoint);
}

void DropBottoms(std::vector<uint32_t>* stacks) {
  stacks->erase(std::remove_if(stacks->begin(), stacks->end(), StackArena::IsBottom),
                stacks->end());
}

}  // namespace

// The part of a state's key that stands for its pending character. Two
// pending characters whose possible completions every char edge of every top
// accepts or rejects as a whole ("uniform") step alike, whatever their exact
// bytes: they share a key made of that accept/reject pattern (so a walk over
// thousands of CJK tokens inside a JSON string meets a handful of states, not
// one per byte prefix). Only once the character's validity is settled (two
// bytes read of three or four; a two-byte character is settled by its lead).
void Walker::AppendPartialKey(const ByteState& s, std::string* key) const {
  const Utf8Partial& p = s.partial;
  if (p.left == 0) return;
  uint32_t lo = 0, hi = 0;
  PartialRange(p, &lo, &hi);
  if (p.len >= 3 && p.len - p.left >= 2) {
    const CompiledGrammar& g = st_->grammar();
    std::string pattern;
    bool uniform = true;
    for (const uint32_t n : s.stacks) {
      if (StackArena::IsBottom(n)) continue;
      const Position& pos = g.positions[st_->arena().pos(n)];
      for (uint32_t e = pos.chars_begin; e < pos.chars_end && uniform; ++e) {
        const CharSet& set = g.classes[g.char_edges[e].cls].set;
        const bool all = set.ContainsRange(lo, hi);
        uniform = all || !set.Intersects(lo, hi);
        pattern.push_back(all ? '1' : '0');
      }
    }
    if (uniform) {
      key->push_back('u');
      key->append(pattern);
      return;
    }
  }
  key->append(reinterpret_cast<const char*>(&p.value), 4);
}

bool AdvanceByte(StackStepper& st, const ByteState& in, uint8_t b, ByteState* out, bool* escaped) {
  if (in.partial.left == 0) {
    if (b < 0x80) {
      out->partial = Utf8Partial();
      st.Step(in.stacks, b, &out->stacks, escaped);
      return !out->stacks.empty();
    }
    int len = 0;
    if ((b & 0xE0) == 0xC0) len = 2;
    if ((b & 0xF0) == 0xE0) len = 3;
    if ((b & 0xF8) == 0xF0) len = 4;
    if (len == 0) return false;  // a continuation byte or 0xF8..0xFF cannot begin a character
    if (std::find(in.stacks.begin(), in.stacks.end(), StackArena::kUnknown) != in.stacks.end()) {
      *escaped = true;
    }
    out->partial.value = b & (0x7Fu >> len);
    out->partial.left = static_cast<uint8_t>(len - 1);
    out->partial.len = static_cast<uint8_t>(len);
    out->stacks = in.stacks;
    DropBottoms(&out->stacks);
  } else {
    if ((b & 0xC0) != 0x80) return false;
    out->partial = in.partial;
    out->partial.value = (out->partial.value << 6) | (b & 0x3F);
    --out->partial.left;
    if (out->partial.left == 0) {
      uint32_t lo = 0, hi = 0;
      PartialRange(out->partial, &lo, &hi);
      if (lo != out->partial.value || out->partial.value > kMaxCodePoint) return false;  // overlong
      const uint32_t c = out->partial.value;
      out->partial = Utf8Partial();
      st.Step(in.stacks, c, &out->stacks, escaped);
      return !out->stacks.empty();
    }
    out->stacks = in.stacks;
  }
  // A character is pending: some top must accept one of its completions.
  uint32_t lo = 0, hi = 0;
  PartialRange(out->partial, &lo, &hi);
  return lo <= hi && st.CanMatch(out->stacks, lo, hi);
}

bool CanEnd(const ByteState& s) {
  return s.partial.left == 0 &&
         std::find(s.stacks.begin(), s.stacks.end(), StackArena::kEmpty) != s.stacks.end();
}

uint32_t Walker::Intern(const ByteState& s) {
  std::string key(reinterpret_cast<const char*>(s.stacks.data()), s.stacks.size() * 4);
  key.push_back(static_cast<char>(s.partial.left));
  key.push_back(static_cast<char>(s.partial.len));
  AppendPartialKey(s, &key);
  auto [it, added] = index_.emplace(std::move(key), static_cast<uint32_t>(states_.size()));
  if (!added) return it->second;
  Entry e;
  e.state = s;
  const bool pending = s.partial.left != 0;
  const auto has = [&](uint32_t n) {
    return std::find(s.stacks.begin(), s.stacks.end(), n) != s.stacks.end();
  };
  e.can_escape = !pending && has(StackArena::kUnknown);
  e.can_end = !pending && has(StackArena::kEmpty);
  if (pending) {
    e.first_bytes = {0, 0, ~uint64_t{0}, 0};  // continuation bytes 0x80..0xBF
  } else if (e.can_escape) {
    e.first_bytes = {~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}};
  } else {
    const CompiledGrammar& g = st_->grammar();
    for (const uint32_t n : s.stacks) {
      if (StackArena::IsBottom(n)) continue;
      const auto& lb = g.lead_bytes[st_->arena().pos(n)];
      for (int i = 0; i < 4; ++i) e.first_bytes[i] |= lb[i];
    }
  }
  states_.push_back(std::move(e));
  next_.resize(states_.size() * 256, kUnset);
  return it->second;
}

int32_t Walker::Next(uint32_t w, uint8_t b) {
  int32_t& slot = next_[size_t{w} * 256 + b];
  if (slot != kUnset) return slot;
  const Entry& e = states_[w];
  int32_t result = kDead;
  if ((e.first_bytes[b >> 6] >> (b & 63)) & 1) {
    bool escaped = false;
    const ByteState from = e.state;  // (states_ may grow below)
    if (AdvanceByte(*st_, from, b, &scratch_, &escaped)) {
      result = static_cast<int32_t>(Intern(scratch_));
    }
  }
  next_[size_t{w} * 256 + b] = result;  // (slot may dangle: next_ may have grown)
  return result;
}

}  // namespace ember::grammar
