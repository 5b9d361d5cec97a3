// ember serve: an OpenAI-compatible HTTP server over one model
// (docs/SERVER.md). This file reads the flags and wires the parts of
// serve/ together: slots (serve/slot_pool.h), routes (serve/routes.h).
//
// Start-up order: the socket is bound first and answers 503 while the model
// loads, so that clients and supervisors can poll /health. SIGINT/SIGTERM are
// taken by one thread (sigtimedwait), which cancels the generations and stops
// the HTTP server; the process then exits 0.
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <thread>

#include <httplib.h>

#include "cli.h"
#include "sampling_flags.h"
#include "serve/routes.h"
#include "serve/slot_pool.h"

namespace cli {
namespace {

constexpr size_t kMaxBody = 8u << 20;  // 8 MiB: a long conversation fits many times

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// httplib's stop() does nothing before listen_after_bind has started
// listening, which may not have happened yet when a signal or a load error
// comes right after start-up: ask until the listening thread has returned.
void StopServer(httplib::Server& server, const std::atomic<bool>& http_done) {
  while (!http_done.load()) {
    server.stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool KeepLoading(float, void* user) {
  return static_cast<serve::ServerState*>(user)->phase.load() != serve::Phase::kStopping;
}

}  // namespace

int ServeCommand(int argc, char** argv) {
  std::vector<OptionSpec> specs = {
      kModelOption,
      {"--host", "", "ADDR", "address to listen on (default 127.0.0.1: this machine only)"},
      {"--port", "", "N", "port to listen on; 0 picks a free one (default 8080)"},
      {"--parallel", "-np", "N", "slots: requests generated at once, one session each (default 1)"},
      {"--queue", "", "N", "requests waiting for a slot before 429 (default 64)"},
      {"--no-cont-batching", "-nocb", "",
       "slots run their own forward passes instead of sharing them (continuous batching is on "
       "by default with --parallel > 1; output is the same either way)"},
      {"--ctx-size", "-c", "N",
       "context of each slot in tokens (default: training context, at most 4096)"},
      {"--api-key", "", "KEY", "require 'Authorization: Bearer KEY' (default: no key)"},
      kPoolingOption,
      {"--timeout", "", "S", "seconds a client may take to send or to read (default 60)"},
      kThreadsOption,
      kThreadsBatchOption,
      {"--max-memory", "", "SIZE",
       "the most memory the slots' contexts (KV caches and scratch) may take together, e.g. "
       "512M or 4G, shared evenly by the slots; more is refused at start-up (default: the memory "
       "available, from /proc/meminfo and the cgroup's limit)"},
  };
  for (OptionSpec& o : MmapOptions()) specs.push_back(std::move(o));
  for (OptionSpec& o : SamplingOptions("default temperature of requests that give none (0.8)")) {
    specs.push_back(std::move(o));
  }
  for (OptionSpec& o : SpeculativeOptions()) specs.push_back(std::move(o));
  Args args;
  if (!args.Parse("serve", "[-m MODEL] [--host ADDR] [--port N] [--parallel N] [options]", specs,
                  argc, argv)) {
    return 0;
  }
  const std::string host = args.Get("--host", "127.0.0.1");
  const int port = static_cast<int>(args.GetInt("--port", 8080, 0, 65535));
  const int parallel = static_cast<int>(args.GetInt("--parallel", 1, 1, 256));
  const size_t queue = static_cast<size_t>(args.GetInt("--queue", 64, 0, 1 << 16));
  const int32_t n_ctx = static_cast<int32_t>(args.GetInt("--ctx-size", 0, 0, 1 << 24));
  const int64_t timeout = args.GetInt("--timeout", 60, 1, 86400);
  const int32_t n_threads = GetThreads(args, "--threads");
  const int32_t n_threads_batch = GetThreads(args, "--threads-batch");
  const uint64_t max_memory = GetMaxMemory(args);
  const ember_pooling pooling = GetPooling(args);
  if (pooling == EMBER_POOLING_NONE) {
    throw UsageError{
        "--pooling none gives a vector per token; /v1/embeddings returns one per "
        "input (mean, first, last or model)"};
  }
  const ember_mmap_mode mmap_mode = GetMmapMode(args);
  if (args.Has("--api-key") && args.Get("--api-key").empty()) {
    throw UsageError{"--api-key needs a key"};
  }
  const LogitBiases biases = ParseLogitBiases(args);
  const ember_sampling_params sampling = SamplingParamsFromFlags(args, biases);
  const std::string model_path = ResolveModelPath(args);
  // --draft-model / --lookup: the flags are checked now, the draft model is
  // loaded after the model (every slot gets a session of it).
  Speculative spec_flags;
  SetUpSpeculative(args, nullptr, ember_session_default_params(), &spec_flags);

  serve::ServerState state;
  state.api_key = args.Get("--api-key");
  state.model_id = BaseName(model_path);
  state.max_body = kMaxBody;

  // SIGINT/SIGTERM go to the waiting thread only; a write to a closed
  // connection must be an error (EPIPE), not the end of the process.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  httplib::Server server;
  server.set_payload_max_length(kMaxBody);
  server.set_read_timeout(static_cast<time_t>(timeout), 0);
  server.set_write_timeout(static_cast<time_t>(timeout), 0);
  server.set_keep_alive_timeout(5);
  // A thread per connection being served: the slots, the queue and a few
  // more for /health and /metrics, so that a full queue answers 429 rather
  // than leaving connections unanswered.
  const size_t http_threads = std::max<size_t>(8, static_cast<size_t>(parallel) + queue + 4);
  server.new_task_queue = [http_threads] { return new httplib::ThreadPool(http_threads); };
  serve::InstallRoutes(server, state);

  int bound = port;
  if (port == 0) {
    bound = server.bind_to_any_port(host);
    if (bound < 0) throw UsageError{"cannot listen on " + host + " (a free port)"};
  } else if (!server.bind_to_port(host, port)) {
    throw UsageError{"cannot listen on " + host + ":" + std::to_string(port) +
                     " (in use, or not an address of this machine)"};
  }
  std::fprintf(stderr, "ember serve: listening on http://%s:%d\n", host.c_str(), bound);
  std::fflush(stderr);
  std::atomic<bool> http_done{false};
  std::thread http([&server, &http_done] {
    server.listen_after_bind();
    http_done.store(true);
  });

  std::unique_ptr<serve::SlotPool> pool;
  std::atomic<bool> finished{false};
  std::thread signals([&] {
    timespec wait{0, 200 * 1000 * 1000};
    while (!finished.load()) {
      const int sig = sigtimedwait(&stop_signals, nullptr, &wait);
      if (sig != SIGINT && sig != SIGTERM) continue;
      std::fprintf(stderr, "ember serve: %s: stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
      state.phase.store(serve::Phase::kStopping);
      // The pool cancels what runs and what waits, so that the HTTP threads
      // answering them finish, and server.stop() can join them.
      if (serve::SlotPool* p = state.pool) p->Shutdown();
      StopServer(server, http_done);
      return;
    }
  });

  int exit_code = 0;
  ember_model* raw_model = nullptr;
  ember_model_params mp = ember_model_default_params();
  mp.progress = KeepLoading;
  mp.progress_user_data = &state;
  mp.mmap_mode = static_cast<uint8_t>(mmap_mode);
  ember_status load = ember_model_load(model_path.c_str(), &mp, &raw_model);
  ModelPtr model(raw_model);
  ModelPtr draft_model;
  if (load == EMBER_OK && args.Has("--draft-model")) {
    ember_model* raw_draft = nullptr;
    load = ember_model_load(args.Get("--draft-model").c_str(), &mp, &raw_draft);
    draft_model.reset(raw_draft);
  }
  if (load != EMBER_OK) {
    if (load != EMBER_ERR_CANCELLED) {
      std::fprintf(stderr, "ember: error: %s\n", ember_last_error());
      exit_code = 1;
    }
  } else if (state.phase.load() != serve::Phase::kStopping) {
    ember_session_params sp = ember_session_default_params();
    sp.n_ctx = n_ctx;
    sp.n_threads = n_threads;
    sp.n_threads_batch = n_threads_batch;
    serve::Speculation speculation;
    speculation.on = spec_flags.on;
    speculation.draft_model = draft_model.get();
    speculation.params = spec_flags.params;
    pool = std::make_unique<serve::SlotPool>(model.get(), sp, parallel, queue,
                                             !args.Has("--no-cont-batching"), &state.metrics,
                                             speculation);
    if (max_memory != 0) {
      pool->set_max_memory(std::max<uint64_t>(1, max_memory / static_cast<uint64_t>(parallel)));
    }
    if (pool->Start() != EMBER_OK) {
      // --max-memory is shared: say what each slot got.
      const std::string share = max_memory != 0 && parallel > 1
                                    ? " (--max-memory " + args.Get("--max-memory") + " shared by " +
                                          std::to_string(parallel) + " slots)"
                                    : "";
      std::fprintf(stderr, "ember: error: creating the sessions%s: %s\n", share.c_str(),
                   ember_last_error());
      exit_code = 1;
    } else {
      ember_model_info info{};
      ember_model_get_info(model.get(), &info);
      serve::RequestDefaults& d = state.defaults;
      d.model = model.get();
      d.n_vocab = info.n_vocab;
      d.n_ctx = pool->n_ctx();
      d.n_embd = info.n_embd;
      d.pooling = pooling;
      d.sampling = sampling;
      d.bias_ids = biases.ids;
      d.bias_values = biases.values;
      d.samplers = args.Get("--samplers");
      d.seed_given = args.Has("--seed");
      d.seed = sampling.seed;
      // Reasoning models: their replies' thinking sections become reasoning_content.
      d.think = serve::ModelHasThinkMarkers(model.get());
      state.created = static_cast<int64_t>(std::time(nullptr));
      state.pool = pool.get();
      serve::Phase expected = serve::Phase::kLoading;
      state.phase.compare_exchange_strong(expected, serve::Phase::kReady);
      const std::string speculative =
          !spec_flags.on ? ""
          : draft_model  ? ", speculative with " + BaseName(args.Get("--draft-model"))
                         : ", speculative with lookup";
      std::fprintf(stderr, "ember serve: ready: %s, %d slot%s of %d tokens%s, queue %zu%s%s\n",
                   state.model_id.c_str(), parallel, parallel == 1 ? "" : "s", d.n_ctx,
                   parallel > 1 && !args.Has("--no-cont-batching") ? " (batched)" : "", queue,
                   speculative.c_str(), state.api_key.empty() ? "" : ", API key required");
      std::fflush(stderr);
      // A signal that came while the pool was being made saw no pool.
      if (state.phase.load() == serve::Phase::kStopping) pool->Shutdown();
    }
  }
  if (exit_code != 0) {
    state.phase.store(serve::Phase::kStopping);
    StopServer(server, http_done);
  }
  http.join();
  finished.store(true);
  signals.join();
  if (pool) pool->Shutdown();
  // An error stays the last line (the CLI's contract); a clean stop says so.
  if (exit_code == 0) std::fprintf(stderr, "ember serve: stopped\n");
  return exit_code;
}

}  // namespace cli
