// ember run: stream generated text to stdout; logs and timings to stderr.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.h"

namespace cli {
namespace {

struct RunState {
  bool stream = true;
  std::vector<int32_t> tokens;
};

bool OnPiece(const char* piece, size_t len, int32_t /*token*/, void* user_data) {
  auto* st = static_cast<RunState*>(user_data);
  if (st->stream) {
    std::fwrite(piece, 1, len, stdout);
    std::fflush(stdout);
  }
  return true;
}

bool OnToken(int32_t token, void* user_data) {
  static_cast<RunState*>(user_data)->tokens.push_back(token);
  return true;
}

}  // namespace

int RunCommand(int argc, char** argv) {
  const std::vector<OptionSpec> specs = {
      kModelOption,
      kPromptOption,
      kFileOption,
      {"--n-predict", "-n", "N", "tokens to generate (default 128)"},
      {"--ctx-size", "-c", "N", "context size in tokens (default: training context, at most 4096)"},
      {"--threads", "-t", "N", "threads (default: all cores)"},
      {"--temp", "", "T", "temperature; 0 is greedy (default 0.8)"},
      {"--seed", "", "S", "random seed for sampling (default 0)"},
      {"--ignore-eos", "", "", "keep generating after end-of-generation tokens"},
      {"--json", "", "", "print one JSON object at the end instead of streaming"},
  };
  Args args;
  if (!args.Parse("run", "[-m MODEL] (-p PROMPT | -f FILE) [options]", specs, argc, argv)) {
    return 0;
  }
  const std::string prompt = ReadPrompt(args);
  const int64_t n_predict = args.GetInt("--n-predict", 128, 0, 1 << 24);
  const int64_t n_ctx = args.GetInt("--ctx-size", 0, 0, 1 << 24);
  const int64_t n_threads = args.GetInt("--threads", 0, 0, 1024);
  const double temp = args.GetDouble("--temp", 0.8, 0.0, 1e6);
  const uint64_t seed = args.GetUint64("--seed", 0);
  const bool json = args.Has("--json");

  const std::string path = ResolveModelPath(args);
  auto t0 = std::chrono::steady_clock::now();
  ModelPtr model(LoadModel(path));
  ember_model_info info;
  Check(ember_model_get_info(model.get(), &info), "model info");
  std::fprintf(stderr, "ember: loaded %s (%s, %d layers, %.1f M params) in %.2f s\n",
               path.c_str(), info.architecture, info.n_layer,
               static_cast<double>(info.n_params) / 1e6,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

  // Special-token text in the prompt (e.g. a chat template) is parsed as
  // special tokens, as llama.cpp's tools do; BOS is added when the model says so.
  std::vector<int32_t> ids = Tokenize(model.get(), prompt, true, true);
  if (ids.empty()) throw UsageError{"the prompt has no tokens"};

  ember_session_params sp = ember_session_default_params();
  sp.n_ctx = static_cast<int32_t>(n_ctx);
  sp.n_threads = static_cast<int32_t>(n_threads);
  ember_session* raw = nullptr;
  Check(ember_session_create(model.get(), &sp, &raw), "session");
  SessionPtr session(raw);

  ember_generate_params gp = ember_generate_default_params();
  gp.n_predict = static_cast<int32_t>(n_predict);
  gp.temperature = static_cast<float>(temp);
  gp.seed = seed;
  gp.ignore_eos = args.Has("--ignore-eos");
  gp.on_token = OnToken;
  RunState st;
  st.stream = !json;
  ember_generate_stats stats{};
  std::string text;
  auto collect = [](const char* piece, size_t len, int32_t token, void* ud) {
    auto* pair = static_cast<std::pair<RunState*, std::string*>*>(ud);
    pair->second->append(piece, len);
    return OnPiece(piece, len, token, pair->first);
  };
  // One user_data for both callbacks: on_token gets the RunState through the pair.
  gp.on_token = [](int32_t token, void* ud) {
    return OnToken(token, static_cast<std::pair<RunState*, std::string*>*>(ud)->first);
  };
  std::pair<RunState*, std::string*> ud{&st, &text};
  Check(ember_generate(session.get(), ids.data(), ids.size(), &gp, collect, &ud, &stats),
        "generate");

  if (json) {
    std::string out = "{\"text\":\"" + JsonEscape(text) + "\",\"tokens\":[";
    for (size_t i = 0; i < st.tokens.size(); ++i) {
      out += (i ? "," : "") + std::to_string(st.tokens[i]);
    }
    char tail[256];
    std::snprintf(tail, sizeof(tail),
                  "],\"n_prompt\":%d,\"n_gen\":%d,\"finish_reason\":\"%s\","
                  "\"prefill_tok_s\":%.2f,\"decode_tok_s\":%.2f}\n",
                  stats.n_prompt, stats.n_gen, ember_finish_reason_str(stats.finish_reason),
                  stats.prefill_tokens_per_second, stats.decode_tokens_per_second);
    out += tail;
    std::fputs(out.c_str(), stdout);
  } else {
    std::fputs("\n", stdout);
  }
  std::fflush(stdout);
  std::fprintf(stderr,
               "ember: prompt %d tokens in %.3f s (%.1f tok/s); generated %d tokens in %.3f s "
               "(%.1f tok/s); finish: %s\n",
               stats.n_prompt, stats.prefill_seconds, stats.prefill_tokens_per_second, stats.n_gen,
               stats.decode_seconds, stats.decode_tokens_per_second,
               ember_finish_reason_str(stats.finish_reason));
  return 0;
}

}  // namespace cli
