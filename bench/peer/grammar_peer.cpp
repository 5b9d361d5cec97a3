// grammar_peer: llama.cpp's grammar sampler on the grammars and token
// sequences bench/grammar_bench.cpp writes (--emit DIR), for the comparison in
// docs/PERFORMANCE.md (bench/grammar_compare.sh runs both). Built by
// scripts/build-peer.sh against the peer's libllama; never part of ember.
//
//   grammar_peer VOCAB.gguf DIR CASE... [--rounds N]
//
// Per case: loads DIR/CASE.gbnf and DIR/CASE.tokens, creates
// llama_sampler_init_grammar(vocab, grammar, "root"), and for each token
// applies the sampler to a full candidate array (every token, fixed random
// logits; a fresh copy per step, not timed), checks that the token was not
// masked out, counts the tokens left (control and end-of-generation tokens
// aside, as ember's counts in DIR/CASE.counts; and tokens with a byte
// F5..FF, which llama.cpp admits as the start of a 4-byte character although
// no valid UTF-8 has them, while ember does not), then accepts the token.
// Prints per case: tokens, mean/median/p99/max microseconds of the apply
// call, the range of the per-round means, and how many steps' counts equal
// ember's.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "llama.h"

namespace {

void log_cb(ggml_log_level, const char *, void *) {}

std::vector<long> read_numbers(const std::string &path) {
  std::ifstream f(path);
  std::vector<long> v;
  long x;
  while (f >> x) v.push_back(x);
  return v;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: grammar_peer VOCAB.gguf DIR CASE... [--rounds N]\n");
    return 2;
  }
  const std::string vocab_path = argv[1], dir = argv[2];
  std::vector<std::string> cases;
  int rounds = 5;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else {
      cases.push_back(a);
    }
  }
  llama_log_set(log_cb, nullptr);
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  mp.vocab_only = true;
  llama_model *model = llama_model_load_from_file(vocab_path.c_str(), mp);
  if (!model) {
    std::fprintf(stderr, "grammar_peer: cannot load %s\n", vocab_path.c_str());
    return 1;
  }
  const llama_vocab *vocab = llama_model_get_vocab(model);
  const int n_vocab = llama_vocab_n_tokens(vocab);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uni(0.0f, 8.0f);
  std::vector<llama_token_data> logits(n_vocab);
  for (int t = 0; t < n_vocab; ++t) logits[t] = {t, uni(rng), 0.0f};
  // Tokens left out of the counts (see above).
  std::vector<bool> uncounted(n_vocab);
  for (int t = 0; t < n_vocab; ++t) {
    char buf[512];
    const int n = llama_token_to_piece(vocab, t, buf, sizeof(buf), 0, true);
    bool bad = llama_vocab_is_control(vocab, t) || llama_vocab_is_eog(vocab, t);
    for (int k = 0; k < n; ++k) bad = bad || static_cast<unsigned char>(buf[k]) >= 0xF5;
    uncounted[t] = bad;
  }

  std::printf(
      "| case | tokens | llama.cpp apply mean µs | median | p99 | max | round means | counts equal "
      "to ember's |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---|---|\n");
  for (const std::string &name : cases) {
    std::ifstream gf(dir + "/" + name + ".gbnf");
    std::stringstream gs;
    gs << gf.rdbuf();
    const std::string grammar = gs.str();
    const std::vector<long> tokens = read_numbers(dir + "/" + name + ".tokens");
    const std::vector<long> ember_counts = read_numbers(dir + "/" + name + ".counts");
    std::vector<double> all, round_means;
    size_t equal = 0;
    for (int r = 0; r < rounds; ++r) {
      llama_sampler *g = llama_sampler_init_grammar(vocab, grammar.c_str(), "root");
      if (!g) {
        std::fprintf(stderr, "grammar_peer: llama.cpp does not accept the grammar of %s\n",
                     name.c_str());
        return 1;
      }
      std::vector<llama_token_data> cur(logits);
      double sum = 0;
      for (size_t i = 0; i < tokens.size(); ++i) {
        std::copy(logits.begin(), logits.end(), cur.begin());
        llama_token_data_array arr = {cur.data(), cur.size(), -1, false};
        const auto a = std::chrono::steady_clock::now();
        llama_sampler_apply(g, &arr);
        const auto b = std::chrono::steady_clock::now();
        const double us = std::chrono::duration<double, std::micro>(b - a).count();
        all.push_back(us);
        sum += us;
        const llama_token t = static_cast<llama_token>(tokens[i]);
        if (std::isinf(cur[t].logit)) {
          std::fprintf(stderr, "grammar_peer: %s: llama.cpp masks token %zu (%d) out\n",
                       name.c_str(), i, t);
          return 1;
        }
        if (r == 0 && i < ember_counts.size()) {
          long n = 0;
          for (int k = 0; k < n_vocab; ++k) n += !std::isinf(cur[k].logit) && !uncounted[k];
          equal += n == ember_counts[i];
        }
        llama_sampler_accept(g, t);
      }
      round_means.push_back(sum / static_cast<double>(tokens.size()));
      llama_sampler_free(g);
    }
    const double mean =
        std::accumulate(all.begin(), all.end(), 0.0) / static_cast<double>(all.size());
    std::sort(all.begin(), all.end());
    const double p99 =
        all[std::min(all.size() - 1, static_cast<size_t>(0.99 * static_cast<double>(all.size())))];
    std::printf("| %s | %zu | %.0f | %.0f | %.0f | %.0f | %.0f-%.0f | %zu of %zu |\n", name.c_str(),
                tokens.size(), mean, all[all.size() / 2], p99, all.back(),
                *std::min_element(round_means.begin(), round_means.end()),
                *std::max_element(round_means.begin(), round_means.end()), equal, tokens.size());
    std::fflush(stdout);
  }
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
