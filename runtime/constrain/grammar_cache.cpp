#include "runtime/constrain/grammar_cache.h"

#include <algorithm>

#include "runtime/text/tokenizer.h"
#include "sampling/grammar/matcher.h"

namespace ember {

std::shared_ptr<const grammar::TokenTrie> GrammarCache::Trie() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!trie_) {
    const Tokenizer& tok = tok_;
    trie_ = grammar::TokenTrie::Build(
        tok.n_vocab(),
        [&tok](int32_t t) -> std::string_view {
          // What generation emits for the token (Tokenizer::TokenToPiece
          // without special tokens): nothing for control and unknown tokens.
          const TokenType type = tok.vocab().token_types[static_cast<size_t>(t)];
          if (type == TokenType::kControl || type == TokenType::kUnknown) return {};
          return tok.pieces()[static_cast<size_t>(t)];
        },
        [&tok](int32_t t) { return tok.IsEndOfGeneration(t); });
  }
  return trie_;
}

Status GrammarCache::Tables(const std::string& gbnf, const std::string& root,
                            std::shared_ptr<const grammar::MaskTables>* out) {
  const std::string key = root + '\0' + gbnf;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it =
        std::find_if(recent_.begin(), recent_.end(), [&](const auto& e) { return e.first == key; });
    if (it != recent_.end()) {
      std::rotate(it, it + 1, recent_.end());
      *out = recent_.back().second;
      return Status::Ok();
    }
  }
  // Compiled outside the lock (it may take a while); two threads asking for
  // the same new grammar at once both compile it, and one result is kept.
  std::shared_ptr<const grammar::MaskTables> tables;
  EMBER_RETURN_IF_ERROR(grammar::BuildGrammarTables(gbnf, root, Trie(), &tables));
  std::lock_guard<std::mutex> lock(mu_);
  recent_.emplace_back(key, tables);
  if (recent_.size() > kKeep) recent_.erase(recent_.begin());
  *out = std::move(tables);
  return Status::Ok();
}

Status GrammarCache::Attach(std::vector<SamplerSpec>* specs) {
  for (SamplerSpec& s : *specs) {
    if (s.kind != SamplerKind::kGrammar || s.grammar_tables) continue;
    Status st = Tables(s.grammar, s.grammar_root, &s.grammar_tables);
    if (!st.ok()) return Status(st.code(), "grammar: " + st.message());
  }
  return Status::Ok();
}

}  // namespace ember
