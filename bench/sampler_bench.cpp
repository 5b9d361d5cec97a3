// ember_sampler_bench: the per-token cost of sampling chains, in microseconds,
// at real vocabulary sizes (SmolLM2: 49152, Qwen2: 151936).
//
//   ember_sampler_bench [--tokens N] [--seed S] [--logits FILE --vocab N]
//
// Chains (SpecsFromParams, llama.cpp's default values otherwise):
//   default   penalties (1.1) -> temperature 0.8 -> top-k 40 -> top-p 0.95 -> min-p 0.05 -> dist
//   top-k 40, no penalty  the same without penalties (ember's and llama.cpp's
//             defaults: temperature and top-k run fused, Candidates::ResetTopK)
//   top-p     the same without top-k (top-p must find its prefix in the whole vocabulary)
//   min-p     the same without top-k and top-p (min-p alone cuts the whole vocabulary)
//   greedy    temperature 0 (with the penalties)
//   greedy alone  temperature 0, no penalty: the argmax of the raw logits
// over random normal logits (a fresh vector per token from a pool of 16) with
// standard deviation 1 (flat: top-p needs much of the vocabulary) and 4
// (peaked, more like a trained model's). A token is Sample + Accept.
// --logits: instead, a real model's rows of N logits (little-endian float32,
// as `ember eval --all-logits --logits-out FILE` writes them), up to 64 rows
// used in turn.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sampling/chain.h"

namespace {

using namespace ember;

std::vector<std::vector<float>> NormalLogits(int n_vocab, double sigma, uint64_t seed) {
  Rng rng(seed);
  std::vector<std::vector<float>> pool(16, std::vector<float>(static_cast<size_t>(n_vocab)));
  for (std::vector<float>& l : pool) {
    for (float& x : l) {  // Box-Muller
      const double u1 = 1.0 - rng.NextDouble(), u2 = rng.NextDouble();
      x = static_cast<float>(sigma * std::sqrt(-2.0 * std::log(u1)) *
                             std::cos(6.283185307179586 * u2));
    }
  }
  return pool;
}

// Microseconds per token (Sample + Accept), after a warm-up of a tenth: the
// mean over `tokens` tokens, best of three rounds.
double TimeChain(const SamplingParams& p, int n_vocab, const std::vector<std::vector<float>>& pool,
                 int tokens) {
  std::vector<SamplerSpec> specs;
  std::unique_ptr<SamplerChain> chain;
  Status st = SpecsFromParams(p, &specs);
  if (st.ok()) st = SamplerChain::Create(specs, SamplerContext{n_vocab, nullptr}, p.seed, &chain);
  if (!st.ok()) {
    std::fprintf(stderr, "ember_sampler_bench: %s\n", st.message().c_str());
    std::exit(1);
  }
  int64_t sink = 0;
  for (int i = 0; i < tokens / 10 + 1; ++i) {
    const int32_t id = chain->Sample(pool[static_cast<size_t>(i) % pool.size()].data());
    (void)chain->Accept(id);
    sink += id;
  }
  // Three rounds; the fastest is reported (other processes on the machine only
  // ever add time).
  double best = 1e300;
  for (int round = 0; round < 3; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < tokens; ++i) {
      const int32_t id = chain->Sample(pool[static_cast<size_t>(i) % pool.size()].data());
      (void)chain->Accept(id);
      sink += id;
    }
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::micro>(t1 - t0).count() / tokens);
  }
  if (sink == -1) std::printf("\n");  // keeps the loop from being optimized away
  return best;
}

// Up to 64 rows of n_vocab float32 logits from `path` (ember eval --all-logits).
std::vector<std::vector<float>> FileLogits(const char* path, int n_vocab) {
  std::vector<std::vector<float>> pool;
  FILE* f = std::fopen(path, "rb");
  if (f == nullptr) {
    std::fprintf(stderr, "ember_sampler_bench: cannot open %s\n", path);
    std::exit(1);
  }
  std::vector<float> row(static_cast<size_t>(n_vocab));
  while (pool.size() < 64 && std::fread(row.data(), sizeof(float), row.size(), f) == row.size()) {
    pool.push_back(row);
  }
  std::fclose(f);
  if (pool.empty()) {
    std::fprintf(stderr, "ember_sampler_bench: %s holds no row of %d logits\n", path, n_vocab);
    std::exit(1);
  }
  return pool;
}

}  // namespace

int main(int argc, char** argv) {
  int tokens = 300;
  uint64_t seed = 1;
  const char* logits_file = nullptr;
  int file_vocab = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--tokens") && i + 1 < argc) {
      tokens = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (!std::strcmp(argv[i], "--logits") && i + 1 < argc) {
      logits_file = argv[++i];
    } else if (!std::strcmp(argv[i], "--vocab") && i + 1 < argc) {
      file_vocab = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: ember_sampler_bench [--tokens N] [--seed S] [--logits FILE --vocab "
                   "N]\n");
      return 2;
    }
  }
  if (tokens < 1) tokens = 1;
  if ((logits_file != nullptr) != (file_vocab > 0)) {
    std::fprintf(stderr, "ember_sampler_bench: --logits and --vocab N (> 0) go together\n");
    return 2;
  }

  SamplingParams def;
  def.repeat_penalty = 1.1f;
  def.seed = seed;
  SamplingParams top_p = def;
  top_p.top_k = 0;
  SamplingParams min_p = top_p;
  min_p.top_p = 1.0f;
  SamplingParams greedy = def;
  greedy.temperature = 0.0f;
  SamplingParams plain = def;  // llama.cpp's and ember's defaults: no penalty
  plain.repeat_penalty = 1.0f;
  SamplingParams argmax = greedy;  // the chain of greedy alone: the argmax of the logits
  argmax.repeat_penalty = 1.0f;
  const struct {
    const char* name;
    const SamplingParams* params;
  } chains[] = {{"default (top-k 40)", &def}, {"top-k 40, no penalty", &plain},
                {"top-p, no top-k", &top_p},  {"min-p alone", &min_p},
                {"greedy", &greedy},          {"greedy alone", &argmax}};

  std::printf("%-22s %8s %7s %12s\n", "chain", "n_vocab", "sigma", "us/token");
  if (logits_file != nullptr) {
    const auto pool = FileLogits(logits_file, file_vocab);
    for (const auto& c : chains) {
      const double us = TimeChain(*c.params, file_vocab, pool, tokens);
      std::printf("%-22s %8d %7s %12.1f\n", c.name, file_vocab, "file", us);
    }
    return 0;
  }
  for (int n_vocab : {49152, 151936}) {
    for (double sigma : {1.0, 4.0}) {
      const auto pool = NormalLogits(n_vocab, sigma, seed);
      for (const auto& c : chains) {
        const double us = TimeChain(*c.params, n_vocab, pool, tokens);
        std::printf("%-22s %8d %7.1f %12.1f\n", c.name, n_vocab, sigma, us);
      }
    }
  }
  return 0;
}
