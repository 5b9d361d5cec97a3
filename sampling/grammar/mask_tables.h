// What can be decided about tokens without the parse stack: per grammar
// position f, which tokens are accepted from f whatever lies below it, and
// what the others need from below (docs/GRAMMAR.md, "Masks").
//
// For each position f with char edges, one walk over the token trie from the
// stack [kUnknown, f] (stacks.h) sorts every token into one of three kinds:
//  - accepted: some path consumes all its bytes without popping below f's
//    frame (or pops exactly at its last byte). Accepted in every state that
//    has a stack with f on top.
//  - rejected: every path dies inside f's frame. Rejected for such a stack.
//  - escaping: not accepted, and some path pops below f's frame with bytes
//    left. Those bytes (the remainder) decide, against the stacks the real
//    stack below f expands to. The remainders of a position form a trie of
//    their own, whose nodes list the tokens that end there; when there are
//    too many to copy (after whitespace that may end a rule, say, every token
//    starting with " " escapes), the table lists the token-trie nodes where
//    the escapes happen instead, and masks walk those subtrees.
// The matcher's mask for a stack with f on top is then: f's accepted set,
// plus the tokens of the remainder-trie nodes that the stack below accepts
// (a walk over a small trie, usually cut after its first byte).
//
// Positions at the same place in different copies of an unrolled repetition
// (a string with maxLength 1000 is 1000 copies of one character's automaton)
// differ only in how many more copies may or must follow. A token of c code
// points cannot tell two such copies apart when both counts of both are at
// least c (it cannot reach the difference), so the first copy's table is
// computed by a full walk and every other copy's is derived from it: the
// tokens up to the copies' "horizon" (the smallest count in which they differ)
// are taken from the first table, and only the longer tokens are walked again
// (a walk that skips every trie subtree without such tokens). Copies whose
// horizon is beyond the longest token share the first table outright.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "platform/status.h"
#include "sampling/grammar/compiled_grammar.h"
#include "sampling/grammar/token_trie.h"

namespace ember::grammar {

struct PositionTable {
  // Accepted tokens: as ids when few, else as a bitset over the vocabulary.
  std::vector<int32_t> accepted_ids;
  std::vector<uint64_t> accepted_bits;
  // The remainder trie (preorder, as TokenTrie) and its tokens: node i's
  // tokens are rem_tokens[rem_nodes[i].tok_begin, rem_nodes[i].own_end).
  std::vector<TrieNode> rem_nodes;
  std::vector<int32_t> rem_tokens;
  // Instead of the remainder trie when it would be large: token-trie nodes
  // after which paths escape; the remainder of every token below such a node
  // (with min_cp..max_cp code points) is the rest of its bytes. (Walking them
  // may also re-find accepted tokens: harmless, they are in the mask anyway.)
  struct EscapeNode {
    uint32_t node;
    uint16_t min_cp, max_cp;
  };
  std::vector<EscapeNode> escape_nodes;
};

struct MaskTableStats {
  size_t positions = 0;     // with char edges
  size_t tables = 0;        // distinct (after sharing)
  size_t derived = 0;       // derived from another copy's (only long tokens walked)
  size_t escape_lists = 0;  // tables with escape_nodes instead of a remainder trie
  size_t dense = 0;         // tables whose accepted set is a bitset
  size_t remainders = 0;    // escaping (token, remainder) pairs, over all tables
  double seconds = 0;
};

class MaskTables {
 public:
  // Computes every position's table (one trie walk per distinct table).
  static Status Build(std::shared_ptr<const CompiledGrammar> grammar,
                      std::shared_ptr<const TokenTrie> trie,
                      std::shared_ptr<const MaskTables>* out);

  const CompiledGrammar& grammar() const { return *grammar_; }
  const TokenTrie& trie() const { return *trie_; }
  const PositionTable& table(uint32_t pos) const { return tables_[table_of_[pos]]; }
  const MaskTableStats& stats() const { return stats_; }

 private:
  std::shared_ptr<const CompiledGrammar> grammar_;
  std::shared_ptr<const TokenTrie> trie_;
  std::vector<PositionTable> tables_;
  std::vector<uint32_t> table_of_;  // [position]
  MaskTableStats stats_;
};

}  // namespace ember::grammar
