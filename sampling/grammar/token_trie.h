// A vocabulary as the grammar sees it: each token's output bytes, the
// end-of-generation tokens, and a trie of the tokens by their bytes, so that a
// walk checks a prefix shared by many tokens once (docs/GRAMMAR.md, "Masks").
//
// The trie is laid out in depth-first preorder: node i's subtree is
// [i, skip), so a walk that rejects a node jumps to skip. Tokens are sorted by
// their bytes; the tokens of a node's subtree are the range [tok_begin,
// tok_end) of that order, and those that end exactly at the node come first,
// [tok_begin, own_end). Tokens with no output bytes (control tokens) and
// end-of-generation tokens are not in the trie: the grammar never admits the
// first kind, and admits the second where the grammar may end.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ember::grammar {

struct TrieNode {
  uint32_t skip;       // first node after this node's subtree
  uint32_t tok_begin;  // subtree's tokens in TokenTrie::order()
  uint32_t own_end;    // tokens ending exactly here: [tok_begin, own_end)
  uint32_t tok_end;
  uint16_t depth;  // bytes from the root (the root is 0)
  uint8_t byte;    // the byte leading here from the parent
};

// Builds the preorder trie of `sorted` (byte strings in ascending order,
// duplicates allowed): node 0 is the root, and the string sorted[i] is token
// index i of TrieNode's ranges.
std::vector<TrieNode> BuildPreorderTrie(const std::vector<std::string_view>& sorted);

class TokenTrie {
 public:
  // token_text(t): token t's output bytes ("" for control tokens);
  // is_eog(t): t ends generation.
  static std::shared_ptr<const TokenTrie> Build(
      int32_t n_vocab, const std::function<std::string_view(int32_t)>& token_text,
      const std::function<bool(int32_t)>& is_eog);

  int32_t n_vocab() const { return n_vocab_; }
  const std::vector<TrieNode>& nodes() const { return nodes_; }
  // Token ids in the trie, sorted by their bytes.
  const std::vector<int32_t>& order() const { return order_; }
  const std::vector<int32_t>& eog() const { return eog_; }
  bool is_eog(int32_t t) const { return t >= 0 && t < n_vocab_ && eog_flag_[t]; }
  std::string_view bytes(int32_t t) const {
    return std::string_view(text_).substr(offset_[t], offset_[t + 1] - offset_[t]);
  }
  // The most code points in one token (an unfinished character counts as one).
  uint32_t max_code_points() const { return max_code_points_; }
  // Code points of the token at index k of order(); the most code points of a
  // token in node i's subtree.
  const std::vector<uint16_t>& order_code_points() const { return order_cp_; }
  const std::vector<uint16_t>& subtree_code_points() const { return subtree_cp_; }
  // Tokens longer than this many bytes are left out of the trie (never admitted).
  static constexpr size_t kMaxTokenBytes = 60000;
  // Whether token t is in the trie (has output bytes and does not end generation).
  bool in_trie(int32_t t) const { return t >= 0 && t < n_vocab_ && in_trie_[t]; }

 private:
  int32_t n_vocab_ = 0;
  std::string text_;              // every token's bytes, concatenated
  std::vector<uint32_t> offset_;  // [n_vocab + 1]
  std::vector<TrieNode> nodes_;
  std::vector<int32_t> order_;
  std::vector<int32_t> eog_;
  std::vector<bool> eog_flag_;
  std::vector<bool> in_trie_;
  std::vector<uint16_t> order_cp_;
  std::vector<uint16_t> subtree_cp_;
  uint32_t max_code_points_ = 0;
};

}  // namespace ember::grammar
