// Grammars compiled for one model's vocabulary (docs/GRAMMAR.md): the token
// trie, built on first use, and the mask tables of the grammars used lately,
// shared by every sampler chain (and thread) built on the model, so that a
// chat's turns, self-consistency's samples and C API chains do not compile
// the same grammar again. Internally synchronized.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "platform/status.h"
#include "sampling/grammar/mask_tables.h"
#include "sampling/sampler.h"

namespace ember {

class Tokenizer;

class GrammarCache {
 public:
  explicit GrammarCache(const Tokenizer& tok) : tok_(tok) {}

  // The vocabulary as the grammar stage sees it: each token's output bytes
  // (control tokens have none) and the end-of-generation tokens.
  std::shared_ptr<const grammar::TokenTrie> Trie();
  // `gbnf` (start rule `root`) compiled with its mask tables.
  Status Tables(const std::string& gbnf, const std::string& root,
                std::shared_ptr<const grammar::MaskTables>* out);
  // Fills in SamplerSpec::grammar_tables of every grammar spec that lacks them.
  Status Attach(std::vector<SamplerSpec>* specs);

 private:
  static constexpr size_t kKeep = 8;  // grammars remembered

  const Tokenizer& tok_;
  std::mutex mu_;
  std::shared_ptr<const grammar::TokenTrie> trie_;
  // (root + '\0' + text, tables), most recently used last.
  std::vector<std::pair<std::string, std::shared_ptr<const grammar::MaskTables>>> recent_;
};

}  // namespace ember
