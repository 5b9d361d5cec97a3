#include "sampling/grammar/stacks.h"

#include <algorithm>

namespace ember::grammar {

StackArena::StackArena() {
  nodes_.push_back({UINT32_MAX, UINT32_MAX});  // kEmpty
  nodes_.push_back({UINT32_MAX, UINT32_MAX});  // kUnknown
}

uint32_t StackArena::Push(uint32_t pos, uint32_t parent) {
  const uint64_t key = (uint64_t{pos} << 32) | parent;
  auto [it, added] = index_.emplace(key, static_cast<uint32_t>(nodes_.size()));
  if (added) nodes_.push_back({pos, parent});
  return it->second;
}

std::vector<uint32_t> StackArena::Frames(uint32_t node) const {
  std::vector<uint32_t> out;
  for (; !IsBottom(node); node = parent(node)) out.push_back(pos(node));
  return out;
}

void StackStepper::Expand(uint32_t stack, std::vector<uint32_t>* out) {
  if (StackArena::IsBottom(stack)) {
    if (std::find(out->begin(), out->end(), stack) == out->end()) out->push_back(stack);
    return;
  }
  if (seen_.size() <= stack) seen_.resize(arena_->size() + 1024, 0);
  if (seen_[stack] == generation_) return;
  seen_[stack] = generation_;
  const Position& p = g_.positions[arena_->pos(stack)];
  const uint32_t below = arena_->parent(stack);
  if (p.has_chars()) out->push_back(stack);
  for (uint32_t r = p.refs_begin; r < p.refs_end; ++r) {
    const RefEdge& e = g_.ref_edges[r];
    // The callee runs above the position to go on at (or above `below` when
    // that position could only end the rule).
    const uint32_t after =
        g_.positions[e.target].exit_only() ? below : arena_->Push(e.target, below);
    Expand(arena_->Push(g_.rules[e.rule].start, after), out);
  }
  if (p.final) Expand(below, out);
}

void StackStepper::Step(const std::vector<uint32_t>& in, uint32_t c, std::vector<uint32_t>* out,
                        bool* escaped) {
  out->clear();
  BeginSet();
  for (const uint32_t s : in) {
    if (s == StackArena::kUnknown) *escaped = true;
    if (StackArena::IsBottom(s)) continue;
    const Position& p = g_.positions[arena_->pos(s)];
    const uint32_t below = arena_->parent(s);
    for (uint32_t e = p.chars_begin; e < p.chars_end; ++e) {
      const CharEdge& edge = g_.char_edges[e];
      if (!g_.classes[edge.cls].Contains(c)) continue;
      Expand(g_.positions[edge.target].exit_only() ? below : arena_->Push(edge.target, below), out);
    }
  }
  std::sort(out->begin(), out->end());
}

bool StackStepper::CanMatch(const std::vector<uint32_t>& in, uint32_t lo, uint32_t hi) const {
  for (const uint32_t s : in) {
    if (StackArena::IsBottom(s)) continue;
    const Position& p = g_.positions[arena_->pos(s)];
    for (uint32_t e = p.chars_begin; e < p.chars_end; ++e) {
      if (g_.classes[g_.char_edges[e].cls].set.Intersects(lo, hi)) return true;
    }
  }
  return false;
}

std::vector<uint32_t> StartStacks(StackStepper& st, uint32_t rule, uint32_t below) {
  std::vector<uint32_t> out;
  st.BeginSet();
  st.Expand(st.arena().Push(st.grammar().rules[rule].start, below), &out);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ember::grammar
