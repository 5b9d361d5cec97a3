#include "sampling/grammar/gbnf_analysis.h"

#include <algorithm>
#include <functional>
#include <string>

namespace ember::grammar {
namespace {

// Rules referenced where no input has been consumed yet (leftmost, or after
// a prefix that can match the empty string).
void LeftRefs(const GbnfExpr& e, const std::vector<bool>& nullable, std::vector<uint32_t>* out) {
  switch (e.kind) {
    case GbnfExpr::Kind::kChars:
      return;
    case GbnfExpr::Kind::kRef:
      out->push_back(e.rule);
      return;
    case GbnfExpr::Kind::kRepeat:
      if (e.max > 0) LeftRefs(e.items[0], nullable, out);
      return;
    case GbnfExpr::Kind::kAlt:
      for (const GbnfExpr& x : e.items) LeftRefs(x, nullable, out);
      return;
    case GbnfExpr::Kind::kSeq:
      for (const GbnfExpr& x : e.items) {
        LeftRefs(x, nullable, out);
        if (!IsNullable(x, nullable)) return;
      }
      return;
  }
}

void AllRefs(const GbnfExpr& e, std::vector<uint32_t>* out) {
  if (e.kind == GbnfExpr::Kind::kRef) out->push_back(e.rule);
  for (const GbnfExpr& x : e.items) AllRefs(x, out);
}

// A cycle in `edges` as rule indices (first == last), or empty.
std::vector<uint32_t> FindCycle(const std::vector<std::vector<uint32_t>>& edges) {
  const size_t n = edges.size();
  std::vector<uint8_t> color(n, 0);  // 0 new, 1 on the path, 2 done
  std::vector<uint32_t> path;
  std::vector<uint32_t> cycle;
  std::function<bool(uint32_t)> visit = [&](uint32_t r) {
    color[r] = 1;
    path.push_back(r);
    for (uint32_t next : edges[r]) {
      if (color[next] == 1) {
        auto from = std::find(path.begin(), path.end(), next);
        cycle.assign(from, path.end());
        cycle.push_back(next);
        return true;
      }
      if (color[next] == 0 && visit(next)) return true;
    }
    path.pop_back();
    color[r] = 2;
    return false;
  };
  for (uint32_t r = 0; r < n; ++r) {
    if (color[r] == 0 && visit(r)) return cycle;
  }
  return {};
}

}  // namespace

bool IsNullable(const GbnfExpr& e, const std::vector<bool>& nullable_rules) {
  switch (e.kind) {
    case GbnfExpr::Kind::kChars:
      return false;
    case GbnfExpr::Kind::kRef:
      return nullable_rules[e.rule];
    case GbnfExpr::Kind::kRepeat:
      return e.min == 0 || IsNullable(e.items[0], nullable_rules);
    case GbnfExpr::Kind::kAlt:
      return std::any_of(e.items.begin(), e.items.end(),
                         [&](const GbnfExpr& x) { return IsNullable(x, nullable_rules); });
    case GbnfExpr::Kind::kSeq:
      return std::all_of(e.items.begin(), e.items.end(),
                         [&](const GbnfExpr& x) { return IsNullable(x, nullable_rules); });
  }
  return false;
}

Status AnalyzeGbnf(const GbnfGrammar& g, GbnfFacts* out) {
  const size_t n = g.rules.size();
  GbnfFacts f;
  // Nullability: a fixpoint from "nothing is nullable".
  f.nullable.assign(n, false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < n; ++r) {
      if (!f.nullable[r] && IsNullable(g.rules[r].body, f.nullable)) {
        f.nullable[r] = true;
        changed = true;
      }
    }
  }
  // Left recursion: a cycle among leftmost references.
  std::vector<std::vector<uint32_t>> left(n), all(n);
  f.uses.assign(n, 0);
  for (size_t r = 0; r < n; ++r) {
    LeftRefs(g.rules[r].body, f.nullable, &left[r]);
    AllRefs(g.rules[r].body, &all[r]);
    for (uint32_t x : all[r]) ++f.uses[x];
  }
  const std::vector<uint32_t> cycle = FindCycle(left);
  if (!cycle.empty()) {
    std::string names;
    for (uint32_t r : cycle) names += (names.empty() ? "" : " -> ") + g.rules[r].name;
    return InvalidArgument("left recursion: " + names +
                           " (a rule can reach itself without consuming input, so the matcher "
                           "would expand it forever; rewrite it with repetition, e.g. "
                           "expr ::= term (\"+\" term)*)");
  }
  // Recursive rules: those on a cycle of references (r reaches itself).
  f.recursive.assign(n, false);
  for (size_t r = 0; r < n; ++r) {
    std::vector<bool> seen(n, false);
    std::vector<uint32_t> todo(all[r].begin(), all[r].end());
    while (!todo.empty()) {
      const uint32_t x = todo.back();
      todo.pop_back();
      if (x == r) {
        f.recursive[r] = true;
        break;
      }
      if (seen[x]) continue;
      seen[x] = true;
      todo.insert(todo.end(), all[x].begin(), all[x].end());
    }
  }
  *out = std::move(f);
  return Status::Ok();
}

}  // namespace ember::grammar
