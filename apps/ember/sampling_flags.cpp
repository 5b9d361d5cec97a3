#include "sampling_flags.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace cli {

std::vector<OptionSpec> SamplingOptions(const std::string& temp_help) {
  return {
      {"--temp", "", "T", temp_help},
      {"--top-k", "", "K", "keep the K most likely tokens (0: off)"},
      {"--top-p", "", "P", "keep the smallest set reaching probability P (1: off)"},
      {"--min-p", "", "P", "drop tokens below P x the top probability (0: off)"},
      {"--typical", "", "P", "locally typical sampling (1: off)"},
      {"--top-nsigma", "", "N", "keep logits within N standard deviations of the top (<=0: off)"},
      {"--xtc-probability", "", "P", "XTC: chance of excluding top choices (0: off)"},
      {"--xtc-threshold", "", "P", "XTC: probability threshold of a top choice"},
      {"--repeat-penalty", "", "X", "CTRL repetition penalty over the last N tokens (1: off)"},
      {"--repeat-last-n", "", "N", "tokens of history the penalties look at (-1: all, 0: off)"},
      {"--presence-penalty", "", "X", "subtract X from every token seen (0: off)"},
      {"--frequency-penalty", "", "X", "subtract X per occurrence (0: off)"},
      {"--dry-multiplier", "", "X", "DRY repetition penalty strength (0: off)"},
      {"--dry-base", "", "X", "DRY penalty base"},
      {"--dry-allowed-length", "", "N", "DRY: repeats up to N tokens are free"},
      {"--dry-penalty-last-n", "", "N", "DRY: tokens of history (-1: all)"},
      {"--mirostat", "", "N", "2: mirostat 2.0 replaces the truncating samplers (0: off)"},
      {"--mirostat-lr", "", "ETA", "mirostat learning rate"},
      {"--mirostat-ent", "", "TAU", "mirostat target entropy (surprise)"},
      {"--logit-bias", "", "ID(+|-)X", "add X to token ID's logit; -inf bans it (repeatable)"},
      {"--samplers", "", "LIST", "sampler order, e.g. 'penalties;top_k;top_p;min_p;temperature'"},
      {"--seed", "", "S", "random seed (default 0)"},
  };
}

LogitBiases ParseLogitBiases(const Args& args) {
  LogitBiases out;
  for (const std::string& s : args.GetAll("--logit-bias")) {
    const size_t sign = s.find_first_of("+-", 1);
    bool ok = sign != std::string::npos && sign > 0;
    long long id = 0;
    float value = 0;
    if (ok) {
      const std::string id_text = s.substr(0, sign);
      char* end = nullptr;
      errno = 0;
      id = std::strtoll(id_text.c_str(), &end, 10);
      ok = *end == '\0' && errno == 0 && id >= 0 && id <= std::numeric_limits<int32_t>::max() &&
           id_text.find_first_not_of("0123456789") == std::string::npos;
      const std::string v = s.substr(sign + 1);
      if (ok && (v == "inf" || v == "INF")) {
        value = std::numeric_limits<float>::infinity();
      } else if (ok) {
        errno = 0;
        value = std::strtof(v.c_str(), &end);
        ok = !v.empty() && *end == '\0' && errno == 0 && std::isfinite(value);
      }
      if (s[sign] == '-') value = -value;
    }
    if (!ok) {
      throw UsageError{"--logit-bias expects ID+VALUE or ID-VALUE (e.g. 15043+1, 2-inf), got '" +
                       s + "'"};
    }
    out.ids.push_back(static_cast<int32_t>(id));
    out.values.push_back(value);
  }
  return out;
}

ember_sampling_params SamplingParamsFromFlags(const Args& args, const LogitBiases& biases) {
  ember_sampling_params p = ember_sampling_default_params();
  constexpr double kBig = 1e9;
  // Ranges are checked by ember (errors name the parameter); here only "is a number".
  p.temperature = static_cast<float>(args.GetDouble("--temp", p.temperature, -kBig, kBig));
  p.top_k = static_cast<int32_t>(args.GetInt("--top-k", p.top_k, -(1 << 30), 1 << 30));
  p.top_p = static_cast<float>(args.GetDouble("--top-p", p.top_p, -kBig, kBig));
  p.min_p = static_cast<float>(args.GetDouble("--min-p", p.min_p, -kBig, kBig));
  p.typical_p = static_cast<float>(args.GetDouble("--typical", p.typical_p, -kBig, kBig));
  p.top_n_sigma = static_cast<float>(args.GetDouble("--top-nsigma", p.top_n_sigma, -kBig, kBig));
  p.xtc_probability =
      static_cast<float>(args.GetDouble("--xtc-probability", p.xtc_probability, -kBig, kBig));
  p.xtc_threshold =
      static_cast<float>(args.GetDouble("--xtc-threshold", p.xtc_threshold, -kBig, kBig));
  p.repeat_penalty =
      static_cast<float>(args.GetDouble("--repeat-penalty", p.repeat_penalty, -kBig, kBig));
  p.penalty_last_n =
      static_cast<int32_t>(args.GetInt("--repeat-last-n", p.penalty_last_n, -1, 1 << 30));
  p.presence_penalty =
      static_cast<float>(args.GetDouble("--presence-penalty", p.presence_penalty, -kBig, kBig));
  p.frequency_penalty =
      static_cast<float>(args.GetDouble("--frequency-penalty", p.frequency_penalty, -kBig, kBig));
  p.dry_multiplier =
      static_cast<float>(args.GetDouble("--dry-multiplier", p.dry_multiplier, -kBig, kBig));
  p.dry_base = static_cast<float>(args.GetDouble("--dry-base", p.dry_base, -kBig, kBig));
  p.dry_allowed_length = static_cast<int32_t>(
      args.GetInt("--dry-allowed-length", p.dry_allowed_length, -(1 << 30), 1 << 30));
  p.dry_penalty_last_n =
      static_cast<int32_t>(args.GetInt("--dry-penalty-last-n", p.dry_penalty_last_n, -1, 1 << 30));
  p.mirostat = static_cast<int32_t>(args.GetInt("--mirostat", p.mirostat, 0, 2));
  p.mirostat_eta = static_cast<float>(args.GetDouble("--mirostat-lr", p.mirostat_eta, -kBig, kBig));
  p.mirostat_tau =
      static_cast<float>(args.GetDouble("--mirostat-ent", p.mirostat_tau, -kBig, kBig));
  p.logit_bias_ids = biases.ids.data();
  p.logit_bias_values = biases.values.data();
  p.n_logit_bias = biases.ids.size();
  p.seed = args.GetUint64("--seed", 0);
  return p;
}

std::vector<OptionSpec> GrammarOptions() {
  return {
      {"--grammar", "", "GBNF", "constrain the output to a grammar (llama.cpp's GBNF)"},
      {"--grammar-file", "", "FILE", "the same, the grammar read from FILE"},
      {"--json-schema", "", "FILE|JSON",
       "constrain the output to JSON valid under a JSON schema (a file, or the schema itself)"},
      {"--json-object", "", "", "constrain the output to a JSON object"},
  };
}

std::string GrammarFromFlags(const Args& args) {
  int given = 0;
  for (const char* f : {"--grammar", "--grammar-file", "--json-schema", "--json-object"}) {
    given += args.Has(f);
  }
  if (given > 1) {
    throw UsageError{"give at most one of --grammar, --grammar-file, --json-schema, --json-object"};
  }
  std::string schema;
  if (args.Has("--grammar")) {
    if (args.Get("--grammar").empty()) throw UsageError{"--grammar needs a grammar"};
    return args.Get("--grammar");
  }
  if (args.Has("--grammar-file")) return ReadTextFile(args.Get("--grammar-file"));
  if (args.Has("--json-object")) {
    schema = "{\"type\": \"object\"}";
  } else if (args.Has("--json-schema")) {
    schema = args.Get("--json-schema");
    // Inline JSON starts with { (or is true); anything else is a file name.
    const size_t first = schema.find_first_not_of(" \t\n\r");
    if (first == std::string::npos || (schema[first] != '{' && schema.substr(first) != "true")) {
      schema = ReadTextFile(schema);
    }
  } else {
    return "";
  }
  size_t n = 0;
  ember_status s = ember_json_schema_to_grammar(schema.c_str(), nullptr, 0, &n);
  if (s != EMBER_OK && s != EMBER_ERR_BUFFER_TOO_SMALL) {
    throw UsageError{std::string(args.Has("--json-object") ? "--json-object" : "--json-schema") +
                     ": " + ember_last_error()};
  }
  std::string gbnf(n, '\0');
  Check(ember_json_schema_to_grammar(schema.c_str(), gbnf.data(), gbnf.size(), &n),
        "--json-schema");
  gbnf.resize(n - 1);
  return gbnf;
}

ember_sampler* CreateSampler(ember_model* model, const ember_sampling_params& params,
                             const std::string& grammar) {
  ember_sampler* out = nullptr;
  if (grammar.empty()) {
    Check(ember_sampler_from_params(model, 0, &params, &out), "sampling");
  } else {
    Check(ember_sampler_from_params_grammar(model, &params, grammar.c_str(), nullptr, &out),
          "sampling");
  }
  return out;
}

}  // namespace cli
