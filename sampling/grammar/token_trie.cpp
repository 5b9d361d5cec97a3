#include "sampling/grammar/token_trie.h"

#include <algorithm>

namespace ember::grammar {

std::vector<TrieNode> BuildPreorderTrie(const std::vector<std::string_view>& sorted) {
  // `path` holds the nodes of the previous string's bytes; a string shares the
  // first lcp of them and adds nodes for the rest.
  std::vector<TrieNode> nodes;
  nodes.push_back(TrieNode{0, 0, 0, 0, 0, 0});
  std::vector<uint32_t> path = {0};
  std::string_view prev;
  auto close_to = [&](size_t depth, uint32_t index) {
    while (path.size() > depth + 1) {
      TrieNode& n = nodes[path.back()];
      n.skip = static_cast<uint32_t>(nodes.size());
      n.tok_end = index;
      path.pop_back();
    }
  };
  for (uint32_t i = 0; i < sorted.size(); ++i) {
    const std::string_view s = sorted[i];
    size_t lcp = 0;
    while (lcp < s.size() && lcp < prev.size() && s[lcp] == prev[lcp]) ++lcp;
    close_to(lcp, i);
    for (size_t d = lcp; d < s.size(); ++d) {
      path.push_back(static_cast<uint32_t>(nodes.size()));
      nodes.push_back(
          TrieNode{0, i, i, 0, static_cast<uint16_t>(d + 1), static_cast<uint8_t>(s[d])});
    }
    nodes[path.back()].own_end = i + 1;
    prev = s;
  }
  const auto n = static_cast<uint32_t>(sorted.size());
  close_to(0, n);
  nodes[0].skip = static_cast<uint32_t>(nodes.size());
  nodes[0].tok_end = n;
  return nodes;
}

std::shared_ptr<const TokenTrie> TokenTrie::Build(
    int32_t n_vocab, const std::function<std::string_view(int32_t)>& token_text,
    const std::function<bool(int32_t)>& is_eog) {
  auto t = std::make_shared<TokenTrie>();
  t->n_vocab_ = n_vocab;
  t->offset_.reserve(static_cast<size_t>(n_vocab) + 1);
  t->eog_flag_.assign(static_cast<size_t>(n_vocab), false);
  t->in_trie_.assign(static_cast<size_t>(n_vocab), false);
  for (int32_t id = 0; id < n_vocab; ++id) {
    t->offset_.push_back(static_cast<uint32_t>(t->text_.size()));
    const std::string_view text = token_text ? token_text(id) : std::string_view();
    t->text_.append(text);
    if (is_eog && is_eog(id)) {
      t->eog_flag_[id] = true;
      t->eog_.push_back(id);
    } else if (!text.empty() && text.size() <= kMaxTokenBytes) {
      t->in_trie_[id] = true;
      t->order_.push_back(id);
    }
  }
  t->offset_.push_back(static_cast<uint32_t>(t->text_.size()));
  std::sort(t->order_.begin(), t->order_.end(), [&](int32_t a, int32_t b) {
    const std::string_view x = t->bytes(a), y = t->bytes(b);
    return x < y || (x == y && a < b);
  });
  std::vector<std::string_view> sorted;
  sorted.reserve(t->order_.size());
  for (const int32_t id : t->order_) {
    const std::string_view s = t->bytes(id);
    sorted.push_back(s);
    uint32_t cps = (static_cast<uint8_t>(s[0]) & 0xC0) == 0x80 ? 1 : 0;
    for (const char c : s) cps += (static_cast<uint8_t>(c) & 0xC0) != 0x80;
    t->order_cp_.push_back(static_cast<uint16_t>(std::min<uint32_t>(cps, UINT16_MAX)));
    t->max_code_points_ = std::max(t->max_code_points_, cps);
  }
  t->nodes_ = BuildPreorderTrie(sorted);
  // A subtree's tokens are a range of order(): its longest is the range's maximum.
  t->subtree_cp_.resize(t->nodes_.size());
  for (size_t i = 0; i < t->nodes_.size(); ++i) {
    const TrieNode& n = t->nodes_[i];
    uint16_t m = 0;
    for (uint32_t k = n.tok_begin; k < n.tok_end; ++k) m = std::max(m, t->order_cp_[k]);
    t->subtree_cp_[i] = m;
  }
  return t;
}

}  // namespace ember::grammar
