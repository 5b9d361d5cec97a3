// Sampler kinds: names, parsing (with llama.cpp's aliases), and MakeSampler,
// which validates a spec and calls the kind's factory (sampling/<kind>.cpp).
//
// Validation lives here, in one place, so every error names the parameter the
// way the command line spells it and shows the value it got:
// "top-p must be in (0, 1] (got 1.5)".
#include <array>
#include <charconv>
#include <cmath>
#include <string>

#include "sampling/grammar/mask_tables.h"
#include "sampling/sampler.h"

namespace ember {
namespace {

struct KindName {
  SamplerKind kind;
  const char* name;
};

constexpr std::array<KindName, 14> kKindNames = {{
    {SamplerKind::kLogitBias, "logit-bias"},
    {SamplerKind::kPenalties, "penalties"},
    {SamplerKind::kDry, "dry"},
    {SamplerKind::kTemperature, "temperature"},
    {SamplerKind::kTopK, "top-k"},
    {SamplerKind::kTopP, "top-p"},
    {SamplerKind::kMinP, "min-p"},
    {SamplerKind::kTypicalP, "typical"},
    {SamplerKind::kTopNSigma, "top-n-sigma"},
    {SamplerKind::kXtc, "xtc"},
    {SamplerKind::kGrammar, "grammar"},
    {SamplerKind::kGreedy, "greedy"},
    {SamplerKind::kDist, "dist"},
    {SamplerKind::kMirostatV2, "mirostat-v2"},
}};

// Extra spellings, after lower-casing and '_' -> '-' (so "top_k" is "top-k").
// The aliases are llama.cpp's (--samplers); "mirostat" alone stays unknown, as
// it could mean version 1.
constexpr std::array<KindName, 7> kAliases = {{
    {SamplerKind::kTemperature, "temp"},
    {SamplerKind::kTypicalP, "typ-p"},
    {SamplerKind::kTypicalP, "typ"},
    {SamplerKind::kTypicalP, "typical-p"},
    {SamplerKind::kTopP, "nucleus"},
    {SamplerKind::kTopNSigma, "top-nsigma"},
    {SamplerKind::kMirostatV2, "mirostat2"},
}};

// The shortest text that reads back as v: "1.5", "-0.5", "nan", "-1". A float
// is printed as a float (0.1f is "0.1", not "0.10000000149011612").
template <class T>
std::string Num(T v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

template <class T>
Status Bad(const char* param, const char* rule, T got) {
  return InvalidArgument(std::string(param) + " must be " + rule + " (got " + Num(got) + ")");
}

// a <= v <= b, false for NaN.
bool In(double v, double a, double b) { return v >= a && v <= b; }

Status ValidateTruncation(const SamplerSpec& s) {
  switch (s.kind) {
    case SamplerKind::kTopK:
      if (s.top_k < 0) return Bad("top-k", ">= 0", s.top_k);
      break;
    case SamplerKind::kTopP:
      if (!(s.top_p > 0.0f && s.top_p <= 1.0f)) return Bad("top-p", "in (0, 1]", s.top_p);
      break;
    case SamplerKind::kMinP:
      if (!In(s.min_p, 0.0, 1.0)) return Bad("min-p", "in [0, 1]", s.min_p);
      break;
    case SamplerKind::kTypicalP:
      if (!(s.typical_p > 0.0f && s.typical_p <= 1.0f)) {
        return Bad("typical", "in (0, 1]", s.typical_p);
      }
      break;
    case SamplerKind::kTopNSigma:
      if (!(s.top_n_sigma > 0.0f && std::isfinite(s.top_n_sigma))) {
        return Bad("top-nsigma", "> 0", s.top_n_sigma);
      }
      break;
    case SamplerKind::kXtc:
      if (!In(s.xtc_probability, 0.0, 1.0)) {
        return Bad("xtc-probability", "in [0, 1]", s.xtc_probability);
      }
      if (!In(s.xtc_threshold, 0.0, 1.0)) return Bad("xtc-threshold", "in [0, 1]", s.xtc_threshold);
      break;
    default:
      break;
  }
  return Status::Ok();
}

Status ValidateHistory(const SamplerSpec& s, const SamplerContext& ctx) {
  if (s.kind == SamplerKind::kPenalties) {
    if (s.penalty_last_n < -1) return Bad("repeat-last-n", ">= -1", s.penalty_last_n);
    if (!(s.repeat_penalty > 0.0f && std::isfinite(s.repeat_penalty))) {
      return Bad("repeat-penalty", "> 0", s.repeat_penalty);
    }
    if (!std::isfinite(s.presence_penalty)) {
      return Bad("presence-penalty", "finite", s.presence_penalty);
    }
    if (!std::isfinite(s.frequency_penalty)) {
      return Bad("frequency-penalty", "finite", s.frequency_penalty);
    }
  } else if (s.kind == SamplerKind::kDry) {
    if (!(s.dry_multiplier >= 0.0f && std::isfinite(s.dry_multiplier))) {
      return Bad("dry-multiplier", ">= 0", s.dry_multiplier);
    }
    if (s.dry_multiplier > 0.0f && !(s.dry_base > 1.0f && std::isfinite(s.dry_base))) {
      return Bad("dry-base", "> 1", s.dry_base);
    }
    if (s.dry_allowed_length < 0) return Bad("dry-allowed-length", ">= 0", s.dry_allowed_length);
    if (s.dry_penalty_last_n < -1) return Bad("dry-penalty-last-n", ">= -1", s.dry_penalty_last_n);
    for (const std::string& b : s.dry_sequence_breakers) {
      if (b.empty())
        return InvalidArgument("dry-sequence-breakers must not contain an empty string");
    }
  } else if (s.kind == SamplerKind::kLogitBias) {
    for (const auto& [id, bias] : s.logit_bias) {
      if (id < 0 || id >= ctx.n_vocab) {
        return InvalidArgument("logit-bias token id " + std::to_string(id) +
                               " is out of range [0, " + std::to_string(ctx.n_vocab) + ")");
      }
      if (std::isnan(bias)) {
        return InvalidArgument("logit-bias for token " + std::to_string(id) + " is NaN");
      }
    }
  }
  return Status::Ok();
}

Status ValidateGrammar(const SamplerSpec& s, const SamplerContext& ctx) {
  if (!s.grammar_tables) {
    return InvalidArgument(
        "the grammar stage needs the grammar compiled for the vocabulary "
        "(SamplerSpec::grammar_tables, from BuildGrammarTables)");
  }
  const int32_t n = s.grammar_tables->trie().n_vocab();
  if (n != ctx.n_vocab) {
    return InvalidArgument("the grammar was compiled for " + std::to_string(n) +
                           " tokens, the chain has " + std::to_string(ctx.n_vocab));
  }
  return Status::Ok();
}

Status Validate(const SamplerSpec& s, const SamplerContext& ctx) {
  if (ctx.n_vocab <= 0) {
    return InvalidArgument("the sampler needs the vocabulary size: n_vocab must be > 0 (got " +
                           std::to_string(ctx.n_vocab) + ")");
  }
  if (s.kind == SamplerKind::kTemperature &&
      !(s.temperature >= 0.0f && std::isfinite(s.temperature))) {
    return Bad("temperature", ">= 0", s.temperature);
  }
  if (s.kind == SamplerKind::kMirostatV2) {
    if (!(s.mirostat_tau > 0.0f && std::isfinite(s.mirostat_tau))) {
      return Bad("mirostat-ent (tau)", "> 0", s.mirostat_tau);
    }
    if (!(s.mirostat_eta > 0.0f && std::isfinite(s.mirostat_eta))) {
      return Bad("mirostat-lr (eta)", "> 0", s.mirostat_eta);
    }
  }
  if (s.kind == SamplerKind::kGrammar) EMBER_RETURN_IF_ERROR(ValidateGrammar(s, ctx));
  EMBER_RETURN_IF_ERROR(ValidateTruncation(s));
  return ValidateHistory(s, ctx);
}

}  // namespace

const char* SamplerKindName(SamplerKind kind) {
  for (const KindName& k : kKindNames) {
    if (k.kind == kind) return k.name;
  }
  return "unknown";
}

Status ParseSamplerKind(std::string_view name, SamplerKind* out) {
  std::string n(name);
  for (char& ch : n) {
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    if (ch == '_') ch = '-';
  }
  auto find = [&](const auto& table) {
    for (const KindName& k : table) {
      if (n == k.name) {
        *out = k.kind;
        return true;
      }
    }
    return false;
  };
  if (find(kKindNames) || find(kAliases)) return Status::Ok();
  std::string known;
  for (const KindName& k : kKindNames) known += std::string(known.empty() ? "" : ", ") + k.name;
  return InvalidArgument("unknown sampler '" + std::string(name) + "' (known: " + known + ")");
}

bool IsTerminal(SamplerKind kind) {
  return kind == SamplerKind::kGreedy || kind == SamplerKind::kDist ||
         kind == SamplerKind::kMirostatV2;
}

namespace {

std::unique_ptr<Sampler> NewSampler(const SamplerSpec& spec, const SamplerContext& ctx) {
  switch (spec.kind) {
    case SamplerKind::kLogitBias:
      return NewLogitBiasSampler(spec);
    case SamplerKind::kPenalties:
      return NewPenaltiesSampler(spec);
    case SamplerKind::kDry:
      return NewDrySampler(spec, ctx);
    case SamplerKind::kTemperature:
      return NewTemperatureSampler(spec);
    case SamplerKind::kTopK:
      return NewTopKSampler(spec);
    case SamplerKind::kTopP:
      return NewTopPSampler(spec);
    case SamplerKind::kMinP:
      return NewMinPSampler(spec);
    case SamplerKind::kTypicalP:
      return NewTypicalPSampler(spec);
    case SamplerKind::kTopNSigma:
      return NewTopNSigmaSampler(spec);
    case SamplerKind::kXtc:
      return NewXtcSampler(spec);
    case SamplerKind::kGrammar:
      return NewGrammarSampler(spec);
    case SamplerKind::kGreedy:
      return NewGreedySampler();
    case SamplerKind::kDist:
      return NewDistSampler();
    case SamplerKind::kMirostatV2:
      return NewMirostatV2Sampler(spec);
  }
  return nullptr;  // not a SamplerKind
}

}  // namespace

Status MakeSampler(const SamplerSpec& spec, const SamplerContext& ctx,
                   std::unique_ptr<Sampler>* out) {
  EMBER_RETURN_IF_ERROR(Validate(spec, ctx));
  std::unique_ptr<Sampler> s = NewSampler(spec, ctx);
  if (!s) {
    return InvalidArgument("unknown sampler kind " + std::to_string(static_cast<int>(spec.kind)));
  }
  *out = std::move(s);
  return Status::Ok();
}

}  // namespace ember
