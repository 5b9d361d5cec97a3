// ember_batch_sessions: aggregate decode throughput of N sessions generating
// at once on their own threads (a server's slots), alone (each session runs
// its own passes) and through one batcher (continuous batching: the sessions
// share their passes), against one session. Decode reads every weight once
// per pass, so N sequences in one pass should cost little more than one.
//
//   ember_batch_sessions -m MODEL [-t THREADS] [-n TOKENS] [--clients 1,2,4,8]
//                        [--reps R] [--mode batched|separate|both]
//
// For each client count N and mode: N sessions (n_ctx 512) each get a
// different prompt of 32 tokens and generate TOKENS tokens greedily
// (ignore EOS), all started together. Reported: aggregate generated tokens
// per second over the wall time from the start to the last finish (prefill
// included, as a client sees it), the median over the repetitions with the
// range, the ratio to one client, and for batched runs the mean sessions per
// pass. The client counts and modes alternate within each repetition so that
// drift in the machine's load hits all of them.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bench/int_list.h"
#include "ember.h"

namespace {

struct Result {
  double tok_per_s = 0;
  double seqs_per_pass = 0;
};

// One run: n_clients sessions generating n_gen tokens each at once.
Result RunOnce(const ember_model* m, int n_clients, int n_gen, int threads, bool batched) {
  ember_batcher* b = nullptr;
  if (batched && ember_batcher_create(m, nullptr, &b) != EMBER_OK) {
    std::fprintf(stderr, "batcher: %s\n", ember_last_error());
    std::exit(1);
  }
  std::vector<ember_session*> sessions(static_cast<size_t>(n_clients));
  for (ember_session*& s : sessions) {
    ember_session_params sp = ember_session_default_params();
    sp.n_ctx = 512;
    sp.n_threads = threads;
    sp.n_threads_batch = threads;
    if (ember_session_create(m, &sp, &s) != EMBER_OK ||
        (b && ember_session_set_batcher(s, b) != EMBER_OK)) {
      std::fprintf(stderr, "session: %s\n", ember_last_error());
      std::exit(1);
    }
  }
  std::vector<int> generated(static_cast<size_t>(n_clients), 0);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int c = 0; c < n_clients; ++c) {
    workers.emplace_back([&, c] {
      std::vector<int32_t> prompt(32);
      for (int i = 0; i < 32; ++i) prompt[static_cast<size_t>(i)] = 100 + 37 * c + 11 * i;
      ember_generate_params gp = ember_generate_default_params();
      gp.n_predict = n_gen;
      gp.temperature = 0.0f;
      gp.ignore_eos = true;
      gp.logprobs = false;
      ember_generate_stats st{};
      if (ember_generate(sessions[static_cast<size_t>(c)], prompt.data(), prompt.size(), &gp,
                         nullptr, nullptr, &st) == EMBER_OK) {
        generated[static_cast<size_t>(c)] = st.n_gen;
      }
    });
  }
  for (std::thread& w : workers) w.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Result r;
  int total = 0;
  for (int g : generated) total += g;
  r.tok_per_s = total / seconds;
  if (b) {
    ember_batcher_stats st{};
    ember_batcher_get_stats(b, &st);
    r.seqs_per_pass = st.passes > 0 ? static_cast<double>(st.sequences) / st.passes : 0;
  }
  for (ember_session* s : sessions) ember_session_free(s);
  ember_batcher_free(b);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const char* model_path = nullptr;
  int threads = 1, n_gen = 64, reps = 3;
  std::vector<int> clients = {1, 2, 4, 8};
  std::string mode = "both";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "-m" && has) {
      model_path = argv[++i];
    } else if (a == "-t" && has) {
      threads = std::atoi(argv[++i]);
    } else if (a == "-n" && has) {
      n_gen = std::atoi(argv[++i]);
    } else if (a == "--clients" && has) {
      clients = ParseIntList(argv[++i]);
    } else if (a == "--reps" && has) {
      reps = std::atoi(argv[++i]);
    } else if (a == "--mode" && has) {
      mode = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: ember_batch_sessions -m MODEL [-t THREADS] [-n TOKENS] "
                   "[--clients 1,2,4,8] [--reps R] [--mode batched|separate|both]\n");
      return 2;
    }
  }
  if (!model_path || threads < 1 || n_gen < 1 || reps < 1 || clients.empty() ||
      (mode != "batched" && mode != "separate" && mode != "both")) {
    std::fprintf(stderr, "ember_batch_sessions: -m MODEL is required; counts must be >= 1\n");
    return 2;
  }
  ember_model* m = nullptr;
  if (ember_model_load(model_path, nullptr, &m) != EMBER_OK) {
    std::fprintf(stderr, "ember_batch_sessions: %s\n", ember_last_error());
    return 1;
  }
  std::vector<bool> modes;
  if (mode != "separate") modes.push_back(true);
  if (mode != "batched") modes.push_back(false);
  RunOnce(m, 1, 8, threads, false);  // warm-up: pages the weights in
  std::map<std::pair<int, bool>, std::vector<Result>> results;
  for (int r = 0; r < reps; ++r) {
    for (int c : clients) {
      for (bool batched : modes)
        results[{c, batched}].push_back(RunOnce(m, c, n_gen, threads, batched));
    }
  }
  std::printf("# %s, %d thread(s), %d tokens per client, %d repetitions (median, min..max)\n",
              model_path, threads, n_gen, reps);
  std::printf("%-9s %7s %12s %18s %9s %14s\n", "mode", "clients", "tok/s", "range", "x 1 client",
              "seqs per pass");
  for (bool batched : modes) {
    double base = 0;
    for (int c : clients) {
      std::vector<Result>& v = results[{c, batched}];
      std::sort(v.begin(), v.end(),
                [](const Result& a, const Result& b) { return a.tok_per_s < b.tok_per_s; });
      const Result& med = v[v.size() / 2];
      if (base == 0) base = med.tok_per_s;
      char range[64];
      std::snprintf(range, sizeof range, "%.1f..%.1f", v.front().tok_per_s, v.back().tok_per_s);
      std::printf("%-9s %7d %12.1f %18s %9.2f %14.2f\n", batched ? "batched" : "separate", c,
                  med.tok_per_s, range, med.tok_per_s / base, med.seqs_per_pass);
    }
  }
  ember_model_free(m);
  return 0;
}
