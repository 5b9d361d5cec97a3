// ember embed: the embedding of each line of a text (llama-embedding's
// default separator), one vector per line of output, or OpenAI's JSON shape
// with --json. docs/EMBEDDINGS.md.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.h"

namespace cli {
namespace {

// The inputs: the text cut at each separator, empty pieces left out.
std::vector<std::string> Split(const std::string& text, const std::string& sep) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t end = sep.empty() ? std::string::npos : text.find(sep, at);
    const std::string piece = text.substr(at, end == std::string::npos ? end : end - at);
    if (!piece.empty()) out.push_back(piece);
    if (end == std::string::npos) break;
    at = end + sep.size();
  }
  return out;
}

}  // namespace

int EmbedCommand(int argc, char** argv) {
  std::vector<OptionSpec> specs = {
      kModelOption,
      kPromptOption,
      kFileOption,
      kPoolingOption,
      {"--no-normalize", "", "", "keep the vectors' length (default: unit length, as OpenAI's)"},
      {"--separator", "", "S",
       "cut the text into inputs at S (default: a newline; '' keeps it whole)"},
      {"--json", "", "", "print OpenAI's embeddings response ({\"data\": [{\"embedding\": ...}]})"},
      {"--ctx-size", "-c", "N", "context size (default: the longest input)"},
      kThreadsOption,
      kThreadsBatchOption,
      kRepackOption,
  };
  for (OptionSpec& o : MmapOptions()) specs.push_back(std::move(o));
  Args args;
  if (!args.Parse("embed",
                  "-m MODEL (-p TEXT | -f FILE) [--pooling model|mean|first|last|none] [--json]",
                  specs, argc, argv)) {
    return 0;
  }
  const std::string text = ReadPrompt(args);
  const ember_pooling pooling = GetPooling(args);
  const bool normalize = !args.Has("--no-normalize");
  const bool json = args.Has("--json");
  const std::vector<std::string> inputs = Split(text, args.Get("--separator", "\n"));
  if (inputs.empty()) throw UsageError{"the text has no input to embed"};
  const int64_t n_ctx_arg = args.GetInt("--ctx-size", 0, 1, 1 << 24);
  const int32_t n_threads = GetThreads(args, "--threads");
  const int32_t n_threads_batch = GetThreads(args, "--threads-batch");
  const std::string path = ResolveModelPath(args);
  ModelPtr model(
      LoadModel(path, false, EMBER_NUMERICS_EMBER, GetFloatWeights(args), GetMmapMode(args)));
  ember_model_info info;
  Check(ember_model_get_info(model.get(), &info), "model info");
  std::vector<std::vector<int32_t>> ids;
  size_t longest = 0, total = 0;
  for (const std::string& in : inputs) {
    ids.push_back(Tokenize(model.get(), in, true, true));
    longest = std::max(longest, ids.back().size());
    total += ids.back().size();
  }
  // Room for the longest input, and for packing short ones into passes of
  // up to a batch (256 tokens).
  ember_session_params sp = ember_session_default_params();
  sp.n_ctx = static_cast<int32_t>(
      n_ctx_arg > 0 ? n_ctx_arg
                    : static_cast<int64_t>(std::max(longest, std::min<size_t>(total, 256))));
  sp.n_keep = 0;  // nothing shifts: an input must fit whole
  sp.n_threads = n_threads;
  sp.n_threads_batch = n_threads_batch;
  ember_session* raw = nullptr;
  Check(CreateSession(model.get(), sp, args, &raw), "session");
  SessionPtr session(raw);

  // One vector per input: all inputs in one call (short ones share forward
  // passes); a vector per token: one input at a time.
  const size_t E = static_cast<size_t>(info.n_embd);
  std::vector<std::vector<float>> vectors;
  if (pooling != EMBER_POOLING_NONE) {
    std::vector<const int32_t*> ptrs;
    std::vector<size_t> sizes;
    for (const auto& v : ids) {
      ptrs.push_back(v.data());
      sizes.push_back(v.size());
    }
    std::vector<float> flat(ids.size() * E);
    Check(ember_session_embed_batch(session.get(), ptrs.data(), sizes.data(), ids.size(), pooling,
                                    normalize, flat.data(), flat.size()),
          "embed");
    for (size_t i = 0; i < ids.size(); ++i) {
      vectors.emplace_back(flat.begin() + i * E, flat.begin() + (i + 1) * E);
    }
  } else {
    for (const auto& in : ids) {
      std::vector<float> v(in.size() * E);
      Check(ember_session_embed(session.get(), in.data(), in.size(), pooling, normalize, v.data(),
                                v.size()),
            "embed");
      vectors.push_back(std::move(v));
    }
  }
  size_t n_tokens = 0;
  if (json) std::printf("{\"object\": \"list\", \"data\": [");
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::vector<float>& v = vectors[i];
    n_tokens += ids[i].size();
    if (json) {
      std::printf("%s{\"object\": \"embedding\", \"index\": %zu, \"embedding\": [", i ? ", " : "",
                  i);
      for (size_t j = 0; j < v.size(); ++j) std::printf("%s%.8g", j ? ", " : "", v[j]);
      std::printf("]}");
    } else {
      for (size_t r = 0; r < v.size(); r += static_cast<size_t>(info.n_embd)) {
        for (int32_t j = 0; j < info.n_embd; ++j) std::printf("%s%.8g", j ? " " : "", v[r + j]);
        std::printf("\n");
      }
    }
  }
  if (json) {
    std::printf(
        "], \"model\": \"%s\", \"usage\": {\"prompt_tokens\": %zu, \"total_tokens\": %zu}}\n",
        JsonEscape(path).c_str(), n_tokens, n_tokens);
  }
  return 0;
}

}  // namespace cli
