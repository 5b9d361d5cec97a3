// ember perplexity: how well a model predicts a text.
//
// Chunked (the default) is llama.cpp's llama-perplexity method, so the figures
// compare: the tokenized text is cut into chunks of n_ctx tokens, each
// evaluated in a fresh context (its first token replaced by BOS when the model
// adds one), and the second half of each chunk is scored, so every scored
// token sees at least n_ctx/2 tokens of context.
//
// --stream feeds the whole text through one session of n_ctx tokens, in
// batches, and scores every token after the first: the context fills, shifts
// (dropping the oldest tokens after --keep) and goes on. It measures what the
// KV ring does to quality over a long run (docs/KV.md).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.h"

namespace cli {
namespace {

// Mean negative log-likelihood and its standard error.
struct NllStats {
  double sum = 0, sum_sq = 0;
  int64_t n = 0;
  void Add(double nll) {
    sum += nll;
    sum_sq += nll * nll;
    ++n;
  }
  double mean() const { return n ? sum / static_cast<double>(n) : 0.0; }
  double stderr_mean() const {
    if (n < 2) return 0.0;
    const double m = mean();
    const double var = std::max(0.0, sum_sq / static_cast<double>(n) - m * m);
    return std::sqrt(var / static_cast<double>(n - 1));
  }
  double ppl() const { return std::exp(mean()); }
};

}  // namespace

int PerplexityCommand(int argc, char** argv) {
  std::vector<OptionSpec> specs = {
      kModelOption,
      {"--file", "-f", "FILE", "the text to score"},
      {"--ctx-size", "-c", "N", "context size in tokens (default 512)"},
      {"--chunks", "", "N", "score at most N chunks (default: all)"},
      {"--stream", "", "",
       "feed the whole text through one context of -c tokens, shifting when full, and score "
       "every token"},
      {"--batch-size", "-b", "N", "with --stream: tokens per evaluation (default 64)"},
      kThreadsOption,
      kThreadsBatchOption,
      {"--json", "", "", "print one JSON object at the end"},
      kNumericsOption,
      kRepackOption,
  };
  for (OptionSpec& o : MmapOptions()) specs.push_back(std::move(o));
  for (OptionSpec& o : KvOptions(/*with_keep=*/true)) specs.push_back(std::move(o));
  Args args;
  if (!args.Parse("perplexity", "[-m MODEL] -f FILE [-c 512] [--stream] [options]", specs, argc,
                  argv)) {
    return 0;
  }
  if (!args.Has("--file")) throw UsageError{"a text is needed: -f FILE"};
  const std::string text = ReadTextFile(args.Get("--file"));
  const int64_t n_ctx = args.GetInt("--ctx-size", 512, 8, 1 << 20);
  const int64_t max_chunks = args.GetInt("--chunks", -1, -1, 1 << 30);
  const bool stream = args.Has("--stream");
  const int64_t n_batch = args.GetInt("--batch-size", 64, 1, 1 << 16);
  const int32_t n_threads = GetThreads(args, "--threads");
  const int32_t n_threads_batch = GetThreads(args, "--threads-batch");
  const bool json = args.Has("--json");
  if (!stream && args.Has("--keep")) throw UsageError{"--keep applies to --stream only"};
  if (!stream && args.Has("--no-context-shift")) {
    throw UsageError{"--no-context-shift applies to --stream only"};
  }

  const ember_numerics numerics = GetNumerics(args);
  const std::string path = ResolveModelPath(args);
  ModelPtr model(LoadModel(path, false, numerics, GetFloatWeights(args), GetMmapMode(args)));
  ember_model_info info;
  Check(ember_model_get_info(model.get(), &info), "model info");
  // The text with BOS when the model adds one, special-token text as plain
  // text (as llama-perplexity tokenizes it).
  const std::vector<int32_t> ids = Tokenize(model.get(), text, true, false);
  const bool adds_bos = info.add_bos && info.bos_token >= 0;
  const int32_t bos = info.bos_token;

  ember_session_params sp = ember_session_default_params();
  sp.n_ctx = static_cast<int32_t>(n_ctx);
  sp.n_threads = n_threads;
  sp.n_threads_batch = n_threads_batch;
  sp.n_batch = static_cast<int32_t>(std::min<int64_t>(n_ctx, 512));
  ApplyKvOptions(args, 0, &sp);
  if (args.Has("--keep") && args.GetInt("--keep", 0, -1, 1 << 24) < 0) {
    throw UsageError{"--keep -1 (the whole prompt) has no meaning here; give a count"};
  }
  ember_session* raw = nullptr;
  Check(CreateSession(model.get(), sp, args, &raw), "session");
  SessionPtr session(raw);
  std::fprintf(stderr, "ember: %s; %zu tokens; KV cache %s, %.1f MiB\n",
               DescribeThreads(session.get(), n_threads, n_threads_batch).c_str(), ids.size(),
               KvTypeLabel(sp.kv_type),
               static_cast<double>(ember_session_kv_bytes(session.get())) / (1 << 20));

  NllStats nll;
  int64_t n_chunks = 0;
  const auto t0 = std::chrono::steady_clock::now();
  if (!stream) {
    const int64_t available = static_cast<int64_t>(ids.size()) / n_ctx;
    n_chunks = max_chunks >= 0 ? std::min(available, max_chunks) : available;
    if (n_chunks == 0) {
      throw UsageError{"the text has " + std::to_string(ids.size()) + " tokens; a chunk needs -c " +
                       std::to_string(n_ctx) + " (use a smaller -c or a longer text)"};
    }
    std::vector<float> lp(static_cast<size_t>(n_ctx));
    const int64_t first = n_ctx / 2;
    for (int64_t c = 0; c < n_chunks; ++c) {
      std::vector<int32_t> chunk(ids.begin() + c * n_ctx, ids.begin() + (c + 1) * n_ctx);
      if (adds_bos) chunk[0] = bos;
      ember_session_reset(session.get());
      Check(ember_session_score(session.get(), chunk.data(), chunk.size(), lp.data()), "score");
      // lp[i] predicts chunk[i]: score the tokens after the first half.
      for (int64_t i = first + 1; i < n_ctx; ++i) nll.Add(-static_cast<double>(lp[i]));
      if (!json)
        std::fprintf(stderr, "[%lld]%.4f%s", static_cast<long long>(c + 1), nll.ppl(),
                     c + 1 == n_chunks ? "\n" : ",");
    }
  } else {
    if (ids.size() < 2) throw UsageError{"the text needs at least 2 tokens"};
    std::vector<float> lp(static_cast<size_t>(n_batch));
    for (size_t at = 0; at < ids.size(); at += static_cast<size_t>(n_batch)) {
      const size_t n = std::min(ids.size() - at, static_cast<size_t>(n_batch));
      const ember_status st = ember_session_score(session.get(), ids.data() + at, n, lp.data());
      if (st == EMBER_ERR_CONTEXT_OVERFLOW) {
        std::fprintf(stderr, "ember: the context is full after %zu of %zu tokens (%s)\n", at,
                     ids.size(), ember_last_error());
        break;
      }
      Check(st, "score");
      for (size_t i = at == 0 ? 1 : 0; i < n; ++i) nll.Add(-static_cast<double>(lp[i]));
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double ppl = nll.ppl();
  const double ppl_err = ppl * nll.stderr_mean();  // first-order error propagation
  const int32_t dropped = ember_session_n_dropped(session.get());
  if (json) {
    std::printf(
        "{\"model\": \"%s\", \"mode\": \"%s\", \"n_ctx\": %lld, \"kv_type\": \"%s\", \"n_keep\": "
        "%d, \"n_tokens\": %zu, \"n_chunks\": %lld, \"n_scored\": %lld, \"nll\": %.6f, \"ppl\": "
        "%.4f, \"ppl_stderr\": %.4f, \"n_dropped\": %d, \"seconds\": %.2f}\n",
        JsonEscape(path).c_str(), stream ? "stream" : "chunks", static_cast<long long>(n_ctx),
        KvTypeLabel(sp.kv_type), sp.n_keep, ids.size(), static_cast<long long>(n_chunks),
        static_cast<long long>(nll.n), nll.mean(), ppl, ppl_err, dropped, seconds);
  } else {
    std::printf(
        "Final estimate: PPL = %.4f +/- %.4f (%lld tokens scored%s)\n", ppl, ppl_err,
        static_cast<long long>(nll.n),
        stream ? (", " + std::to_string(dropped) + " dropped by context shifts").c_str() : "");
  }
  std::fprintf(stderr, "ember: scored %lld tokens in %.1f s (%.1f tok/s)\n",
               static_cast<long long>(nll.n), seconds, static_cast<double>(nll.n) / seconds);
  return 0;
}

}  // namespace cli
