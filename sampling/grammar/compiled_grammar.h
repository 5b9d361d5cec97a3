// A grammar compiled for matching: every rule an automaton over code points
// and rule references (docs/GRAMMAR.md, "The matcher").
//
// Each rule that survives compilation becomes an epsilon-free NFA whose states
// are *positions*: places inside the rule where the matcher can stand. A
// position has char edges (consume one code point in a class, go to another
// position of the same rule), ref edges (run another rule to its end, then go
// on at a position of this rule) and a final flag (the rule may end here).
// Groups and repetitions are part of their rule's automaton, not rules of
// their own, and rules that are not recursive are inlined where they are used
// (when used once or small): so a JSON string, with its escapes and the
// structure around it, is one stretch of positions of the rule that uses it.
// Bounded repetitions x{m,n} are unrolled into copies; each position records
// which copy of which repetition it lies in (RepCopy), so that mask tables can
// be shared between copies a token cannot tell apart (mask_tables.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "platform/status.h"
#include "sampling/grammar/char_set.h"
#include "sampling/grammar/gbnf.h"

namespace ember::grammar {

struct CharClass {
  CharSet set;
  std::array<uint64_t, 2> ascii{};       // bit c: c in set, for c < 128
  std::array<uint64_t, 4> lead_bytes{};  // bit b: some code point in set has UTF-8 first byte b

  bool Contains(uint32_t c) const {
    return c < 128 ? ((ascii[c >> 6] >> (c & 63)) & 1) != 0 : set.Contains(c);
  }
};

struct CharEdge {
  uint32_t cls;     // index in CompiledGrammar::classes
  uint32_t target;  // position
};

struct RefEdge {
  uint32_t rule;    // compiled rule to run
  uint32_t target;  // position to continue at after it
};

// One copy of an unrolled repetition (positions record the copy they lie in,
// and their offset from the copy's first state).
struct RepInstance {
  uint32_t site;       // the unrolled repetition (its copies share it)
  uint32_t required;   // copies that must still follow this one
  uint32_t allowed;    // copies that may still follow this one (kUnbounded: any)
  bool nullable_body;  // a copy may match the empty string: no sharing
  uint32_t parent;     // the copy of the enclosing repetition, or kNoInstance
  // Offset of the repetition's first state within the parent's copy: the
  // same for all copies of one repetition, and for the same repetition in
  // every copy of the enclosing one.
  uint32_t rep_offset;
};
constexpr uint32_t kNoInstance = UINT32_MAX;

struct Position {
  uint32_t rule;
  uint32_t chars_begin, chars_end;  // CharEdge range in CompiledGrammar::char_edges
  uint32_t refs_begin, refs_end;    // RefEdge range in CompiledGrammar::ref_edges
  bool final;
  uint32_t instance;  // RepInstance, or kNoInstance
  uint32_t offset;    // within the instance's copy
  bool has_chars() const { return chars_end > chars_begin; }
  // Final with nowhere to go: a frame here is finished (dropped, not kept).
  bool exit_only() const { return final && chars_end == chars_begin && refs_end == refs_begin; }
};

struct CompiledRule {
  std::string name;  // the grammar's rule name
  uint32_t start;    // position
};

struct CompiledGrammar {
  std::vector<Position> positions;
  std::vector<CharEdge> char_edges;
  std::vector<RefEdge> ref_edges;
  std::vector<CharClass> classes;
  std::vector<RepInstance> instances;
  std::vector<CompiledRule> rules;
  uint32_t root = 0;  // compiled rule
  // Per position: bit b set when some char edge accepts a code point whose
  // UTF-8 starts with byte b (a quick test before stepping).
  std::vector<std::array<uint64_t, 4>> lead_bytes;
};

// The most positions a compiled grammar may have (repetitions are unrolled).
constexpr size_t kMaxPositions = size_t{1} << 22;

// Compiles a parsed grammar: checks left recursion (an error naming the
// cycle), inlines non-recursive rules used once or small, unrolls
// repetitions, removes epsilon moves. Fails if the result exceeds kMaxPositions.
Status CompileGrammar(const GbnfGrammar& g, CompiledGrammar* out);

// ParseGbnf + CompileGrammar.
Status CompileGbnf(std::string_view text, std::string_view root, CompiledGrammar* out);

}  // namespace ember::grammar
