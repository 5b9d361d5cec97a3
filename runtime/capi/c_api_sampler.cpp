// The C API's sampler chains (include/ember.h, "Samplers").
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ember.h"
#include "runtime/capi/c_api_internal.h"
#include "runtime/constrain/json_schema.h"
#include "sampling/chain.h"

using namespace ember::capi;

namespace {

ember::SamplerKind KindOf(ember_sampler_type t) {
  switch (t) {
    case EMBER_SAMPLER_LOGIT_BIAS:
      return ember::SamplerKind::kLogitBias;
    case EMBER_SAMPLER_PENALTIES:
      return ember::SamplerKind::kPenalties;
    case EMBER_SAMPLER_DRY:
      return ember::SamplerKind::kDry;
    case EMBER_SAMPLER_TEMPERATURE:
      return ember::SamplerKind::kTemperature;
    case EMBER_SAMPLER_TOP_K:
      return ember::SamplerKind::kTopK;
    case EMBER_SAMPLER_TOP_P:
      return ember::SamplerKind::kTopP;
    case EMBER_SAMPLER_MIN_P:
      return ember::SamplerKind::kMinP;
    case EMBER_SAMPLER_TYPICAL_P:
      return ember::SamplerKind::kTypicalP;
    case EMBER_SAMPLER_TOP_N_SIGMA:
      return ember::SamplerKind::kTopNSigma;
    case EMBER_SAMPLER_XTC:
      return ember::SamplerKind::kXtc;
    case EMBER_SAMPLER_GREEDY:
      return ember::SamplerKind::kGreedy;
    case EMBER_SAMPLER_DIST:
      return ember::SamplerKind::kDist;
    case EMBER_SAMPLER_MIROSTAT_V2:
      return ember::SamplerKind::kMirostatV2;
    case EMBER_SAMPLER_GRAMMAR:
      return ember::SamplerKind::kGrammar;
  }
  return ember::SamplerKind::kGreedy;  // unreachable: checked by ValidType
}

bool ValidType(int t) { return t >= EMBER_SAMPLER_LOGIT_BIAS && t <= EMBER_SAMPLER_GRAMMAR; }

std::vector<std::pair<int32_t, float>> Bias(const int32_t* ids, const float* values, size_t n) {
  std::vector<std::pair<int32_t, float>> out;
  for (size_t i = 0; i < n; ++i) out.emplace_back(ids[i], values[i]);
  return out;
}

// The model's vocabulary size and token text for a chain; n_vocab when model is NULL.
ember_status Context(const ember_model* model, int32_t n_vocab, ember::SamplerContext* ctx) {
  if (model != nullptr) {
    ctx->n_vocab = static_cast<int32_t>(model->model->config().n_vocab);
    const ember::StringTable* pieces = &model->model->tokenizer().pieces();
    ctx->token_piece = [pieces](int32_t t) { return (*pieces)[static_cast<size_t>(t)]; };
    return EMBER_OK;
  }
  if (n_vocab <= 0) {
    return Fail(EMBER_ERR_INVALID_ARGUMENT,
                "ember_sampler: n_vocab must be > 0 when there is no model (got " +
                    std::to_string(n_vocab) + ")");
  }
  ctx->n_vocab = n_vocab;
  return EMBER_OK;
}

ember_status Build(std::vector<ember::SamplerSpec> specs, const ember::SamplerContext& ctx,
                   uint64_t seed, ember_sampler** out) {
  auto s = std::make_unique<ember_sampler>();
  ember_status st = Report(ember::SamplerChain::Create(specs, ctx, seed, &s->chain));
  if (st != EMBER_OK) return st;
  *out = s.release();
  return EMBER_OK;
}

ember_status CopyCandidates(const std::vector<ember::Candidate>& from, ember_candidate* buf,
                            size_t capacity, size_t* n) {
  if (n != nullptr) *n = from.size();
  if (capacity < from.size()) {
    return Fail(EMBER_ERR_BUFFER_TOO_SMALL, "ember_sampler: " + std::to_string(from.size()) +
                                                " candidates do not fit in " +
                                                std::to_string(capacity));
  }
  for (size_t i = 0; i < from.size(); ++i) buf[i] = {from[i].id, from[i].logit, from[i].p};
  return EMBER_OK;
}

// The numeric fields the spec and params structs, C and C++, all have under
// the same names, from one to another (C -> C++, C++ defaults -> C): one list
// for every direction.
template <typename From, typename To>
void CopyNumbers(const From& f, To* out) {
  To& t = *out;
  t.temperature = f.temperature;
  t.top_k = f.top_k;
  t.top_p = f.top_p;
  t.min_p = f.min_p;
  t.typical_p = f.typical_p;
  t.top_n_sigma = f.top_n_sigma;
  t.xtc_probability = f.xtc_probability;
  t.xtc_threshold = f.xtc_threshold;
  t.penalty_last_n = f.penalty_last_n;
  t.repeat_penalty = f.repeat_penalty;
  t.presence_penalty = f.presence_penalty;
  t.frequency_penalty = f.frequency_penalty;
  t.dry_multiplier = f.dry_multiplier;
  t.dry_base = f.dry_base;
  t.dry_allowed_length = f.dry_allowed_length;
  t.dry_penalty_last_n = f.dry_penalty_last_n;
  t.mirostat_tau = f.mirostat_tau;
  t.mirostat_eta = f.mirostat_eta;
}

// The C spec's fields from ember::SamplerSpec's defaults (type and the
// pointer fields are left as they are).
void FillSpecDefaults(ember_sampler_spec* out) {
  const ember::SamplerSpec d;
  CopyNumbers(d, out);
  out->min_keep = static_cast<int32_t>(d.min_keep);
}

// The C specs as ember::SamplerSpec (grammar text not included).
ember_status ConvertSpecs(const ember_sampler_spec* specs, size_t n, const char* fn,
                          std::vector<ember::SamplerSpec>* out) {
  EMBER_REQUIRE_ARG(specs != nullptr || n == 0, std::string(fn) + ": specs is NULL");
  std::vector<ember::SamplerSpec>& v = *out;
  for (size_t i = 0; i < n; ++i) {
    const ember_sampler_spec& c = specs[i];
    const int type = EnumInt(c.type);
    if (!ValidType(type)) {
      return Fail(EMBER_ERR_INVALID_ARGUMENT, std::string(fn) + ": spec " + std::to_string(i) +
                                                  " has an unknown sampler type " +
                                                  std::to_string(type));
    }
    EMBER_REQUIRE_ARG(c.min_keep >= 1, "min-keep must be >= 1");
    EMBER_REQUIRE_ARG(c.n_logit_bias == 0 || (c.logit_bias_ids && c.logit_bias_values),
                      "logit-bias: ids or values are NULL");
    EMBER_REQUIRE_ARG(c.n_dry_sequence_breakers == 0 || c.dry_sequence_breakers,
                      "dry-sequence-breakers is NULL");
    ember::SamplerSpec s;
    s.kind = KindOf(static_cast<ember_sampler_type>(type));
    CopyNumbers(c, &s);
    s.min_keep = static_cast<size_t>(c.min_keep);
    if (c.dry_sequence_breakers != nullptr) {
      s.dry_sequence_breakers.clear();
      for (size_t j = 0; j < c.n_dry_sequence_breakers; ++j) {
        EMBER_REQUIRE_ARG(c.dry_sequence_breakers[j] != nullptr,
                          "dry-sequence-breakers: a string is NULL");
        s.dry_sequence_breakers.emplace_back(c.dry_sequence_breakers[j]);
      }
    }
    s.logit_bias = Bias(c.logit_bias_ids, c.logit_bias_values, c.n_logit_bias);
    v.push_back(std::move(s));
  }
  return EMBER_OK;
}

// llama.cpp-style settings from the C struct (NULL: the defaults).
ember_status ParamsFromC(const ember_sampling_params* params, ember::SamplingParams* out) {
  const ember_sampling_params c = params ? *params : ember_sampling_default_params();
  EMBER_REQUIRE_ARG(c.n_logit_bias == 0 || (c.logit_bias_ids && c.logit_bias_values),
                    "logit-bias: ids or values are NULL");
  ember::SamplingParams p;
  CopyNumbers(c, &p);
  p.mirostat = c.mirostat;
  p.logit_bias = Bias(c.logit_bias_ids, c.logit_bias_values, c.n_logit_bias);
  p.seed = c.seed;
  if (c.samplers != nullptr) {
    // "a;b;c" or "a,b,c".
    std::string list = c.samplers;
    std::replace(list.begin(), list.end(), ',', ';');
    size_t at = 0;
    while (at <= list.size()) {
      const size_t end = std::min(list.find(';', at), list.size());
      const std::string name = list.substr(at, end - at);
      if (!name.empty()) {
        ember::SamplerKind k;
        ember_status s = Report(ember::ParseSamplerKind(name, &k));
        if (s != EMBER_OK) return s;
        p.order.push_back(k);
      }
      at = end + 1;
    }
    EMBER_REQUIRE_ARG(!p.order.empty(), "samplers: the list names no sampler");
  }
  *out = std::move(p);
  return EMBER_OK;
}

}  // namespace

extern "C" {

ember_sampler_spec ember_sampler_spec_default(ember_sampler_type type) {
  ember_sampler_spec s;
  std::memset(&s, 0, sizeof(s));
  std::memcpy(&s.type, &type, sizeof type);  // kept as given, even if invalid
  // SamplerSpec's default DRY breakers allocate: no exception may leave here.
  // Without memory the spec stays zeroed, which ember_sampler_create refuses
  // (min_keep 0) with a message.
  try {
    FillSpecDefaults(&s);
  } catch (...) {
  }
  return s;
}

ember_status ember_sampler_create(const ember_model* model, int32_t n_vocab,
                                  const ember_sampler_spec* specs, size_t n, uint64_t seed,
                                  ember_sampler** out) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(out != nullptr, "ember_sampler_create: out is NULL");
    *out = nullptr;
    ember::SamplerContext ctx;
    if (ember_status s = Context(model, n_vocab, &ctx); s != EMBER_OK) return s;
    std::vector<ember::SamplerSpec> v;
    if (ember_status s = ConvertSpecs(specs, n, "ember_sampler_create", &v); s != EMBER_OK) {
      return s;
    }
    for (const ember::SamplerSpec& x : v) {
      EMBER_REQUIRE_ARG(x.kind != ember::SamplerKind::kGrammar,
                        "ember_sampler_create: an EMBER_SAMPLER_GRAMMAR spec needs the grammar's "
                        "text: use ember_sampler_create_grammar");
    }
    return Build(std::move(v), ctx, seed, out);
  });
}

ember_status ember_sampler_create_grammar(const ember_model* model, const ember_sampler_spec* specs,
                                          size_t n, const char* gbnf, const char* root,
                                          uint64_t seed, ember_sampler** out) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(out != nullptr, "ember_sampler_create_grammar: out is NULL");
    *out = nullptr;
    EMBER_REQUIRE_ARG(model != nullptr,
                      "ember_sampler_create_grammar: model is NULL (the grammar needs the "
                      "vocabulary's text)");
    EMBER_REQUIRE_ARG(gbnf != nullptr, "ember_sampler_create_grammar: gbnf is NULL");
    ember::SamplerContext ctx;
    if (ember_status s = Context(model, 0, &ctx); s != EMBER_OK) return s;
    std::vector<ember::SamplerSpec> v;
    if (ember_status s = ConvertSpecs(specs, n, "ember_sampler_create_grammar", &v);
        s != EMBER_OK) {
      return s;
    }
    auto is_grammar = [](const ember::SamplerSpec& x) {
      return x.kind == ember::SamplerKind::kGrammar;
    };
    const auto n_grammar = std::count_if(v.begin(), v.end(), is_grammar);
    EMBER_REQUIRE_ARG(n_grammar <= 1,
                      "ember_sampler_create_grammar: more than one EMBER_SAMPLER_GRAMMAR spec");
    if (n_grammar == 0) {
      // Before the first sampler that truncates or draws.
      auto at = std::find_if(v.begin(), v.end(), [](const ember::SamplerSpec& x) {
        return x.kind != ember::SamplerKind::kLogitBias &&
               x.kind != ember::SamplerKind::kPenalties && x.kind != ember::SamplerKind::kDry;
      });
      ember::SamplerSpec g;
      g.kind = ember::SamplerKind::kGrammar;
      v.insert(at, g);
    }
    ember::SamplerSpec& g = *std::find_if(v.begin(), v.end(), is_grammar);
    g.grammar = gbnf;
    g.grammar_root = root != nullptr ? root : "root";
    ember_status st = Report(model->model->grammar_cache().Attach(&v));
    if (st != EMBER_OK) return st;
    return Build(std::move(v), ctx, seed, out);
  });
}

ember_sampling_params ember_sampling_default_params(void) {
  const ember::SamplingParams d;
  ember_sampling_params p;
  std::memset(&p, 0, sizeof(p));
  CopyNumbers(d, &p);
  p.mirostat = d.mirostat;
  p.samplers = nullptr;
  p.seed = d.seed;
  return p;
}

ember_status ember_sampler_from_params(const ember_model* model, int32_t n_vocab,
                                       const ember_sampling_params* params, ember_sampler** out) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(out != nullptr, "ember_sampler_from_params: out is NULL");
    *out = nullptr;
    ember::SamplingParams p;
    if (ember_status s = ParamsFromC(params, &p); s != EMBER_OK) return s;
    std::vector<ember::SamplerSpec> specs;
    if (ember_status s = Report(ember::SpecsFromParams(p, &specs)); s != EMBER_OK) return s;
    ember::SamplerContext ctx;
    if (ember_status s = Context(model, n_vocab, &ctx); s != EMBER_OK) return s;
    return Build(std::move(specs), ctx, p.seed, out);
  });
}

ember_status ember_sampler_from_params_grammar(const ember_model* model,
                                               const ember_sampling_params* params,
                                               const char* gbnf, const char* root,
                                               ember_sampler** out) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(out != nullptr, "ember_sampler_from_params_grammar: out is NULL");
    *out = nullptr;
    EMBER_REQUIRE_ARG(model != nullptr,
                      "ember_sampler_from_params_grammar: model is NULL (the grammar needs the "
                      "vocabulary's text)");
    EMBER_REQUIRE_ARG(gbnf != nullptr, "ember_sampler_from_params_grammar: gbnf is NULL");
    ember::SamplingParams p;
    if (ember_status s = ParamsFromC(params, &p); s != EMBER_OK) return s;
    p.grammar = gbnf;
    p.grammar_root = root != nullptr ? root : "root";
    EMBER_REQUIRE_ARG(!p.grammar.empty(), "ember_sampler_from_params_grammar: gbnf is empty");
    std::vector<ember::SamplerSpec> specs;
    if (ember_status s = Report(ember::SpecsFromParams(p, &specs)); s != EMBER_OK) return s;
    if (ember_status s = Report(model->model->grammar_cache().Attach(&specs)); s != EMBER_OK) {
      return s;
    }
    ember::SamplerContext ctx;
    if (ember_status s = Context(model, 0, &ctx); s != EMBER_OK) return s;
    return Build(std::move(specs), ctx, p.seed, out);
  });
}

ember_status ember_json_schema_to_grammar(const char* schema, char* buf, size_t capacity,
                                          size_t* length) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(schema != nullptr, "ember_json_schema_to_grammar: schema is NULL");
    EMBER_REQUIRE_ARG(buf != nullptr || capacity == 0, "ember_json_schema_to_grammar: buf is NULL");
    std::string gbnf;
    if (ember_status s = Report(ember::JsonSchemaToGbnf(schema, &gbnf)); s != EMBER_OK) return s;
    if (length != nullptr) *length = gbnf.size() + 1;
    if (capacity < gbnf.size() + 1) {
      return Fail(EMBER_ERR_BUFFER_TOO_SMALL, "ember_json_schema_to_grammar: the grammar needs " +
                                                  std::to_string(gbnf.size() + 1) + " bytes");
    }
    std::memcpy(buf, gbnf.c_str(), gbnf.size() + 1);
    return EMBER_OK;
  });
}

void ember_sampler_free(ember_sampler* sampler) { delete sampler; }

ember_status ember_sampler_sample(ember_sampler* sampler, const float* logits, int32_t n_vocab,
                                  bool trace, int32_t* token) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(sampler != nullptr, "ember_sampler_sample: sampler is NULL");
    EMBER_REQUIRE_ARG(logits != nullptr, "ember_sampler_sample: logits is NULL");
    EMBER_REQUIRE_ARG(token != nullptr, "ember_sampler_sample: token is NULL");
    const int32_t want = sampler->chain->n_vocab();
    if (n_vocab != want) {
      return Fail(EMBER_ERR_INVALID_ARGUMENT, "ember_sampler_sample: " + std::to_string(n_vocab) +
                                                  " logits for a chain built for " +
                                                  std::to_string(want) + " tokens");
    }
    sampler->trace.clear();
    *token = trace ? sampler->chain->SampleWithTrace(logits, &sampler->trace)
                   : sampler->chain->Sample(logits);
    return EMBER_OK;
  });
}

ember_status ember_sampler_accept(ember_sampler* sampler, int32_t token) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(sampler != nullptr, "ember_sampler_accept: sampler is NULL");
    const int32_t n = sampler->chain->n_vocab();
    if (token < 0 || token >= n) {
      return Fail(EMBER_ERR_INVALID_ARGUMENT, "ember_sampler_accept: token " +
                                                  std::to_string(token) + " is outside 0.." +
                                                  std::to_string(n - 1));
    }
    return Report(sampler->chain->Accept(token));
  });
}

void ember_sampler_reset(ember_sampler* sampler) {
  if (sampler != nullptr) sampler->chain->Reset();
}

ember_status ember_sampler_candidates(const ember_sampler* sampler, ember_candidate* buf,
                                      size_t capacity, size_t* n) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(sampler != nullptr, "ember_sampler_candidates: sampler is NULL");
    EMBER_REQUIRE_ARG(buf != nullptr || capacity == 0, "ember_sampler_candidates: buf is NULL");
    // A greedy pick leaves no probabilities behind: compute them on a copy.
    ember::Candidates c = sampler->chain->last_candidates();
    if (!c.has_probs() && c.size() > 0) c.ComputeProbs();
    std::vector<ember::Candidate> items = c.items();
    std::stable_sort(items.begin(), items.end(),
                     [](const ember::Candidate& a, const ember::Candidate& b) {
                       return a.p > b.p || (a.p == b.p && a.id < b.id);
                     });
    return CopyCandidates(items, buf, capacity, n);
  });
}

size_t ember_sampler_trace_stages(const ember_sampler* sampler) {
  return sampler == nullptr ? 0 : sampler->trace.size();
}

ember_status ember_sampler_trace(const ember_sampler* sampler, size_t stage, const char** name,
                                 ember_candidate* buf, size_t capacity, size_t* n) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(sampler != nullptr, "ember_sampler_trace: sampler is NULL");
    EMBER_REQUIRE_ARG(stage < sampler->trace.size(), "ember_sampler_trace: no such stage");
    EMBER_REQUIRE_ARG(buf != nullptr || capacity == 0, "ember_sampler_trace: buf is NULL");
    const ember::TraceStage& st = sampler->trace[stage];
    if (name != nullptr) *name = st.sampler.c_str();
    return CopyCandidates(st.survivors, buf, capacity, n);
  });
}

}  // extern "C"
