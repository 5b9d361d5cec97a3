// ember info: architecture (and whether ember runs it), dimensions, vocab,
// chat template, tensor types and sizes. Works on any GGUF with a vocabulary.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>

#include "cli.h"

namespace cli {

int InfoCommand(int argc, char** argv) {
  const std::vector<OptionSpec> specs = {
      kModelOption,
      {"--tensors", "", "", "list every tensor"},
  };
  Args args;
  if (!args.Parse("info", "-m MODEL [--tensors]", specs, argc, argv)) return 0;
  const std::string path = ResolveModelPath(args);
  ModelPtr model(LoadModel(path, /*vocab_only=*/true));  // no weights needed
  ember_model_info i;
  Check(ember_model_get_info(model.get(), &i), "model info");
  size_t needed = 0;
  ember_model_describe_tensors(model.get(), nullptr, 0, &needed);
  std::string tensors(needed, '\0');
  Check(ember_model_describe_tensors(model.get(), tensors.data(), tensors.size(), &needed),
        "tensors");
  tensors.resize(needed - 1);

  const bool runnable = ember_model_check_runnable(model.get()) == EMBER_OK;
  const std::string why = runnable ? "" : ember_last_error();
  std::printf("file:          %s\n", path.c_str());
  std::printf("architecture:  %s (%s)\n", i.architecture,
              runnable ? "ember runs it" : ("ember cannot run it: " + why).c_str());
  std::printf("name:          %s\n", i.name);
  std::printf("parameters:    %.2f M (%.1f MiB of tensor data)\n",
              static_cast<double>(i.n_params) / 1e6,
              static_cast<double>(i.weight_bytes) / (1024.0 * 1024.0));
  std::printf("layers:        %d\n", i.n_layer);
  std::printf("embedding:     %d\n", i.n_embd);
  std::printf("heads:         %d query, %d key/value, head dim %d\n", i.n_head, i.n_head_kv,
              i.head_dim);
  std::printf("feed-forward:  %d\n", i.n_ff);
  std::printf("context:       %d (training)\n", i.n_ctx_train);
  std::printf("rope base:     %g\n", static_cast<double>(i.rope_freq_base));
  std::printf("rms eps:       %g\n", static_cast<double>(i.rms_eps));
  std::printf("output:        %s\n", i.tied_output ? "tied to token_embd" : "separate");
  std::printf("vocab:         %d tokens, bos %d, eos %d, add bos: %s\n", i.n_vocab, i.bos_token,
              i.eos_token, i.add_bos ? "yes" : "no");
  // The chat template's first line (ember template prints renderings).
  size_t tlen = 0;
  if (ember_model_meta_string(model.get(), "tokenizer.chat_template", nullptr, 0, &tlen) ==
      EMBER_ERR_BUFFER_TOO_SMALL) {
    std::string t(tlen, '\0');
    Check(
        ember_model_meta_string(model.get(), "tokenizer.chat_template", t.data(), t.size(), &tlen),
        "chat template");
    t.resize(tlen - 1);
    const size_t lines = static_cast<size_t>(std::count(t.begin(), t.end(), '\n')) + 1;
    std::printf("chat template: %s (%zu lines, %zu bytes)\n", t.substr(0, t.find('\n')).c_str(),
                lines, t.size());
  } else {
    std::printf("chat template: none\n");
  }

  // Tensor types: count and bytes per type.
  std::map<std::string, std::pair<int, double>> by_type;
  std::istringstream lines(tensors);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream ls(line);
    std::string name, type;
    ls >> name >> type;
    const std::string bytes = line.substr(line.rfind(' ') + 1);
    by_type[type].first += 1;
    by_type[type].second += std::stod(bytes);
  }
  std::printf("tensor types: ");
  for (const auto& [type, cb] : by_type) {
    std::printf(" %s x%d (%.1f MiB)", type.c_str(), cb.first, cb.second / (1024.0 * 1024.0));
  }
  std::printf("\n");
  if (args.Has("--tensors")) std::printf("\n%s", tensors.c_str());
  return 0;
}

}  // namespace cli
