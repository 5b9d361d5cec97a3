// Matching bytes: stack sets plus an unfinished UTF-8 character, advanced one
// byte at a time, and a memo of those steps (a lazily built DFA) for walks
// over the token trie, where the same states recur many times.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sampling/grammar/stacks.h"

namespace ember::grammar {

// The bytes of a UTF-8 character read so far. left == 0: none pending.
struct Utf8Partial {
  uint32_t value = 0;  // the bits read so far
  uint8_t left = 0;    // continuation bytes still expected
  uint8_t len = 0;     // the character's length in bytes
  bool operator==(const Utf8Partial& o) const {
    return value == o.value && left == o.left && len == o.len;
  }
};

// A matcher state: stacks in normal form and a pending partial character.
// While a character is pending, the stacks are those before it, without
// bottoms (a bottom cannot consume it).
struct ByteState {
  std::vector<uint32_t> stacks;
  Utf8Partial partial;
};

// The state after byte b, false when no parse survives. *escaped is set when
// b begins a character and a kUnknown bottom is among the stacks: the bytes
// from b on belong to whatever lies below.
bool AdvanceByte(StackStepper& st, const ByteState& in, uint8_t b, ByteState* out, bool* escaped);

// Whether the grammar may end in this state (the empty stack, nothing pending).
bool CanEnd(const ByteState& s);

// Interned byte states and their transitions.
class Walker {
 public:
  static constexpr int32_t kDead = -1;

  explicit Walker(StackStepper* st) : st_(st) {}

  uint32_t Intern(const ByteState& s);
  // The state after byte b (computed once, then remembered), or kDead.
  int32_t Next(uint32_t w, uint8_t b);

  const ByteState& state(uint32_t w) const { return states_[w].state; }
  // A kUnknown bottom is among the stacks and nothing is pending: the bytes
  // after this point may be consumed by whatever lies below.
  bool can_escape(uint32_t w) const { return states_[w].can_escape; }
  bool can_end(uint32_t w) const { return states_[w].can_end; }
  size_t size() const { return states_.size(); }

 private:
  void AppendPartialKey(const ByteState& s, std::string* key) const;

  struct Entry {
    ByteState state;
    bool can_escape = false;
    bool can_end = false;
    std::array<uint64_t, 4> first_bytes{};  // bytes that may come next (a quick filter)
  };
  StackStepper* st_;
  std::vector<Entry> states_;
  std::vector<int32_t> next_;  // [w * 256 + b]: kUnset, kDead or a state
  std::unordered_map<std::string, uint32_t> index_;
  ByteState scratch_;
};

}  // namespace ember::grammar
