// SamplerChain: builds and validates a chain of samplers and runs it per token;
// SpecsFromParams turns llama.cpp-style settings into a chain's specs.
//
// The default order (docs/SAMPLING.md explains it):
//
//   logit-bias, penalties, dry, grammar, top-n-sigma, temperature, top-k,
//   typical, top-p, min-p, xtc, then dist
//
// Bias, penalties and DRY act on the model's raw logits, as their definitions
// assume; the grammar mask comes next, before anything that truncates or
// draws (so every later sampler sees only admitted tokens; it commutes with
// the three before it, which change logits per token and drop nothing, and
// placed after them it leaves them the fast lookups of the full id-ordered
// vocabulary); top-nσ needs the statistics of the whole vocabulary (it is
// temperature-invariant, so it may as well run before temperature); the
// truncations run after temperature, so that top-p and min-p cut the
// distribution that is actually drawn from; top-k first among them so the rest
// work on k sorted candidates; XTC last, so it only ever promotes tokens that
// survived truncation.
#include "sampling/chain.h"

#include "sampling/greedy.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>

namespace ember {
namespace {

constexpr SamplerKind kDefaultOrder[] = {
    SamplerKind::kLogitBias, SamplerKind::kPenalties,   SamplerKind::kDry,  SamplerKind::kGrammar,
    SamplerKind::kTopNSigma, SamplerKind::kTemperature, SamplerKind::kTopK, SamplerKind::kTypicalP,
    SamplerKind::kTopP,      SamplerKind::kMinP,        SamplerKind::kXtc,
};

std::string Name(SamplerKind k) { return std::string("'") + SamplerKindName(k) + "'"; }

bool KnownKind(SamplerKind k) {
  const int v = static_cast<int>(k);
  return v >= static_cast<int>(SamplerKind::kLogitBias) &&
         v <= static_cast<int>(SamplerKind::kMirostatV2);
}

// Samplers that act on the history or the raw logits, and the grammar mask;
// they stay when the chain ends in greedy (temperature 0) or mirostat.
bool ShapesLogits(SamplerKind k) {
  return k == SamplerKind::kLogitBias || k == SamplerKind::kPenalties || k == SamplerKind::kDry ||
         k == SamplerKind::kGrammar;
}

// Whether the parameters make a sampler do something. Out-of-range values count
// as active, so that SamplerChain::Create reports them instead of the sampler
// silently disappearing.
bool Active(SamplerKind k, const SamplingParams& p) {
  switch (k) {
    case SamplerKind::kLogitBias:
      return !p.logit_bias.empty();
    case SamplerKind::kPenalties:
      return p.penalty_last_n != 0 && (p.repeat_penalty != 1.0f || p.presence_penalty != 0.0f ||
                                       p.frequency_penalty != 0.0f);
    case SamplerKind::kDry:
      return p.dry_multiplier != 0.0f && p.dry_penalty_last_n != 0;
    case SamplerKind::kTemperature:
      return p.temperature != 1.0f;
    case SamplerKind::kTopK:
      return p.top_k != 0;
    case SamplerKind::kTopP:
      return p.top_p != 1.0f;
    case SamplerKind::kMinP:
      return p.min_p != 0.0f;
    case SamplerKind::kTypicalP:
      return p.typical_p != 1.0f;
    case SamplerKind::kTopNSigma:
      return p.top_n_sigma > 0.0f;
    case SamplerKind::kXtc:
      return p.xtc_probability != 0.0f;
    case SamplerKind::kGrammar:
      return !p.grammar.empty();
    default:
      return false;
  }
}

SamplerSpec SpecOf(SamplerKind kind, const SamplingParams& p) {
  SamplerSpec s;
  s.kind = kind;
  s.temperature = p.temperature;
  s.top_k = p.top_k;
  s.top_p = p.top_p;
  s.min_p = p.min_p;
  s.typical_p = p.typical_p;
  s.top_n_sigma = p.top_n_sigma;
  s.xtc_probability = p.xtc_probability;
  s.xtc_threshold = p.xtc_threshold;
  s.penalty_last_n = p.penalty_last_n;
  s.repeat_penalty = p.repeat_penalty;
  s.presence_penalty = p.presence_penalty;
  s.frequency_penalty = p.frequency_penalty;
  s.dry_multiplier = p.dry_multiplier;
  s.dry_base = p.dry_base;
  s.dry_allowed_length = p.dry_allowed_length;
  s.dry_penalty_last_n = p.dry_penalty_last_n;
  s.logit_bias = p.logit_bias;
  s.mirostat_tau = p.mirostat_tau;
  s.mirostat_eta = p.mirostat_eta;
  s.grammar = p.grammar;
  s.grammar_root = p.grammar_root;
  return s;
}

Status CheckOrder(const std::vector<SamplerKind>& order) {
  for (size_t i = 0; i < order.size(); ++i) {
    const SamplerKind k = order[i];
    if (!KnownKind(k)) {
      return InvalidArgument("unknown sampler kind " + std::to_string(static_cast<int>(k)) +
                             " in the sampler order");
    }
    if (IsTerminal(k)) {
      return InvalidArgument(Name(k) +
                             " cannot be in the sampler order: the terminal sampler follows "
                             "from temperature (0: greedy) and mirostat (2: mirostat-v2)");
    }
    if (std::find(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(i), k) !=
        order.begin() + static_cast<std::ptrdiff_t>(i)) {
      return InvalidArgument(Name(k) + " appears twice in the sampler order");
    }
  }
  return Status::Ok();
}

// Range checks for a sampler the chain leaves out (truncation under greedy or
// mirostat), so that a bad value is an error whatever the other flags are.
Status CheckDropped(const SamplerSpec& spec) {
  std::unique_ptr<Sampler> unused;
  return MakeSampler(spec, SamplerContext{INT32_MAX, nullptr}, &unused);
}

}  // namespace

Status SpecsFromParams(const SamplingParams& p, std::vector<SamplerSpec>* out) {
  if (p.mirostat == 1) {
    return Unsupported("mirostat v1 is not implemented (mirostat 2 is)");
  }
  if (p.mirostat != 0 && p.mirostat != 2) {
    return InvalidArgument("mirostat must be 0, 1 or 2 (got " + std::to_string(p.mirostat) + ")");
  }
  if (!(p.temperature >= 0.0f && std::isfinite(p.temperature))) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof(buf), p.temperature);
    return InvalidArgument("temperature must be >= 0 (got " + std::string(buf, r.ptr) + ")");
  }
  std::vector<SamplerKind> order(p.order);
  if (order.empty()) order.assign(std::begin(kDefaultOrder), std::end(kDefaultOrder));
  EMBER_RETURN_IF_ERROR(CheckOrder(order));
  // The bias is part of the model's logits as the caller wants them: first,
  // unless the order places it.
  if (std::find(order.begin(), order.end(), SamplerKind::kLogitBias) == order.end()) {
    order.insert(order.begin(), SamplerKind::kLogitBias);
  }
  // A grammar is never dropped for not being listed: it goes before the first
  // sampler that truncates or draws.
  if (std::find(order.begin(), order.end(), SamplerKind::kGrammar) == order.end()) {
    order.insert(std::find_if(order.begin(), order.end(),
                              [](SamplerKind k) {
                                return !ShapesLogits(k);  // (kGrammar is not in the order)
                              }),
                 SamplerKind::kGrammar);
  }

  const bool greedy = p.temperature == 0.0f;
  const bool mirostat = !greedy && p.mirostat == 2;
  std::vector<SamplerSpec> specs;
  for (SamplerKind k : order) {
    if (!Active(k, p)) continue;
    if ((greedy || mirostat) && !ShapesLogits(k)) {
      if (k != SamplerKind::kTemperature) EMBER_RETURN_IF_ERROR(CheckDropped(SpecOf(k, p)));
      continue;
    }
    specs.push_back(SpecOf(k, p));
  }
  if (greedy) {
    specs.push_back(SpecOf(SamplerKind::kGreedy, p));
  } else if (mirostat) {
    // As llama.cpp: temperature, then mirostat, whatever the order says.
    if (p.temperature != 1.0f) specs.push_back(SpecOf(SamplerKind::kTemperature, p));
    specs.push_back(SpecOf(SamplerKind::kMirostatV2, p));
  } else {
    specs.push_back(SpecOf(SamplerKind::kDist, p));
  }
  *out = std::move(specs);
  return Status::Ok();
}

SamplerChain::SamplerChain(std::vector<SamplerSpec> specs, uint64_t seed)
    : specs_(std::move(specs)), seed_(seed), rng_(seed) {}

Status SamplerChain::Create(const std::vector<SamplerSpec>& specs, const SamplerContext& ctx,
                            uint64_t seed, std::unique_ptr<SamplerChain>* out) {
  if (specs.empty()) {
    return InvalidArgument(
        "the sampler chain is empty: it needs a terminal sampler (greedy, dist or mirostat-v2)");
  }
  const SamplerSpec* first_terminal = nullptr;
  for (const SamplerSpec& s : specs) {
    if (!IsTerminal(s.kind)) continue;
    if (first_terminal) {
      return InvalidArgument("two terminal samplers: " + Name(first_terminal->kind) + " and " +
                             Name(s.kind));
    }
    first_terminal = &s;
  }
  if (!IsTerminal(specs.back().kind)) {
    return InvalidArgument(
        "the sampler chain must end with exactly one terminal sampler (greedy, dist or "
        "mirostat-v2); got " +
        Name(specs.back().kind) + " last");
  }
  std::unique_ptr<SamplerChain> chain(new SamplerChain(specs, seed));
  chain->n_vocab_ = ctx.n_vocab;
  for (const SamplerSpec& s : specs) {
    std::unique_ptr<Sampler> sampler;
    EMBER_RETURN_IF_ERROR(MakeSampler(s, ctx, &sampler));
    chain->samplers_.push_back(std::move(sampler));
  }
  // The fast paths (chain.h): leading sparse edits, then greedy, or then
  // temperature and top-k (llama.cpp's default chain), or top-k alone, or
  // temperature and top-p, or top-p alone (top-p without top-k), or the same
  // with min-p (min-p without top-k or top-p). The
  // chain ends with a terminal sampler, which edits nothing sparsely.
  size_t i = 0;
  while (chain->samplers_[i]->EditsLogitsSparsely()) ++i;
  chain->sparse_prefix_ = i;
  chain->greedy_path_ = specs[i].kind == SamplerKind::kGreedy;
  float t = 1.0f;
  if (specs[i].kind == SamplerKind::kTemperature && specs[i].temperature > 0.0f) {
    t = specs[i].temperature;
    ++i;
  }
  if (specs[i].kind == SamplerKind::kTopK && specs[i].top_k > 0) {
    chain->fused_ = Fused::kTopK;
    chain->fused_next_ = i + 1;
    chain->fused_temperature_ = t;
    chain->fused_k_ = std::max(static_cast<size_t>(specs[i].top_k), specs[i].min_keep);
  } else if (specs[i].kind == SamplerKind::kTopP && specs[i].top_p < 1.0f) {
    chain->fused_ = Fused::kTopP;
    chain->fused_next_ = i + 1;
    chain->fused_temperature_ = t;
    chain->fused_p_ = specs[i].top_p;
    chain->fused_min_keep_ = specs[i].min_keep;
  } else if (specs[i].kind == SamplerKind::kMinP && specs[i].min_p > 0.0f) {
    chain->fused_ = Fused::kMinP;
    chain->fused_next_ = i + 1;
    chain->fused_temperature_ = t;
    chain->fused_p_ = specs[i].min_p;
    chain->fused_min_keep_ = specs[i].min_keep;
  }
  *out = std::move(chain);
  return Status::Ok();
}

int32_t SamplerChain::Sample(const float* logits) { return SampleWithTrace(logits, nullptr); }

const Candidates& SamplerChain::last_candidates() const {
  if (candidates_pending_) {
    candidates_pending_ = false;
    candidates_.Reset(logits_copy_.data(), n_vocab_);
    candidates_.selected = SelectGreedy(logits_copy_.data(), n_vocab_);
  }
  return candidates_;
}

int32_t SamplerChain::SampleWithTrace(const float* logits, std::vector<TraceStage>* trace) {
  candidates_pending_ = false;
  size_t first = 0;  // the first sampler to Apply
  if (trace == nullptr && (greedy_path_ || fused_ != Fused::kNone)) {
    const float* in = logits;
    if (greedy_path_ || sparse_prefix_ > 0) {
      logits_copy_.assign(logits, logits + n_vocab_);
      for (size_t i = 0; i < sparse_prefix_; ++i) {
        samplers_[i]->ApplyToLogits(logits_copy_.data(), n_vocab_);
      }
      in = logits_copy_.data();
    }
    if (greedy_path_) {  // what the greedy sampler would pick, see greedy.h
      candidates_pending_ = true;
      return SelectGreedy(in, n_vocab_);
    }
    if (fused_ == Fused::kTopK) {
      candidates_.ResetTopK(in, n_vocab_, fused_temperature_, fused_k_);
      first = fused_next_;
    } else if (fused_ == Fused::kTopP
                   ? ResetTopP(in, n_vocab_, fused_temperature_, fused_p_, fused_min_keep_,
                               &top_p_scratch_, &candidates_)
                   : ResetMinP(in, n_vocab_, fused_temperature_, fused_p_, fused_min_keep_,
                               &top_p_scratch_.logits, &candidates_)) {
      first = fused_next_;
    } else {  // declined: every sampler after the sparse ones, on the edited logits
      candidates_.Reset(in, n_vocab_);
      first = sparse_prefix_;
    }
  } else {
    candidates_.Reset(logits, n_vocab_);
  }
  if (trace) trace->clear();
  for (size_t i = first; i < samplers_.size(); ++i) {
    const std::unique_ptr<Sampler>& s = samplers_[i];
    s->Apply(candidates_, rng_);
    if (candidates_.size() == 0) {  // the grammar admits no token
      candidates_.selected = -1;
      if (trace) trace->push_back(TraceStage{SamplerKindName(s->kind()), {}});
      return -1;
    }
    if (!trace) continue;
    // Probabilities over the survivors as they stand, on a copy: the trace must
    // not change what the next sampler sees (has_probs, order).
    Candidates stage;
    stage.items() = candidates_.items();
    stage.ComputeProbs();
    std::sort(stage.items().begin(), stage.items().end(), RanksBefore);
    trace->push_back(TraceStage{SamplerKindName(s->kind()), std::move(stage.items())});
  }
  return candidates_.selected;
}

Status SamplerChain::Accept(int32_t token) {
  // The grammar stages first: a refusal leaves every sampler as it was.
  for (const std::unique_ptr<Sampler>& s : samplers_) {
    if (s->kind() == SamplerKind::kGrammar && !s->Accept(token)) {
      return InvalidArgument("token " + std::to_string(token) +
                             " is not allowed by the grammar here (not in its mask)");
    }
  }
  for (const std::unique_ptr<Sampler>& s : samplers_) {
    if (s->kind() != SamplerKind::kGrammar) s->Accept(token);
  }
  return Status::Ok();
}

void SamplerChain::AcceptPrompt(const std::vector<int32_t>& prompt) {
  for (const std::unique_ptr<Sampler>& s : samplers_) s->AcceptPrompt(prompt);
}

bool SamplerChain::has_grammar() const {
  return std::any_of(specs_.begin(), specs_.end(),
                     [](const SamplerSpec& s) { return s.kind == SamplerKind::kGrammar; });
}

void SamplerChain::Reset() {
  for (const std::unique_ptr<Sampler>& s : samplers_) s->Reset();
  rng_ = Rng(seed_);
}

std::unique_ptr<SamplerChain> SamplerChain::Clone() const {
  std::unique_ptr<SamplerChain> c(new SamplerChain(specs_, seed_));
  c->n_vocab_ = n_vocab_;
  c->sparse_prefix_ = sparse_prefix_;
  c->greedy_path_ = greedy_path_;
  c->fused_ = fused_;
  c->fused_next_ = fused_next_;
  c->fused_temperature_ = fused_temperature_;
  c->fused_k_ = fused_k_;
  c->fused_p_ = fused_p_;
  c->fused_min_keep_ = fused_min_keep_;
  c->rng_ = rng_;
  for (const std::unique_ptr<Sampler>& s : samplers_) c->samplers_.push_back(s->Clone());
  return c;
}

}  // namespace ember
