// ember eval: the last position's logits of a prompt, as little-endian f32.
#include <cstdio>
#include <string>

#include "cli.h"

namespace cli {

int EvalCommand(int argc, char** argv) {
  std::vector<OptionSpec> specs = {
      kModelOption,
      kPromptOption,
      kFileOption,
      {"--tokens", "", "IDS", "evaluate these comma-separated token ids instead of a prompt"},
      {"--logits-out", "", "FILE", "where to write n_vocab little-endian float32 logits"},
      {"--ctx-size", "-c", "N", "context size in tokens"},
      kThreadsOption,
      kThreadsBatchOption,
      kNumericsOption,
  };
  for (OptionSpec& o : KvOptions(/*with_keep=*/false)) specs.push_back(std::move(o));
  Args args;
  if (!args.Parse("eval", "-m MODEL (-p PROMPT | -f FILE | --tokens IDS) --logits-out FILE", specs,
                  argc, argv)) {
    return 0;
  }
  const bool by_ids = args.Has("--tokens");
  const std::string prompt = by_ids ? std::string() : ReadPrompt(args);
  if (!args.Has("--logits-out")) throw UsageError{"--logits-out FILE is required"};
  const int64_t n_ctx = args.GetInt("--ctx-size", 0, 0, 1 << 24);
  const int32_t n_threads = GetThreads(args, "--threads");
  const int32_t n_threads_batch = GetThreads(args, "--threads-batch");
  ember_session_params sp = ember_session_default_params();
  ApplyKvOptions(args, 0, &sp);  // flag errors before the model loads
  const ember_numerics numerics = GetNumerics(args);
  ModelPtr model(LoadModel(ResolveModelPath(args), false, numerics));
  std::vector<int32_t> ids =
      by_ids ? ParseIds(args.Get("--tokens")) : Tokenize(model.get(), prompt, true, true);
  if (ids.empty()) throw UsageError{"the prompt has no tokens"};
  sp.n_ctx = static_cast<int32_t>(n_ctx);
  sp.n_threads = n_threads;
  sp.n_threads_batch = n_threads_batch;
  ember_session* raw = nullptr;
  Check(ember_session_create(model.get(), &sp, &raw), "session");
  SessionPtr session(raw);
  Check(ember_session_eval(session.get(), ids.data(), ids.size()), "eval");
  ember_model_info info;
  Check(ember_model_get_info(model.get(), &info), "model info");
  const std::string out = args.Get("--logits-out");
  FILE* f = std::fopen(out.c_str(), "wb");
  if (f == nullptr) throw UsageError{"cannot create '" + out + "'"};
  size_t n = std::fwrite(ember_session_logits(session.get()), sizeof(float),
                         static_cast<size_t>(info.n_vocab), f);
  if (std::fclose(f) != 0 || n != static_cast<size_t>(info.n_vocab)) {
    throw UsageError{"cannot write '" + out + "'"};
  }
  std::fprintf(stderr, "ember: wrote %d logits of position %zu to %s\n", info.n_vocab,
               ids.size() - 1, out.c_str());
  return 0;
}

}  // namespace cli
