// ember_grammar_bench: what a grammar costs per token at a real vocabulary
// (docs/PERFORMANCE.md, "Grammar masks").
//
//   ember_grammar_bench [--vocab GGUF] [--rounds N] [--emit DIR] [--case NAME]
//
// For each case of bench/grammar_cases.h (the JSON grammar of
// ../shared/grammars and three JSON schemas, with a document each) the
// document is tokenized with the vocabulary (default: Qwen2's, 151936 tokens)
// and forced through the grammar token by token, N rounds. Per token:
//   mask   GrammarMatcher::FillMask: the bitset of the tokens allowed next
//          (what the targets are about);
//   stage  the grammar stage in a chain: the mask plus dropping the other
//          candidates from a full 151936-entry candidate array;
//   accept taking the token.
// Reported: mean, median, p99 and max over every token of every round, and
// the range of the per-round means (the machine is shared: noise), plus the
// time to compile the grammar and its mask tables once.
//
// --emit DIR writes, per case, the grammar (DIR/NAME.gbnf), the token ids
// (DIR/NAME.tokens) and the allowed-token count before each token
// (DIR/NAME.counts) for bench/peer/grammar_peer.cpp, which runs llama.cpp's
// grammar sampler on the same grammar and tokens (bench/grammar_compare.sh).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "bench/grammar_cases.h"
#include "runtime/constrain/json_schema.h"
#include "runtime/model/model.h"
#include "sampling/grammar/matcher.h"
#include "sampling/sampler.h"

namespace {

using namespace ember;
using Clock = std::chrono::steady_clock;

double Micros(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

struct Stats {
  double mean, median, p99, max, round_lo, round_hi;
};

Stats Summarize(std::vector<double> all, const std::vector<double>& round_means) {
  Stats s;
  s.mean = std::accumulate(all.begin(), all.end(), 0.0) / static_cast<double>(all.size());
  std::sort(all.begin(), all.end());
  s.median = all[all.size() / 2];
  s.p99 =
      all[std::min(all.size() - 1, static_cast<size_t>(0.99 * static_cast<double>(all.size())))];
  s.max = all.back();
  s.round_lo = *std::min_element(round_means.begin(), round_means.end());
  s.round_hi = *std::max_element(round_means.begin(), round_means.end());
  return s;
}

int Popcount(const std::vector<uint64_t>& bits, const grammar::TokenTrie& trie) {
  int n = 0;
  for (int32_t t = 0; t < trie.n_vocab(); ++t) {
    n += trie.in_trie(t) && ((bits[static_cast<size_t>(t) >> 6] >> (t & 63)) & 1);
  }
  return n;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

int main(int argc, char** argv) {
  std::string shared = std::string(EMBER_SOURCE_DIR) + "/../shared";
  std::string vocab = shared + "/vocab/ggml-vocab-qwen2.gguf";
  std::string emit, only;
  int rounds = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--vocab" && i + 1 < argc) {
      vocab = argv[++i];
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--emit" && i + 1 < argc) {
      emit = argv[++i];
    } else if (a == "--case" && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: ember_grammar_bench [--vocab GGUF] [--rounds N] [--emit DIR] "
                   "[--case NAME]\n");
      return 2;
    }
  }
  std::unique_ptr<Model> model;
  Status st = Model::Load(vocab, nullptr, &model, /*vocab_only=*/true);
  if (!st.ok()) {
    std::fprintf(stderr, "ember_grammar_bench: %s\n", st.message().c_str());
    return 1;
  }
  const Tokenizer& tok = model->tokenizer();
  const auto t_trie = Clock::now();
  const auto trie = model->grammar_cache().Trie();
  std::printf("vocabulary %s: %d tokens, trie of %zu nodes built in %.0f ms; %d rounds\n\n",
              vocab.c_str(), tok.n_vocab(), trie->nodes().size(),
              Micros(t_trie, Clock::now()) / 1e3, rounds);
  std::printf(
      "| case | tokens | compile ms | tables | mask mean µs | median | p99 | max | round means | "
      "stage mean µs | stage p99 | accept mean µs |\n|---|---:|---:|---:|---:|---:|---:|---:|---|"
      "---:|---:|---:|\n");
  for (const bench::GrammarCase& c : bench::kGrammarCases) {
    if (!only.empty() && only != c.name) continue;
    std::string gbnf;
    if (c.grammar_file != nullptr) {
      gbnf = ReadFile(shared + "/grammars/" + c.grammar_file);
    } else {
      st = JsonSchemaToGbnf(c.schema, &gbnf);
    }
    if (!st.ok() || gbnf.empty()) {
      std::fprintf(stderr, "%s: no grammar (%s)\n", c.name, st.message().c_str());
      return 1;
    }
    const std::vector<int32_t> ids = tok.Encode(c.document, false, false);
    const auto t0 = Clock::now();
    std::shared_ptr<const grammar::MaskTables> tables;
    st = grammar::BuildGrammarTables(gbnf, "root", trie, &tables);
    const double compile_ms = Micros(t0, Clock::now()) / 1e3;
    if (!st.ok()) {
      std::fprintf(stderr, "%s: %s\n", c.name, st.message().c_str());
      return 1;
    }
    std::vector<double> mask_us, stage_us, accept_us, mask_rounds, stage_rounds;
    std::vector<int> counts;
    std::vector<uint64_t> bits;
    // Pass 1: the mask alone, and taking the token.
    for (int r = 0; r < rounds; ++r) {
      grammar::GrammarMatcher m(tables);
      double sum = 0;
      for (size_t i = 0; i < ids.size(); ++i) {
        const auto a = Clock::now();
        m.FillMask(&bits);
        const auto b = Clock::now();
        const int32_t t = ids[i];
        if (!((bits[static_cast<size_t>(t) >> 6] >> (t & 63)) & 1)) {
          std::fprintf(stderr,
                       "%s: token %zu (%d, '%s') is not allowed: the document does not "
                       "follow the grammar\n",
                       c.name, i, t, std::string(trie->bytes(t)).c_str());
          return 1;
        }
        if (r == 0) counts.push_back(Popcount(bits, *trie));
        const auto c0 = Clock::now();
        const bool ok = m.Accept(t);
        const auto d = Clock::now();
        if (!ok) return 1;
        mask_us.push_back(Micros(a, b));
        accept_us.push_back(Micros(c0, d));
        sum += Micros(a, b);
      }
      mask_rounds.push_back(sum / static_cast<double>(ids.size()));
    }
    // Pass 2: the grammar stage over a full candidate array.
    SamplerSpec spec;
    spec.kind = SamplerKind::kGrammar;
    spec.grammar_tables = tables;
    std::vector<float> logits(static_cast<size_t>(tok.n_vocab()));
    Rng rng(7);
    for (float& x : logits) x = static_cast<float>(rng.NextDouble() * 8.0);
    for (int r = 0; r < rounds; ++r) {
      std::unique_ptr<Sampler> stage;
      if (!MakeSampler(spec, SamplerContext{tok.n_vocab(), nullptr}, &stage).ok()) return 1;
      Candidates cand;
      double sum = 0;
      for (const int32_t t : ids) {
        cand.Reset(logits.data(), tok.n_vocab());
        const auto a = Clock::now();
        stage->Apply(cand, rng);
        const auto b = Clock::now();
        stage->Accept(t);
        stage_us.push_back(Micros(a, b));
        sum += Micros(a, b);
      }
      stage_rounds.push_back(sum / static_cast<double>(ids.size()));
    }
    const Stats ms = Summarize(mask_us, mask_rounds);
    const Stats ss = Summarize(stage_us, stage_rounds);
    const Stats as = Summarize(accept_us, mask_rounds);
    const grammar::MaskTableStats& ts = tables->stats();
    std::printf(
        "| %s | %zu | %.0f | %zu | %.1f | %.1f | %.1f | %.0f | %.1f-%.1f | %.0f | %.0f | %.1f |\n",
        c.name, ids.size(), compile_ms, ts.tables, ms.mean, ms.median, ms.p99, ms.max, ms.round_lo,
        ms.round_hi, ss.mean, ss.p99, as.mean);
    std::fprintf(stderr,
                 "%s: %zu positions, %zu tables (%zu derived, %zu dense, %zu escape lists), %zu "
                 "remainders\n",
                 c.name, ts.positions, ts.tables, ts.derived, ts.dense, ts.escape_lists,
                 ts.remainders);
    if (!emit.empty()) {
      std::ofstream(emit + "/" + c.name + ".gbnf") << gbnf;
      std::ofstream tokens(emit + "/" + c.name + ".tokens");
      for (const int32_t t : ids) tokens << t << "\n";
      std::ofstream cnt(emit + "/" + c.name + ".counts");
      for (const int n : counts) cnt << n << "\n";
    }
  }
  return 0;
}
