// The matcher's parse stacks and how they consume input (docs/GRAMMAR.md,
// "The matcher").
//
// A stack is a list of frames, each a position of a compiled grammar: the top
// frame is where the matcher stands inside the rule it is running; each frame
// below is where its caller goes on once that rule ends. Stacks are
// hash-consed: a node is (top position, the stack below), equal stacks are the
// same node, so a stack is one uint32_t, comparing and hashing stacks is free,
// and stacks share their common bottoms.
//
// Two nodes are special bottoms. kEmpty is the empty stack: the grammar has
// been matched completely (end of generation is allowed). kUnknown stands for
// "whatever lies below": the mask tables are computed on stacks [kUnknown, f]
// for each position f, so that what they find holds whatever the real stack
// below f is; a stack that pops down to kUnknown and must consume more has
// *escaped* its top frame, and the rest of the token then depends on the
// real stack.
//
// Normal form (every stack set the matcher holds is in it): each stack is a
// bottom or has a top position with char edges; no stack appears twice; the
// set is sorted. Expand brings a stack into normal form: it follows the ref
// edges of its top (pushing the callee's start, above the position to go on at
// afterwards -- or above nothing when that position could only end the rule,
// so right recursion does not grow the stack) and pops tops that may end.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sampling/grammar/compiled_grammar.h"

namespace ember::grammar {

class StackArena {
 public:
  static constexpr uint32_t kEmpty = 0;
  static constexpr uint32_t kUnknown = 1;
  static bool IsBottom(uint32_t node) { return node <= kUnknown; }

  StackArena();
  // The stack with `pos` on top of `parent` (the same node for the same pair).
  uint32_t Push(uint32_t pos, uint32_t parent);
  uint32_t pos(uint32_t node) const { return nodes_[node].pos; }
  uint32_t parent(uint32_t node) const { return nodes_[node].parent; }
  size_t size() const { return nodes_.size(); }
  // Frames from the top down (for tests and messages).
  std::vector<uint32_t> Frames(uint32_t node) const;

 private:
  struct Node {
    uint32_t pos;
    uint32_t parent;
  };
  std::vector<Node> nodes_;
  std::unordered_map<uint64_t, uint32_t> index_;  // (pos << 32 | parent) -> node
};

// Steps stack sets through code points. Holds scratch memory; one per thread.
class StackStepper {
 public:
  StackStepper(const CompiledGrammar& g, StackArena* arena) : g_(g), arena_(arena) {}

  // Appends the normal form of `stack` to *out, skipping stacks already added
  // since the last BeginSet.
  void BeginSet() { ++generation_; }
  void Expand(uint32_t stack, std::vector<uint32_t>* out);
  // The stacks after code point c, sorted; *escaped is set when a kUnknown
  // bottom in `in` would have had to consume it.
  void Step(const std::vector<uint32_t>& in, uint32_t c, std::vector<uint32_t>* out, bool* escaped);
  // Whether a top of some (non-bottom) stack in `in` accepts a code point in [lo, hi].
  bool CanMatch(const std::vector<uint32_t>& in, uint32_t lo, uint32_t hi) const;

  const CompiledGrammar& grammar() const { return g_; }
  StackArena& arena() { return *arena_; }

 private:
  const CompiledGrammar& g_;
  StackArena* arena_;
  uint32_t generation_ = 1;
  std::vector<uint32_t> seen_;  // [node]: generation in which it was expanded
};

// The starting stacks of rule `rule` (normal form, sorted), above `below`.
std::vector<uint32_t> StartStacks(StackStepper& st, uint32_t rule, uint32_t below);

}  // namespace ember::grammar
