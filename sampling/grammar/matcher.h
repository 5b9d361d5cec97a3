// GrammarMatcher: where generation stands in a grammar, which tokens may come
// next, and taking a token (docs/GRAMMAR.md).
//
// Contract -- the invariants every method keeps:
//  - State. A set of parse stacks in normal form (stacks.h: each stack's top
//    position can consume a code point, or the stack is empty) plus the bytes
//    of a UTF-8 character a token left unfinished. The set is never empty
//    while the matcher is live: it holds exactly the parses that the accepted
//    bytes leave alive. The empty stack in the set means the grammar may end.
//  - Mask. FillMask sets bit t exactly for the tokens t whose bytes, taken
//    from the current state, leave at least one parse alive (a partial last
//    character counts as alive when some parse can complete it), plus the
//    end-of-generation tokens exactly when the grammar may end here (the empty
//    stack is in the set and no character is pending). Tokens without output
//    bytes are never in it. The result equals FillMaskBruteForce (trying each
//    token) bit for bit; it is computed from the mask tables (mask_tables.h)
//    and a walk over small remainder tries, not token by token.
//  - Accept. Accept(t) takes a token of the mask: the state becomes the parses
//    its bytes leave. A token outside the mask is an error: Accept returns
//    false and the state is unchanged. After an end-of-generation token the
//    matcher is finished: its mask is empty and it accepts nothing.
//  - Copies are independent (beam search forks matchers); the tables are
//    shared and immutable, so matchers on several threads may share them.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "sampling/grammar/mask_tables.h"
#include "sampling/grammar/stacks.h"
#include "sampling/grammar/walker.h"

namespace ember::grammar {

class GrammarMatcher {
 public:
  explicit GrammarMatcher(std::shared_ptr<const MaskTables> tables);
  GrammarMatcher(const GrammarMatcher& o);
  GrammarMatcher& operator=(const GrammarMatcher& o);

  // Back to the start of the grammar.
  void Reset();
  bool Accept(int32_t token);
  // Bits [0, n_vocab) of *bits (resized to whole words).
  void FillMask(std::vector<uint64_t>* bits);
  void FillMaskBruteForce(std::vector<uint64_t>* bits);

  bool CanEnd() const { return !finished_ && ::ember::grammar::CanEnd(state_); }
  bool finished() const { return finished_; }
  const ByteState& state() const { return state_; }
  const MaskTables& tables() const { return *tables_; }

 private:
  void SetBit(std::vector<uint64_t>* bits, int32_t t) const {
    (*bits)[static_cast<size_t>(t) >> 6] |= uint64_t{1} << (t & 63);
  }
  // The state after token's bytes; false if no parse survives them.
  bool Advance(int32_t token, ByteState* out);
  // Marks the trie tokens that `from` accepts (a walk over the whole trie).
  void WalkAll(const ByteState& from, std::vector<uint64_t>* bits);
  // Appends the tokens of trie `nodes` below `root` (up to `end`) that walk
  // state `start` accepts; node i's tokens are tokens[tok_begin, own_end),
  // those with min_cp..max_cp code points when cp (per token index) is given.
  void Walk(Walker& walker, uint32_t start, const std::vector<TrieNode>& nodes, uint32_t root,
            uint32_t end, const std::vector<int32_t>& tokens, const std::vector<uint16_t>* cp,
            uint16_t min_cp, uint16_t max_cp, std::vector<int32_t>* out);
  // The tokens of pos's remainders that the stack `below` accepts (cached).
  const std::vector<int32_t>& Remainders(uint32_t pos, uint32_t below);
  // A new arena holding only the stacks of state_ (node ids in `from`).
  void Compact(const StackArena& from);

  std::shared_ptr<const MaskTables> tables_;
  std::unique_ptr<StackArena> arena_;
  std::unique_ptr<StackStepper> stepper_;
  ByteState state_;
  bool finished_ = false;
  // (position, node below) -> tokens of the position's remainders accepted there.
  std::unordered_map<uint64_t, std::vector<int32_t>> remainder_cache_;
  std::vector<int32_t> ws_;  // walk scratch: state per trie depth
};

// Compiles `gbnf` (start rule `root`) and its mask tables for `trie`.
Status BuildGrammarTables(std::string_view gbnf, std::string_view root,
                          std::shared_ptr<const TokenTrie> trie,
                          std::shared_ptr<const MaskTables>* out);

}  // namespace ember::grammar
