// ember eval: the logits of a prompt, as little-endian f32: those of the last
// position, or with --all-logits those of every position (position-major,
// n_tokens * n_vocab floats, the layout of bench/peer/peer_tool's `logits --all`).
#include <cstdio>
#include <string>

#include "cli.h"

namespace cli {
namespace {

// Closes the file on every path; Close() reports a failed flush.
struct OutFile {
  explicit OutFile(const std::string& path) : path(path), f(std::fopen(path.c_str(), "wb")) {
    if (f == nullptr) throw UsageError{"cannot create '" + path + "'"};
  }
  ~OutFile() {
    if (f != nullptr) std::fclose(f);
  }
  void Write(const float* v, size_t n) {
    if (std::fwrite(v, sizeof(float), n, f) != n) throw UsageError{"cannot write '" + path + "'"};
  }
  void Close() {
    FILE* g = f;
    f = nullptr;
    if (std::fclose(g) != 0) throw UsageError{"cannot write '" + path + "'"};
  }
  std::string path;
  FILE* f;
};

}  // namespace

int EvalCommand(int argc, char** argv) {
  std::vector<OptionSpec> specs = {
      kModelOption,
      kPromptOption,
      kFileOption,
      {"--tokens", "", "IDS", "evaluate these comma-separated token ids instead of a prompt"},
      {"--logits-out", "", "FILE", "where to write n_vocab little-endian float32 logits"},
      {"--all-logits", "", "",
       "write the logits of every position (n_tokens * n_vocab floats, position-major) instead "
       "of the last one's; the tokens are evaluated one at a time"},
      {"--ctx-size", "-c", "N", "context size in tokens"},
      kThreadsOption,
      kThreadsBatchOption,
      kNumericsOption,
      kRepackOption,
  };
  for (OptionSpec& o : MmapOptions()) specs.push_back(std::move(o));
  for (OptionSpec& o : KvOptions(/*with_keep=*/false)) specs.push_back(std::move(o));
  Args args;
  if (!args.Parse("eval",
                  "-m MODEL (-p PROMPT | -f FILE | --tokens IDS) --logits-out FILE [--all-logits]",
                  specs, argc, argv)) {
    return 0;
  }
  const bool by_ids = args.Has("--tokens");
  const std::string prompt = by_ids ? std::string() : ReadPrompt(args);
  if (!args.Has("--logits-out")) throw UsageError{"--logits-out FILE is required"};
  const bool all = args.Has("--all-logits");
  const int64_t n_ctx = args.GetInt("--ctx-size", 0, 0, 1 << 24);
  const int32_t n_threads = GetThreads(args, "--threads");
  const int32_t n_threads_batch = GetThreads(args, "--threads-batch");
  ember_session_params sp = ember_session_default_params();
  ApplyKvOptions(args, 0, &sp);  // flag errors before the model loads
  // Every row must see all the tokens before it: a context shift would drop some.
  if (all) sp.context_shift = false;
  const ember_numerics numerics = GetNumerics(args);
  ModelPtr model(
      LoadModel(ResolveModelPath(args), false, numerics, GetFloatWeights(args), GetMmapMode(args)));
  std::vector<int32_t> ids =
      by_ids ? ParseIds(args.Get("--tokens")) : Tokenize(model.get(), prompt, true, true);
  if (ids.empty()) throw UsageError{"the prompt has no tokens"};
  sp.n_ctx = static_cast<int32_t>(n_ctx);
  sp.n_threads = n_threads;
  sp.n_threads_batch = n_threads_batch;
  ember_session* raw = nullptr;
  Check(CreateSession(model.get(), sp, args, &raw), "session");
  SessionPtr session(raw);
  ember_model_info info;
  Check(ember_model_get_info(model.get(), &info), "model info");
  const size_t n_vocab = static_cast<size_t>(info.n_vocab);
  OutFile out(args.Get("--logits-out"));
  if (all) {
    // The C API gives the logits of the last position of an eval only, so one
    // token per eval. With ember's numerics the logits do not depend on how
    // the tokens are cut into evals (the last row has the bits of one eval of
    // them all); with --numerics ggml they are llama.cpp's for one token per
    // decode call.
    for (size_t i = 0; i < ids.size(); ++i) {
      Check(ember_session_eval(session.get(), &ids[i], 1), "eval");
      out.Write(ember_session_logits(session.get()), n_vocab);
    }
  } else {
    Check(ember_session_eval(session.get(), ids.data(), ids.size()), "eval");
    out.Write(ember_session_logits(session.get()), n_vocab);
  }
  out.Close();
  if (all) {
    std::fprintf(stderr, "ember: wrote %d logits of each of %zu positions to %s\n", info.n_vocab,
                 ids.size(), out.path.c_str());
  } else {
    std::fprintf(stderr, "ember: wrote %d logits of position %zu to %s\n", info.n_vocab,
                 ids.size() - 1, out.path.c_str());
  }
  return 0;
}

}  // namespace cli
