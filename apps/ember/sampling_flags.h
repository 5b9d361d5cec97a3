// The sampling flags `ember run` and `ember sample` share, named as llama.cpp
// names them, and their translation to ember's C API.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli.h"

namespace cli {

// --temp --top-k --top-p --min-p --typical --top-nsigma --xtc-probability
// --xtc-threshold --repeat-penalty --repeat-last-n --presence-penalty
// --frequency-penalty --dry-multiplier --dry-base --dry-allowed-length
// --dry-penalty-last-n --mirostat --mirostat-lr --mirostat-ent --logit-bias
// --samplers --seed. `temp_help` differs between the commands.
std::vector<OptionSpec> SamplingOptions(const std::string& temp_help);

// Logit biases from every --logit-bias ID(+|-)VALUE ("15043+1", "2-inf").
struct LogitBiases {
  std::vector<int32_t> ids;
  std::vector<float> values;
};
LogitBiases ParseLogitBiases(const Args& args);

// llama.cpp's meaning: every flag with llama.cpp's default (`ember run`).
// `biases` must outlive the returned struct (it points into it); the caller
// sets `samplers` from --samplers (it owns that string).
ember_sampling_params SamplingParamsFromFlags(const Args& args, const LogitBiases& biases);

// --grammar STR, --grammar-file F, --json-schema FILE|JSON, --json-object:
// output constrained to a grammar (docs/GRAMMAR.md).
std::vector<OptionSpec> GrammarOptions();
// The GBNF those flags ask for ("" when none); at most one of them may be
// given. A schema is converted here, its errors (the keyword named) become
// usage errors.
std::string GrammarFromFlags(const Args& args);
// The sampler chain `ember run` and `ember chat` use: the flags' settings,
// with a grammar stage when `grammar` is not empty. Throws UsageError.
ember_sampler* CreateSampler(ember_model* model, const ember_sampling_params& params,
                             const std::string& grammar);

}  // namespace cli
