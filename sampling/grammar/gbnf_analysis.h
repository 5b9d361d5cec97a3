// Facts about a parsed grammar that compiling it needs: which rules can match
// the empty string, which are recursive, and whether any rule is left
// recursive (an error: a top-down matcher would expand it forever).
#pragma once

#include <cstdint>
#include <vector>

#include "platform/status.h"
#include "sampling/grammar/gbnf.h"

namespace ember::grammar {

struct GbnfFacts {
  std::vector<bool> nullable;   // [rule] matches the empty string
  std::vector<bool> recursive;  // [rule] can reach itself through references
  std::vector<uint32_t> uses;   // [rule] reference sites in the whole grammar
};

// Whether `e` matches the empty string, given the rules' nullability.
bool IsNullable(const GbnfExpr& e, const std::vector<bool>& nullable_rules);

// Computes the facts; fails on left recursion, naming the cycle:
// "left recursion: expr -> term -> expr (a rule can reach itself without
// consuming input)".
Status AnalyzeGbnf(const GbnfGrammar& g, GbnfFacts* out);

}  // namespace ember::grammar
