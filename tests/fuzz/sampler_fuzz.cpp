// libFuzzer target: sampler chains built from fuzzed settings, run on fuzzed
// logits.
//
// Input: byte 0 picks the way in and the vocabulary size, then
//  - even byte 0: `ember run`'s sampling flags as text (--temp 0.7 --top-k 5
//    --samplers "top_k;temp" --logit-bias 3+2 ...; cli::Args, then
//    ParseLogitBiases and SamplingParamsFromFlags in apps/ember), up to a NUL,
//    into ember_sampler_from_params (the C API: the --samplers list, ranges);
//  - odd byte 0: up to 8 sampler specs decoded from the bytes (kind and every
//    parameter; ember::SamplerChain::Create with a vocabulary whose tokens
//    have text, for DRY's sequence breakers);
// and the rest as float32 logits (repeated to fill the vocabulary; clamped
// to +-1e4, NaN and +inf made finite, -inf kept: a banned token). A chain
// that builds samples 8 steps, accepting each choice. Checks, besides no
// crash, sanitizer report, leak or hang: the chosen id is in the vocabulary
// and among the final candidates; their probabilities, when computed, are in
// [0, 1] and sum to 1; with specs, the chain's fast paths (Sample) choose and
// leave what every sampler in turn does (SampleWithTrace on a clone).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli.h"
#include "ember.h"
#include "sampling/chain.h"
#include "sampling_flags.h"

namespace {

// Reads the input front to back; zeros once it runs out.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  template <typename T>
  T Get() {
    T v{};
    const size_t n = std::min(sizeof(T), static_cast<size_t>(end_ - p_));
    std::memcpy(&v, p_, n);
    p_ += n;
    return v;
  }
  const uint8_t* p_;
  const uint8_t* end_;
};

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "sampler_fuzz: %s\n", what);
  std::abort();
}

std::vector<float> Logits(const uint8_t* data, size_t size, int32_t n_vocab) {
  std::vector<float> raw(size / 4);
  if (!raw.empty()) std::memcpy(raw.data(), data, raw.size() * 4);
  if (raw.empty()) raw = {0.5f, -1.0f, 2.0f};
  std::vector<float> out(static_cast<size_t>(n_vocab));
  bool finite = false;
  for (size_t i = 0; i < out.size(); ++i) {
    float x = raw[i % raw.size()] + static_cast<float>(i / raw.size()) * 0.01f;
    if (std::isnan(x) || x == INFINITY) x = static_cast<float>(i % 7);
    if (x != -INFINITY) x = std::clamp(x, -1e4f, 1e4f);
    finite = finite || x != -INFINITY;
    out[i] = x;
  }
  if (!finite) out[0] = 0;  // not every token banned
  return out;
}

template <typename Cand>
void CheckChoice(int32_t token, int32_t n_vocab, const std::vector<Cand>& cands, bool has_probs) {
  if (token < 0 || token >= n_vocab) Fail("the chosen token is outside the vocabulary");
  if (cands.empty()) return;
  bool found = false;
  double sum = 0;
  for (const Cand& c : cands) {
    found = found || c.id == token;
    if (has_probs && !(c.p >= 0 && c.p <= 1.0001f)) Fail("a probability is outside [0, 1]");
    sum += c.p;
  }
  if (!found) Fail("the chosen token is not among the final candidates");
  if (has_probs && std::fabs(sum - 1) > 1e-3) Fail("the probabilities do not sum to 1");
}

// `ember run`'s flags -> the C API.
void FromFlags(std::string_view text, const uint8_t* rest, size_t rest_size, int32_t n_vocab) {
  std::vector<std::string> words;
  {
    std::istringstream in{std::string(text)};
    for (std::string w; in >> w;) {
      if (w == "-h" || w == "--help") continue;  // (prints the usage)
      words.push_back(w);
    }
  }
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  cli::Args args;
  ember_sampling_params p;
  cli::LogitBiases biases;
  std::string samplers;
  try {
    if (!args.Parse("run", "", cli::SamplingOptions("temperature"), static_cast<int>(argv.size()),
                    argv.data())) {
      return;
    }
    biases = cli::ParseLogitBiases(args);
    p = cli::SamplingParamsFromFlags(args, biases);
  } catch (const cli::UsageError&) {
    return;  // a usage error is the right answer to a bad flag
  }
  if (args.Has("--samplers")) {
    samplers = args.Get("--samplers");
    p.samplers = samplers.c_str();
  }
  ember_sampler* s = nullptr;
  if (ember_sampler_from_params(nullptr, n_vocab, &p, &s) != EMBER_OK) return;
  const std::vector<float> logits = Logits(rest, rest_size, n_vocab);
  std::vector<ember_candidate> cands(static_cast<size_t>(n_vocab));
  for (int step = 0; step < 8; ++step) {
    int32_t token = -1;
    if (ember_sampler_sample(s, logits.data(), n_vocab, step == 3, &token) != EMBER_OK) {
      Fail("sampling failed");
    }
    size_t n = 0;
    if (ember_sampler_candidates(s, cands.data(), cands.size(), &n) != EMBER_OK) {
      Fail("candidates failed");
    }
    std::vector<ember_candidate> got(cands.begin(), cands.begin() + static_cast<ptrdiff_t>(n));
    // The C API gives p for every candidate of a sampled distribution; a
    // greedy chain's are 0.
    bool any_p = false;
    for (const ember_candidate& c : got) any_p = any_p || c.p != 0;
    CheckChoice(token, n_vocab, got, any_p);
    if (ember_sampler_accept(s, token) != EMBER_OK) Fail("accepting the chosen token failed");
  }
  ember_sampler_free(s);
}

const char* const kPieces[] = {"\n", ":", "\"", "*", "a", "ab", " the", "the", "", "x\ny"};

// Specs decoded from bytes -> ember::SamplerChain.
void FromSpecs(Bytes& b, int32_t n_vocab) {
  const int n = 1 + b.Get<uint8_t>() % 8;
  std::vector<ember::SamplerSpec> specs;
  for (int i = 0; i < n; ++i) {
    ember::SamplerSpec s;
    s.kind = static_cast<ember::SamplerKind>(b.Get<uint8_t>() % 14);
    if (s.kind == ember::SamplerKind::kGrammar) s.kind = ember::SamplerKind::kDist;
    const uint8_t which = b.Get<uint8_t>();
    auto f = [&](float* x) {
      if (which & 1) *x = b.Get<float>();
    };
    auto k = [&](int32_t* x) {
      if (which & 2) *x = b.Get<int32_t>() % 4096;
    };
    f(&s.temperature), k(&s.top_k), f(&s.top_p), f(&s.min_p), f(&s.typical_p), f(&s.top_n_sigma);
    f(&s.xtc_probability), f(&s.xtc_threshold), k(&s.penalty_last_n), f(&s.repeat_penalty);
    f(&s.presence_penalty), f(&s.frequency_penalty), f(&s.dry_multiplier), f(&s.dry_base);
    k(&s.dry_allowed_length), k(&s.dry_penalty_last_n), f(&s.mirostat_tau), f(&s.mirostat_eta);
    if (which & 4) s.min_keep = b.Get<uint8_t>();
    if (which & 8) {
      s.dry_sequence_breakers.clear();
      for (int j = b.Get<uint8_t>() % 4; j > 0; --j) {
        s.dry_sequence_breakers.push_back(kPieces[b.Get<uint8_t>() % 10]);
      }
    }
    if (which & 16) {
      for (int j = b.Get<uint8_t>() % 4; j > 0; --j) {
        s.logit_bias.emplace_back(b.Get<int16_t>(), b.Get<float>());
      }
    }
    specs.push_back(std::move(s));
  }
  ember::SamplerContext ctx;
  ctx.n_vocab = n_vocab;
  ctx.token_piece = [](int32_t t) { return std::string_view(kPieces[t % 10]); };
  std::unique_ptr<ember::SamplerChain> chain;
  if (!ember::SamplerChain::Create(specs, ctx, b.Get<uint64_t>(), &chain).ok()) return;
  const std::vector<float> logits = Logits(b.p_, static_cast<size_t>(b.end_ - b.p_), n_vocab);
  std::vector<int32_t> prompt;
  for (int32_t t = 0; t < 6; ++t) prompt.push_back((t * 7) % n_vocab);
  chain->AcceptPrompt(prompt);
  for (int step = 0; step < 8; ++step) {
    // Sample takes the chain's fast paths where it has them (greedy over a
    // copy of the logits, temperature and top-k fused); a clone under a trace
    // runs every sampler in turn. Same draw, same candidates, bit for bit.
    const std::unique_ptr<ember::SamplerChain> twin = chain->Clone();
    std::vector<ember::TraceStage> trace;
    const int32_t token = chain->Sample(logits.data());
    const ember::Candidates& c = chain->last_candidates();
    CheckChoice(token, n_vocab, c.items(), c.has_probs());
    if (twin->SampleWithTrace(logits.data(), &trace) != token) {
      Fail("Sample and SampleWithTrace chose different tokens");
    }
    const ember::Candidates& t = twin->last_candidates();
    if (t.size() != c.size() || t.has_probs() != c.has_probs() ||
        (c.size() > 0 && std::memcmp(t.items().data(), c.items().data(),
                                     c.size() * sizeof(ember::Candidate)) != 0)) {
      Fail("Sample and SampleWithTrace left different candidates");
    }
    if (!chain->Accept(token).ok()) Fail("accepting the chosen token failed");
    if (step == 4) chain = chain->Clone();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int32_t n_vocab = 1 + (data[0] >> 1) * 3;  // 1 .. 382
  if (data[0] & 1) {
    Bytes b(data + 1, size - 1);
    FromSpecs(b, n_vocab);
  } else {
    const std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
    const size_t nul = std::min(in.find('\0'), in.size());
    const size_t rest = std::min(nul + 1, in.size());
    FromFlags(in.substr(0, nul), data + 1 + rest, size - 1 - rest, n_vocab);
  }
  return 0;
}
