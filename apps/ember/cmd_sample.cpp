// ember sample: apply a sampler chain to given logits and show the result —
// a teaching and debugging tool. Only the samplers named on the command line
// run (no hidden defaults), in the default order or the --samplers order.
//
//   ember sample --logits "3,2,1,0.5" --top-k 2 --temp 1
//   ember sample --logits "3,2,1,0.5" --temp 0.5 --trace
//   ember sample --logits "5,4" --fill 31998=0 --top-p 0.9 --draw 1000 --seed 7
//   ember sample -m vocab.gguf --logits 0 --fill 151935=0 --grammar 'root ::= "yes" | "no"'
//
// A grammar needs the tokens' text: -m names a model (a vocab-only GGUF is
// enough); the logits then cover its vocabulary, and --history (tokens
// already generated) advances the grammar.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "sampling_flags.h"

namespace cli {
namespace {

std::vector<float> ParseLogits(const std::string& text) {
  std::vector<float> out;
  std::string item;
  auto flush = [&]() {
    if (item.empty()) return;
    char* end = nullptr;
    errno = 0;
    const float v = std::strtof(item.c_str(), &end);
    if (*end != '\0' || errno != 0 || std::isnan(v)) {
      throw UsageError{"--logits: '" + item + "' is not a number"};
    }
    out.push_back(v);
    item.clear();
  };
  for (char c : text) {
    if (c == ',' || c == ' ' || c == '\n' || c == '\t') {
      flush();
    } else {
      item += c;
    }
  }
  flush();
  return out;
}

std::vector<float> ReadLogitsFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw UsageError{"--logits-file: cannot read '" + path + "'"};
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() % 4 != 0) {
    throw UsageError{"--logits-file: '" + path + "' is not a whole number of f32 values (" +
                     std::to_string(bytes.size()) + " bytes)"};
  }
  std::vector<float> out(bytes.size() / 4);
  std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(out.data()));
  return out;
}

// --fill COUNT=VALUE: COUNT more tokens with logit VALUE.
void Fill(const std::string& spec, std::vector<float>* logits) {
  const size_t eq = spec.find('=');
  char* end = nullptr;
  const std::string count_text = spec.substr(0, eq);
  const long long count = std::strtoll(count_text.c_str(), &end, 10);
  bool ok = eq != std::string::npos && !count_text.empty() && *end == '\0' && count > 0 &&
            count <= (1 << 24);
  float value = 0;
  if (ok) {
    const std::string v = spec.substr(eq + 1);
    value = std::strtof(v.c_str(), &end);
    ok = !v.empty() && *end == '\0' && !std::isnan(value);
  }
  if (!ok) throw UsageError{"--fill expects COUNT=VALUE (e.g. 31995=0), got '" + spec + "'"};
  logits->insert(logits->end(), static_cast<size_t>(count), value);
}

std::string Num(double v) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.4f", v);
  return b;
}

// `"ids":[...],"logits":[...],"probs":[...]` for at most `show` candidates, plus the count
// (and the tokens' text when there is a model).
std::string CandidatesJson(const std::vector<ember_candidate>& c, size_t show,
                           ember_model* model = nullptr) {
  std::string ids, logits, probs, pieces;
  for (size_t i = 0; i < c.size() && i < show; ++i) {
    if (model != nullptr) {
      char buf[256];
      size_t n = 0;
      if (ember_token_to_piece(model, c[i].id, true, buf, sizeof(buf), &n) != EMBER_OK) n = 0;
      pieces += (i ? ",\"" : "\"") + JsonEscape(std::string(buf, n)) + "\"";
    }
    ids += (i ? "," : "") + std::to_string(c[i].id);
    logits += (i ? "," : "") + (std::isinf(c[i].logit)
                                    ? std::string(c[i].logit > 0 ? "\"inf\"" : "\"-inf\"")
                                    : Num(c[i].logit));
    probs += (i ? "," : "") + Num(c[i].p);
  }
  return "\"n\":" + std::to_string(c.size()) + ",\"ids\":[" + ids + "]" +
         (model != nullptr ? ",\"pieces\":[" + pieces + "]" : std::string()) + ",\"logits\":[" +
         logits + "],\"probs\":[" + probs + "]";
}

std::vector<ember_candidate> Candidates(ember_sampler* s) {
  size_t n = 0;
  ember_sampler_candidates(s, nullptr, 0, &n);  // the size needed
  std::vector<ember_candidate> c(n);
  Check(ember_sampler_candidates(s, c.data(), c.size(), &n), "sample");
  return c;
}

// The samplers the command line names, each with only its own flags.
struct Named {
  std::string flag;  // the flag that names it
  ember_sampler_type type;
  std::string name;  // as in --samplers lists
};
const std::vector<Named>& NamedSamplers() {
  // The default order (docs/SAMPLING.md).
  static const std::vector<Named> k = {
      {"--logit-bias", EMBER_SAMPLER_LOGIT_BIAS, "logit-bias"},
      {"--repeat-penalty|--presence-penalty|--frequency-penalty", EMBER_SAMPLER_PENALTIES,
       "penalties"},
      {"--dry-multiplier", EMBER_SAMPLER_DRY, "dry"},
      {"--temp", EMBER_SAMPLER_TEMPERATURE, "temperature"},
      {"--top-k", EMBER_SAMPLER_TOP_K, "top-k"},
      {"--top-p", EMBER_SAMPLER_TOP_P, "top-p"},
      {"--min-p", EMBER_SAMPLER_MIN_P, "min-p"},
      {"--typical", EMBER_SAMPLER_TYPICAL_P, "typical"},
      {"--top-nsigma", EMBER_SAMPLER_TOP_N_SIGMA, "top-n-sigma"},
      {"--xtc-probability", EMBER_SAMPLER_XTC, "xtc"},
  };
  return k;
}

bool Named_(const Args& args, const Named& n) {
  size_t at = 0;
  while (at <= n.flag.size()) {
    const size_t end = std::min(n.flag.find('|', at), n.flag.size());
    if (args.Has(n.flag.substr(at, end - at))) return true;
    at = end + 1;
  }
  return false;
}

// "top_k" -> "top-k"; llama.cpp's aliases to our names.
std::string Canonical(std::string s) {
  std::replace(s.begin(), s.end(), '_', '-');
  if (s == "temp") return "temperature";
  if (s == "typ-p" || s == "typical-p") return "typical";
  if (s == "top-nsigma") return "top-n-sigma";
  return s;
}

}  // namespace

int SampleCommand(int argc, char** argv) {
  std::vector<OptionSpec> specs = {
      {"--logits", "", "LIST", "logits, comma-separated: token i gets the i-th value"},
      {"--logits-file", "", "FILE", "logits as little-endian f32 (e.g. from 'ember eval')"},
      {"--fill", "", "COUNT=VALUE", "append COUNT tokens with logit VALUE (repeatable)"},
      {"--history", "", "IDS", "tokens already generated (for the penalties and DRY)"},
      {"--trace", "", "", "show the survivors after every sampler"},
      {"--draw", "", "N", "draw N tokens (same seed, same sequence) and count them"},
      {"--show", "", "N", "print at most N candidates per distribution (default 40)"},
      {"--model", "-m", "MODEL", "the vocabulary a grammar needs (only its tokens are read)"},
  };
  for (OptionSpec& o : GrammarOptions()) specs.push_back(std::move(o));
  for (OptionSpec& o : SamplingOptions("temperature (0 keeps only the top token)")) {
    specs.push_back(std::move(o));
  }
  Args args;
  if (!args.Parse("sample",
                  "(--logits LIST | --logits-file FILE) [--fill COUNT=VALUE] [samplers]"
                  " [--trace] [--draw N --seed S]",
                  specs, argc, argv)) {
    return 0;
  }
  std::vector<float> logits;
  if (args.Has("--logits") == args.Has("--logits-file")) {
    throw UsageError{"give exactly one of --logits and --logits-file"};
  }
  logits = args.Has("--logits") ? ParseLogits(args.Get("--logits"))
                                : ReadLogitsFile(args.Get("--logits-file"));
  for (const std::string& f : args.GetAll("--fill")) Fill(f, &logits);
  if (logits.empty()) throw UsageError{"--logits: no logits given"};
  const std::string grammar = GrammarFromFlags(args);
  if (!grammar.empty() && !args.Has("--model")) {
    throw UsageError{
        "a grammar needs the tokens' text: give -m MODEL (a vocab-only GGUF is enough)"};
  }
  ModelPtr model;
  if (args.Has("--model")) {
    model.reset(LoadModel(args.Get("--model"), /*vocab_only=*/true));
    ember_model_info info;
    Check(ember_model_get_info(model.get(), &info), "model");
    if (static_cast<size_t>(info.n_vocab) != logits.size()) {
      throw UsageError{"the model has " + std::to_string(info.n_vocab) + " tokens but " +
                       std::to_string(logits.size()) +
                       " logits are given (--fill COUNT=VALUE adds a tail)"};
    }
  }
  const int64_t draws = args.GetInt("--draw", 0, 0, 100000000);
  const size_t show = static_cast<size_t>(args.GetInt("--show", 40, 1, 1 << 24));
  const uint64_t seed = args.GetUint64("--seed", 0);
  const LogitBiases biases = ParseLogitBiases(args);
  // Every flag through the shared parser (it checks "is a number"); each
  // sampler then takes only its own fields.
  const ember_sampling_params p = SamplingParamsFromFlags(args, biases);

  // Which samplers, in which order.
  std::vector<const Named*> chain;
  if (args.Has("--samplers")) {
    std::string list = args.Get("--samplers");
    std::replace(list.begin(), list.end(), ',', ';');
    size_t at = 0;
    while (at <= list.size()) {
      const size_t end = std::min(list.find(';', at), list.size());
      const std::string name = Canonical(list.substr(at, end - at));
      at = end + 1;
      if (name.empty()) continue;
      const Named* found = nullptr;
      for (const Named& n : NamedSamplers()) {
        if (n.name == name) found = &n;
      }
      if (found == nullptr) throw UsageError{"--samplers: unknown sampler '" + name + "'"};
      if (!Named_(args, *found)) {
        throw UsageError{"--samplers names '" + name + "' but its flag (" + found->flag +
                         ") is not given: ember sample applies no hidden defaults"};
      }
      chain.push_back(found);
    }
  }
  for (const Named& n : NamedSamplers()) {
    if (!Named_(args, n)) continue;
    if (std::find(chain.begin(), chain.end(), &n) != chain.end()) continue;
    if (args.Has("--samplers")) {
      throw UsageError{"--samplers does not name '" + n.name + "', which " + n.flag + " asks for"};
    }
    chain.push_back(&n);
  }
  std::vector<ember_sampler_spec> sv;
  for (const Named* n : chain) {
    ember_sampler_spec s = ember_sampler_spec_default(n->type);
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
    s.logit_bias_ids = p.logit_bias_ids;
    s.logit_bias_values = p.logit_bias_values;
    s.n_logit_bias = p.n_logit_bias;
    sv.push_back(s);
  }
  ember_sampler_spec terminal =
      ember_sampler_spec_default(p.mirostat == 2 ? EMBER_SAMPLER_MIROSTAT_V2 : EMBER_SAMPLER_DIST);
  if (p.mirostat == 1) throw UsageError{"--mirostat 1 (mirostat v1) is not implemented; use 2"};
  terminal.mirostat_tau = p.mirostat_tau;
  terminal.mirostat_eta = p.mirostat_eta;
  sv.push_back(terminal);

  ember_sampler* raw = nullptr;
  if (grammar.empty()) {
    Check(ember_sampler_create(model.get(), static_cast<int32_t>(logits.size()), sv.data(),
                               sv.size(), seed, &raw),
          "sampler chain");
  } else {  // the grammar stage first (it is the only stage before the draw that drops tokens)
    Check(ember_sampler_create_grammar(model.get(), sv.data(), sv.size(), grammar.c_str(), nullptr,
                                       seed, &raw),
          "sampler chain");
  }
  SamplerPtr sampler(raw);
  for (int32_t id :
       args.Has("--history") ? ParseIds(args.Get("--history")) : std::vector<int32_t>{}) {
    Check(ember_sampler_accept(sampler.get(), id), "--history");
  }

  const int32_t n_vocab = static_cast<int32_t>(logits.size());
  const bool trace = args.Has("--trace");
  int32_t token = -1;
  Check(ember_sampler_sample(sampler.get(), logits.data(), n_vocab, trace, &token), "sample");
  if (token < 0) {
    throw UsageError{"the grammar allows no token here (after the --history tokens)"};
  }
  std::string out = "{\n  \"n_vocab\": " + std::to_string(n_vocab) + ",\n  \"chain\": [";
  bool grammar_listed = grammar.empty();
  for (size_t i = 0; i < chain.size(); ++i) {
    const bool shapes =
        chain[i]->name == "logit-bias" || chain[i]->name == "penalties" || chain[i]->name == "dry";
    if (!grammar_listed && !shapes) {
      out += "\"grammar\", ";
      grammar_listed = true;
    }
    out += "\"" + chain[i]->name + "\", ";
  }
  if (!grammar_listed) out += "\"grammar\", ";
  out += std::string("\"") + (p.mirostat == 2 ? "mirostat-v2" : "dist") + "\"],\n";
  if (trace) {
    out += "  \"trace\": [\n";
    const size_t n_stages = ember_sampler_trace_stages(sampler.get());
    for (size_t i = 0; i < n_stages; ++i) {
      const char* name = nullptr;
      size_t n = 0;
      ember_sampler_trace(sampler.get(), i, &name, nullptr, 0, &n);
      std::vector<ember_candidate> c(n);
      Check(ember_sampler_trace(sampler.get(), i, &name, c.data(), c.size(), &n), "trace");
      out += "    {\"sampler\": \"" + JsonEscape(name) + "\", " +
             CandidatesJson(c, show, model.get()) + "}" + (i + 1 < n_stages ? ",\n" : "\n");
    }
    out += "  ],\n";
  }
  out += "  \"final\": {" + CandidatesJson(Candidates(sampler.get()), show, model.get()) + "}";
  if (draws > 0) {
    // A fresh chain state for the draws: the same seed gives the same sequence.
    ember_sampler_reset(sampler.get());
    std::map<int32_t, int64_t> counts;
    std::string first;
    for (int64_t i = 0; i < draws; ++i) {
      Check(ember_sampler_sample(sampler.get(), logits.data(), n_vocab, false, &token), "draw");
      ++counts[token];
      if (i < 20) first += (i ? "," : "") + std::to_string(token);
    }
    std::vector<std::pair<int32_t, int64_t>> sorted(counts.begin(), counts.end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string ids, cs, fr;
    for (size_t i = 0; i < sorted.size() && i < show; ++i) {
      ids += (i ? "," : "") + std::to_string(sorted[i].first);
      cs += (i ? "," : "") + std::to_string(sorted[i].second);
      fr += (i ? "," : "") + Num(static_cast<double>(sorted[i].second) / draws);
    }
    out += ",\n  \"draws\": {\"n\": " + std::to_string(draws) +
           ", \"seed\": " + std::to_string(seed) + ", \"first\": [" + first + "], \"ids\": [" +
           ids + "], \"counts\": [" + cs + "], \"freqs\": [" + fr + "]}";
  } else {
    out += ",\n  \"token\": " + std::to_string(token);
  }
  out += "\n}\n";
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace cli
