// What both tokenizers share: Create's dispatch and checks, special-token splitting,
// end-of-generation, Decode (llama_detokenize's rules) and the streaming UTF-8 holdback.
#include "runtime/text/tokenizer.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "runtime/text/unicode.h"

namespace ember {

namespace {

bool IdInRange(int32_t id, size_t n) { return id < 0 || static_cast<size_t>(id) < n; }

bool IsSpecialType(TokenType t) {
  return t == TokenType::kControl || t == TokenType::kUserDefined || t == TokenType::kUnknown;
}

// C isspace on one byte, as llama.cpp strips around lstrip/rstrip tokens.
bool IsCSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

}  // namespace

Status Tokenizer::Create(VocabData vocab, std::unique_ptr<Tokenizer>* out) {
  const size_t n = vocab.tokens.size();
  if (n == 0) return InvalidArgument("tokenizer: the vocabulary has no tokens");
  if (vocab.token_types.empty()) vocab.token_types.assign(n, TokenType::kNormal);
  if (vocab.token_types.size() != n) {
    return InvalidArgument("tokenizer: " + std::to_string(vocab.token_types.size()) +
                           " token types for " + std::to_string(n) + " tokens");
  }
  if (!vocab.scores.empty() && vocab.scores.size() != n) {
    return InvalidArgument("tokenizer: " + std::to_string(vocab.scores.size()) + " scores for " +
                           std::to_string(n) + " tokens");
  }
  if (!vocab.token_attrs.empty() && vocab.token_attrs.size() != n) {
    return InvalidArgument("tokenizer: token_attrs does not match the vocabulary size");
  }
  const std::pair<const char*, int32_t> ids[] = {{"bos", vocab.bos_id}, {"eos", vocab.eos_id},
                                                 {"eot", vocab.eot_id}, {"eom", vocab.eom_id},
                                                 {"unk", vocab.unk_id}, {"pad", vocab.pad_id}};
  for (const auto& [name, id] : ids) {
    if (!IdInRange(id, n)) {
      return InvalidArgument("tokenizer: " + std::string(name) + " id " + std::to_string(id) +
                             " is outside the vocabulary of " + std::to_string(n) + " tokens");
    }
  }
  for (const int32_t id : vocab.eog_ids) {
    if (id < 0 || !IdInRange(id, n)) {
      return InvalidArgument("tokenizer: end-of-generation id " + std::to_string(id) +
                             " is outside the vocabulary");
    }
  }
  if (vocab.model == "llama") return internal::CreateSpmTokenizer(std::move(vocab), out);
  if (vocab.model == "gpt2") return internal::CreateBpeTokenizer(std::move(vocab), out);
  return Unsupported("tokenizer model '" + vocab.model +
                     "' is not supported (ember implements 'llama' = SentencePiece and "
                     "'gpt2' = byte-level BPE)");
}

// ---------------------------------------------------------------------------------------------
// Special tokens

// A byte trie of the special tokens' texts, to find which of them occur in a text in one pass,
// and llama.cpp's processing order (longest text first).
struct Tokenizer::SpecialIndex {
  struct Node {
    std::vector<std::pair<uint8_t, int32_t>> next;  // byte -> node
    int32_t token = -1;
  };
  std::vector<Node> trie{Node()};
  std::vector<int32_t> rank;  // per token: position in the processing order

  int32_t Child(int32_t node, uint8_t b) const {
    for (const auto& [c, child] : trie[node].next) {
      if (c == b) return child;
    }
    return -1;
  }
};

Tokenizer::Tokenizer(VocabData vocab) : vocab_(std::move(vocab)) {
  ids_.Build(vocab_.tokens);
  auto index = std::make_shared<SpecialIndex>();
  std::vector<int32_t> specials;
  for (size_t id = 0; id < vocab_.tokens.size(); ++id) {
    if (IsSpecialType(vocab_.token_types[id]) && !vocab_.tokens[id].empty()) {
      specials.push_back(static_cast<int32_t>(id));
    }
  }
  // llama.cpp sorts by length only; among equal lengths we keep id order (its order there is
  // whatever std::sort leaves, which matters only for overlapping equal-length tokens).
  std::stable_sort(specials.begin(), specials.end(), [&](int32_t a, int32_t b) {
    return vocab_.tokens[a].size() > vocab_.tokens[b].size();
  });
  index->rank.assign(vocab_.tokens.size(), -1);
  for (size_t r = 0; r < specials.size(); ++r) {
    const int32_t id = specials[r];
    index->rank[id] = static_cast<int32_t>(r);
    int32_t node = 0;
    for (const char c : vocab_.tokens[id]) {
      int32_t child = index->Child(node, static_cast<uint8_t>(c));
      if (child < 0) {
        child = static_cast<int32_t>(index->trie.size());
        index->trie[node].next.emplace_back(static_cast<uint8_t>(c), child);
        index->trie.emplace_back();
      }
      node = child;
    }
    index->trie[node].token = id;
  }
  special_ = std::move(index);

  eog_.assign(vocab_.tokens.size(), false);
  for (const int32_t id : {vocab_.eos_id, vocab_.eot_id, vocab_.eom_id}) {
    if (id >= 0 && static_cast<size_t>(id) < eog_.size()) eog_[id] = true;
  }
  for (const int32_t id : vocab_.eog_ids) {
    if (id >= 0 && static_cast<size_t>(id) < eog_.size()) eog_[id] = true;
  }
}

bool Tokenizer::IsEndOfGeneration(int32_t id) const {
  return id >= 0 && static_cast<size_t>(id) < eog_.size() && eog_[id];
}

std::vector<Tokenizer::Fragment> Tokenizer::SplitSpecial(std::string_view text,
                                                         bool parse_special) const {
  std::vector<Fragment> frags;
  if (text.empty()) return frags;
  frags.push_back({-1, 0, text.size()});
  const SpecialIndex& index = *special_;
  if (index.trie[0].next.empty()) return frags;

  // Which special tokens occur at all. Running llama.cpp's token-by-token splitting with only
  // these gives its result without scanning the text once per special token.
  std::vector<int32_t> present;
  for (size_t i = 0; i < text.size(); ++i) {
    int32_t node = 0;
    for (size_t j = i; j < text.size(); ++j) {
      node = index.Child(node, static_cast<uint8_t>(text[j]));
      if (node < 0) break;
      const int32_t id = index.trie[node].token;
      if (id < 0) continue;
      const TokenType t = vocab_.token_types[id];
      // Control and unknown tokens count only when asked; user-defined ones always (llama.cpp,
      // following HF tokenizers, splits added tokens before anything else).
      if (!parse_special && (t == TokenType::kControl || t == TokenType::kUnknown)) continue;
      if (std::find(present.begin(), present.end(), id) == present.end()) present.push_back(id);
    }
  }
  if (present.empty()) return frags;
  std::sort(present.begin(), present.end(),
            [&](int32_t a, int32_t b) { return index.rank[a] < index.rank[b]; });

  std::vector<Fragment> next;
  for (const int32_t id : present) {
    const std::string_view tok = vocab_.tokens[id];
    const uint8_t attrs = vocab_.token_attrs.empty() ? 0 : vocab_.token_attrs[id];
    next.clear();
    for (const Fragment& f : frags) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      size_t base = f.offset, len = f.length;
      while (len > 0) {
        const size_t m = text.substr(0, base + len).find(tok, base);
        if (m == std::string_view::npos) {
          next.push_back({-1, base, len});
          break;
        }
        size_t left = m - base;
        if (attrs & kTokenAttrLstrip) {
          while (left > 0 && IsCSpace(text[base + left - 1])) --left;
        }
        if (left > 0) next.push_back({-1, base, left});
        next.push_back({id, m, tok.size()});
        size_t r = m + tok.size();
        size_t rlen = base + len - r;
        if (attrs & kTokenAttrRstrip) {
          while (rlen > 0 && IsCSpace(text[r])) {
            ++r;
            --rlen;
          }
        }
        base = r;
        len = rlen;
      }
    }
    frags.swap(next);
  }
  return frags;
}

// ---------------------------------------------------------------------------------------------
// Decode

namespace {

// llama.cpp's clean_up_tokenization_spaces (llama_vocab::impl::detokenize): three in-place
// passes over the bytes, kept literal because their quirks are part of the output.
void CleanSpaces(std::string* s) {
  std::string& t = *s;
  // " ?", " !", " .", " ," lose the space.
  size_t n = t.size(), total = n ? 1 : 0;
  for (size_t i = 1; i < n; ++i) {
    const char x = t[i];
    if (t[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) --total;
    t[total++] = x;
  }
  // " ' " becomes "'".
  n = total, total = n ? 1 : 0;
  for (size_t i = 1; i < n; ++i) {
    const char x = t[i];
    if (x == '\'' && i + 1 < n && t[i - 1] == ' ' && t[i + 1] == ' ') {
      --total;
      t[++i] = '\0';
    }
    t[total++] = x;
  }
  // " 's", " 'm", " 're", " 've" lose the space.
  n = total, total = n ? 1 : 0;
  for (size_t i = 1; i < n; ++i) {
    const char x = t[i];
    if (t[i - 1] == ' ' && x == '\'' && i + 1 < n) {
      const char x1 = t[i + 1];
      if (x1 == 's' || x1 == 'm') {
        --total;
      } else if (i + 2 < n) {
        const char x2 = t[i + 2];
        if ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) --total;
      }
    }
    t[total++] = x;
  }
  t.resize(total);
}

}  // namespace

std::string Tokenizer::TokenToPiece(int32_t id, bool render_special) const {
  if (id < 0 || id >= n_vocab() || static_cast<size_t>(id) >= pieces_.size()) return "";
  const TokenType t = vocab_.token_types[id];
  if (!render_special && (t == TokenType::kControl || t == TokenType::kUnknown)) return "";
  return std::string(pieces_[id]);
}

std::string Tokenizer::Decode(const std::vector<int32_t>& ids, bool render_special) const {
  std::string out;
  // As llama_detokenize: the space the tokenizer put in front of the text comes off the first
  // token (only the first: after a BOS it stays, as in llama.cpp).
  bool remove_space = vocab_.add_space_prefix;
  for (const int32_t id : ids) {
    if (id < 0 || id >= n_vocab()) {
      remove_space = false;
      continue;
    }
    std::string piece = TokenToPiece(id, render_special);
    size_t skip = remove_space && !piece.empty() && piece[0] == ' ' ? 1 : 0;
    remove_space = false;
    out.append(piece, skip, std::string::npos);
  }
  if (vocab_.clean_spaces) CleanSpaces(&out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Utf8Stream

namespace {
constexpr char kReplacementUtf8[] = "\xEF\xBF\xBD";
}

std::string Utf8Stream::Push(std::string_view bytes) {
  pending_.append(bytes);
  std::string out;
  size_t i = 0;
  while (i < pending_.size()) {
    const int r = unicode::CheckUtf8(pending_, i);
    if (r == 0) break;  // an unfinished character: wait for more bytes
    if (r > 0) {
      out.append(pending_, i, static_cast<size_t>(r));
      i += static_cast<size_t>(r);
    } else {
      out += kReplacementUtf8;
      i += static_cast<size_t>(-r);
    }
  }
  pending_.erase(0, i);
  return out;
}

std::string Utf8Stream::Flush() {
  std::string out = Push("");
  if (!pending_.empty()) out += kReplacementUtf8;
  pending_.clear();
  return out;
}

}  // namespace ember
