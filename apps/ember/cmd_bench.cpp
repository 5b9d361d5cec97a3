// ember bench: prefill (pp) and decode (tg) speed, as llama-bench measures
// them, plus the bandwidth decode achieves against the measured memory read
// bandwidth of this machine.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cli.h"

namespace cli {
namespace {

// The cache types as llama-bench's JSON names them (type_k, type_v): --kv-type's
// names, but q8_0 for ember's q8.
const char* KvJsonName(ember_kv_type type) {
  return type == EMBER_KV_Q8 ? "q8_0" : KvTypeLabel(type);
}

struct Sample {
  std::vector<double> ns;  // per repetition
};

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<int64_t> ParseIntList(const std::string& s, const std::string& name) {
  std::vector<int64_t> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    const std::string part = s.substr(i, j - i);
    char* end = nullptr;
    const long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || v < 0 || v > (1 << 20)) {
      throw UsageError{name + " expects non-negative integers separated by commas, got '" + s +
                       "'"};
    }
    out.push_back(v);
    i = j + 1;
  }
  return out;
}

// -t: "auto" or counts, comma-separated.
std::vector<int32_t> ParseThreadList(const std::string& s) {
  std::vector<int32_t> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    out.push_back(ParseThreadCount("--threads", s.substr(i, j - i)));
    i = j + 1;
  }
  return out;
}

std::vector<int32_t> BenchTokens(int64_t n, int32_t n_vocab) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) ids[i] = static_cast<int32_t>((i * 7919 + 13) % n_vocab);
  return ids;
}

// One timed run: a fresh context holding `depth` tokens (evaluated untimed,
// as llama-bench's -d), then the prompt as one batch (if any), then the
// generated tokens as single-token decodes (if any): -p, -n and -pg tests.
double RunOnce(ember_session* s, const std::vector<int32_t>& depth,
               const std::vector<int32_t>& prompt, const std::vector<int32_t>& gen) {
  ember_session_reset(s);
  if (!depth.empty()) Check(ember_session_eval(s, depth.data(), depth.size()), "bench");
  const double t0 = Now();
  if (!prompt.empty()) Check(ember_session_eval(s, prompt.data(), prompt.size()), "bench");
  for (int32_t id : gen) Check(ember_session_eval(s, &id, 1), "bench");
  return Now() - t0;
}

// -pg PP,TG (llama-bench's prompt-then-generation test): both counts > 0.
std::pair<int64_t, int64_t> ParsePromptGen(const std::string& s) {
  const std::vector<int64_t> v = ParseIntList(s, "--prompt-gen");
  if (v.size() != 2 || v[0] <= 0 || v[1] <= 0) {
    throw UsageError{"--prompt-gen wants PP,TG (two counts above 0), got '" + s + "'"};
  }
  return {v[0], v[1]};
}

}  // namespace

int BenchCommand(int argc, char** argv) {
  std::vector<OptionSpec> specs = {
      kModelOption,
      {"--n-prompt", "-p", "N[,N]", "prompt tokens for the prefill test (default 512; 0: none)"},
      {"--n-gen", "-n", "N[,N]", "tokens for the decode test (default 128; 0: none)"},
      {"--threads", "-t", "T[,T]",
       "decode thread counts or 'auto' (default auto: the fewest big cores that reach 95% of "
       "the measured memory bandwidth); prefill uses the same count unless --threads-batch"},
      kThreadsBatchOption,
      {"--prompt-gen", "-pg", "PP,TG",
       "a prompt of PP tokens then TG decodes, timed together (tok/s of both), as llama-bench's "
       "-pg; may be given more than once"},
      {"--n-depth", "-d", "N[,N]",
       "tokens already in the context when each test starts (default 0), as llama-bench's -d"},
      {"--repetitions", "-r", "R", "timed runs per test, after one warm-up (default 5)"},
      {"--json", "", "", "one JSON object per test and line, with llama-bench's field names"},
      {"--probe-each", "", "",
       "decode tests: measure the read bandwidth again before each repetition and after the "
       "last, and rate each repetition against the larger probe beside it (a shared host's "
       "bandwidth moves within seconds); % peak is then the median of those ratios. Each probe "
       "reads 256 MiB of its own beside the loaded model"},
      kNumericsOption,
      kRepackOption,
      kKvTypeOption,
      kMaxMemoryOption,
  };
  for (OptionSpec& o : MmapOptions()) specs.push_back(std::move(o));
  Args args;
  if (!args.Parse("bench",
                  "-m MODEL [-p 512] [-n 128] [-pg PP,TG] [-d 0] [-t T|auto] [-r R] [--json]",
                  specs, argc, argv)) {
    return 0;
  }
  const std::vector<int64_t> pps = ParseIntList(args.Get("--n-prompt", "512"), "--n-prompt");
  const std::vector<int64_t> tgs = ParseIntList(args.Get("--n-gen", "128"), "--n-gen");
  const std::vector<int64_t> depths = ParseIntList(args.Get("--n-depth", "0"), "--n-depth");
  std::vector<std::pair<int64_t, int64_t>> pgs;
  for (const std::string& v : args.GetAll("--prompt-gen")) pgs.push_back(ParsePromptGen(v));
  std::vector<int32_t> threads = {0};
  if (args.Has("--threads")) threads = ParseThreadList(args.Get("--threads"));
  const int32_t threads_batch = GetThreads(args, "--threads-batch");
  const int64_t reps = args.GetInt("--repetitions", 5, 1, 1000);
  const bool json = args.Has("--json");
  const bool probe_each = args.Has("--probe-each");
  const ember_numerics numerics = GetNumerics(args);
  const ember_kv_type kv_type = GetKvType(args);
  GetMaxMemory(args);  // flag errors before any measurement
  GetMmapMode(args);
  const std::string path = ResolveModelPath(args);
  // The read bandwidth is measured before the model is loaded, so the
  // measurement's buffer does not add to the process's peak memory. So is
  // the plan for -t auto (measured once per machine, then cached).
  ember_thread_plan plan{};
  bool any_auto = threads_batch == 0;
  for (int32_t t : threads) any_auto = any_auto || t == 0;
  if (any_auto) Check(ember_get_thread_plan(&plan), "thread plan");
  std::map<int, double> peak_bw;
  for (int32_t t : threads) {
    const int n = t > 0 ? t : plan.n_threads;
    if (peak_bw.count(n) == 0) peak_bw[n] = ember_measure_read_bandwidth(n);
  }
  ModelPtr model(LoadModel(path, false, numerics, GetFloatWeights(args), GetMmapMode(args)));
  ember_model_info info;
  Check(ember_model_get_info(model.get(), &info), "model info");

  int64_t max_test = 1, max_depth = 0;
  for (int64_t p : pps) max_test = std::max(max_test, p);
  for (int64_t n : tgs) max_test = std::max(max_test, n);
  for (const auto& [p, n] : pgs) max_test = std::max(max_test, p + n);
  for (int64_t d : depths) max_depth = std::max(max_depth, d);
  const int64_t max_ctx = max_depth + max_test;
  if (max_ctx > (int64_t{1} << 24))
    throw UsageError{"--n-depth plus the test's tokens is too large"};
  if (!json) {
    std::printf("model: %s (%s, %.1f MiB as loaded, kernels: %s, KV cache: %s)\n", path.c_str(),
                info.architecture, static_cast<double>(info.loaded_bytes) / (1 << 20), info.isa,
                KvTypeLabel(kv_type));
    if (any_auto) {
      std::printf(
          "-t auto: decode %d threads (%.1f GB/s read, %.0f%% of the %.1f GB/s peak), "
          "prefill %d threads (the big cores; %d of %d cpus are big)\n",
          plan.n_threads, plan.decode_read_gbps,
          plan.peak_read_gbps > 0 ? 100.0 * plan.decode_read_gbps / plan.peak_read_gbps : 0.0,
          plan.peak_read_gbps, plan.n_threads_batch, plan.n_big, plan.n_cpus);
    }
    std::printf("| %-14s | %9s | %12s | %9s | %7s | %7s |\n", "test", "threads", "tok/s", "+-",
                "GB/s", "% peak");
    std::printf("|----------------|-----------|--------------|-----------|---------|---------|\n");
  }
  for (int32_t t : threads) {
    ember_session_params sp = ember_session_default_params();
    sp.n_ctx = static_cast<int32_t>(max_ctx);
    // Nothing shifts in a bench (the context holds every test); a context of a
    // few tokens must still leave room after the kept ones.
    sp.n_keep = std::min<int32_t>(sp.n_keep, sp.n_ctx - 1);
    sp.n_threads = t;
    sp.n_threads_batch = threads_batch;
    sp.kv_type = kv_type;
    ember_session* raw = nullptr;
    Check(CreateSession(model.get(), sp, args, &raw), "session");
    SessionPtr session(raw);
    const int n_threads = ember_session_n_threads(session.get());
    const int n_threads_batch = ember_session_n_threads_batch(session.get());
    const double peak =
        peak_bw.count(n_threads) ? peak_bw[n_threads] : ember_measure_read_bandwidth(n_threads);

    // KV cache bytes of one position (all layers, K and V): a decode step at
    // position i reads i + 1 of them besides the weights.
    const double kv_per_pos =
        static_cast<double>(ember_session_kv_bytes(session.get())) / static_cast<double>(max_ctx);

    struct Test {
      int64_t n_prompt, n_gen, n_depth;
    };
    std::vector<Test> tests;
    for (int64_t d : depths) {
      for (int64_t p : pps) {
        if (p > 0) tests.push_back({p, 0, d});
      }
      for (int64_t n : tgs) {
        if (n > 0) tests.push_back({0, n, d});
      }
      for (const auto& [p, n] : pgs) tests.push_back({p, n, d});
    }
    for (const Test& test : tests) {
      // pp: a prompt alone; tg: decodes alone; both: -pg.
      const bool pp = test.n_gen == 0, tg = test.n_prompt == 0;
      const int64_t n_tok = test.n_prompt + test.n_gen;
      // The context before the test: other tokens than the test's own.
      std::vector<int32_t> depth = BenchTokens(test.n_depth + n_tok, info.n_vocab);
      const std::vector<int32_t> prompt(depth.end() - n_tok, depth.end() - test.n_gen);
      const std::vector<int32_t> gen(depth.end() - test.n_gen, depth.end());
      depth.resize(static_cast<size_t>(test.n_depth));
      RunOnce(session.get(), depth, prompt, gen);  // warm-up
      std::vector<double> ts, ns;
      // --probe-each: probes[r] runs just before repetition r, probes[reps]
      // after the last (decode tests only).
      std::vector<double> probes;
      const bool paired = probe_each && tg;
      for (int64_t r = 0; r < reps; ++r) {
        if (paired) probes.push_back(ember_measure_read_bandwidth(n_threads));
        const double s = RunOnce(session.get(), depth, prompt, gen);
        ns.push_back(s * 1e9);
        ts.push_back(static_cast<double>(n_tok) / s);
      }
      if (paired) probes.push_back(ember_measure_read_bandwidth(n_threads));
      double avg = 0, avg_ns = 0;
      for (size_t i = 0; i < ts.size(); ++i) {
        avg += ts[i];
        avg_ns += ns[i];
      }
      avg /= static_cast<double>(ts.size());
      avg_ns /= static_cast<double>(ns.size());
      double var = 0, var_ns = 0;
      for (size_t i = 0; i < ts.size(); ++i) {
        var += (ts[i] - avg) * (ts[i] - avg);
        var_ns += (ns[i] - avg_ns) * (ns[i] - avg_ns);
      }
      const double sd = ts.size() > 1 ? std::sqrt(var / static_cast<double>(ts.size() - 1)) : 0;
      const double sd_ns =
          ns.size() > 1 ? std::sqrt(var_ns / static_cast<double>(ns.size() - 1)) : 0;
      // Decode reads every weight byte once per token, and the cached rows of
      // the positions so far: on average n_depth + (n_gen + 1) / 2 of them.
      const double kv_read =
          kv_per_pos * (static_cast<double>(test.n_depth) + static_cast<double>(n_tok + 1) / 2);
      // Bandwidth only for decode alone (a -pg test's time is mostly its prompt's arithmetic).
      const double gbps =
          !tg ? 0.0 : avg * (static_cast<double>(info.loaded_bytes) + kv_read) / 1e9;
      double pct = !tg || peak <= 0 ? 0.0 : 100.0 * gbps / peak;
      // Each repetition against the larger of the probes on either side of
      // it: the stricter of the two, so a dip in the host's bandwidth during
      // one probe does not flatter the decode next to it.
      std::vector<double> paired_pct;
      if (paired) {
        const double bytes_per_token = static_cast<double>(info.loaded_bytes) + kv_read;
        for (size_t r = 0; r < ts.size(); ++r) {
          const double roof = std::max(probes[r], probes[r + 1]);
          paired_pct.push_back(roof > 0 ? 100.0 * ts[r] * bytes_per_token / 1e9 / roof : 0.0);
        }
        std::vector<double> sorted = paired_pct;
        std::sort(sorted.begin(), sorted.end());
        const size_t n = sorted.size();
        pct = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
      }
      std::string name = pp   ? "pp" + std::to_string(test.n_prompt)
                         : tg ? "tg" + std::to_string(test.n_gen)
                              : "pp" + std::to_string(test.n_prompt) + "+tg" +
                                    std::to_string(test.n_gen);             // as llama-bench
      if (test.n_depth > 0) name += " @ d" + std::to_string(test.n_depth);  // as llama-bench
      // A prompt runs on the batch threads, single-token steps on the decode
      // ones (a -pg test names the decode threads, as llama-bench's one count).
      const int used = pp ? n_threads_batch : n_threads;
      const bool used_auto = pp ? threads_batch == 0 && t == 0 : t == 0;
      if (json) {
        std::string samples_ts, samples_ns;
        for (size_t i = 0; i < ts.size(); ++i) {
          samples_ts += (i ? ", " : "") + std::to_string(ts[i]);
          samples_ns += (i ? ", " : "") + std::to_string(static_cast<int64_t>(ns[i]));
        }
        std::string paired_json;
        if (paired) {
          paired_json = ", \"probe_each\": true, \"probes_gbps\": [";
          for (size_t i = 0; i < probes.size(); ++i) {
            paired_json += (i ? ", " : "") + std::to_string(probes[i]);
          }
          paired_json += "], \"pct_peak_bw_samples\": [";
          for (size_t i = 0; i < paired_pct.size(); ++i) {
            paired_json += (i ? ", " : "") + std::to_string(paired_pct[i]);
          }
          paired_json += "]";
        }
        std::printf(
            "{\"model_filename\": \"%s\", \"model_type\": \"%s\", \"model_size\": %llu, "
            "\"n_params\": %llu, \"backends\": \"CPU\", \"cpu_info\": \"ember %s\", "
            "\"n_threads\": %d, \"threads\": \"%s\", \"type_k\": \"%s\", \"type_v\": \"%s\", "
            "\"n_prompt\": %lld, \"n_gen\": %lld, \"n_depth\": %lld, "
            "\"test\": \"%s\", \"avg_ns\": %lld, \"stddev_ns\": %lld, \"avg_ts\": %.6f, "
            "\"stddev_ts\": %.6f, \"samples_ns\": [%s], \"samples_ts\": [%s], \"gbps\": %.3f, "
            "\"peak_read_gbps\": %.3f, \"pct_peak_bw\": %.2f%s}\n",
            JsonEscape(path).c_str(), info.architecture,
            static_cast<unsigned long long>(info.loaded_bytes),
            static_cast<unsigned long long>(info.n_params), info.isa, used,
            used_auto ? "auto" : std::to_string(used).c_str(), KvJsonName(kv_type),
            KvJsonName(kv_type), static_cast<long long>(test.n_prompt),
            static_cast<long long>(test.n_gen), static_cast<long long>(test.n_depth), name.c_str(),
            static_cast<long long>(avg_ns), static_cast<long long>(sd_ns), avg, sd,
            samples_ns.c_str(), samples_ts.c_str(), gbps, peak, pct, paired_json.c_str());
      } else {
        char bw[32] = "-", pc[32] = "-";
        if (tg) {
          std::snprintf(bw, sizeof(bw), "%.1f", gbps);
          std::snprintf(pc, sizeof(pc), "%.0f%%", pct);
        }
        const std::string th = (used_auto ? "auto " : "") + std::to_string(used);
        std::printf("| %-14s | %9s | %12.2f | %9.2f | %7s | %7s |\n", name.c_str(), th.c_str(), avg,
                    sd, bw, pc);
        if (paired) {
          const auto [lo, hi] = std::minmax_element(paired_pct.begin(), paired_pct.end());
          const auto [plo, phi] = std::minmax_element(probes.begin(), probes.end());
          std::printf(
              "  (%% peak: median of %zu repetitions, each against the larger probe beside it: "
              "%.0f-%.0f%%; probes %.1f-%.1f GB/s)\n",
              paired_pct.size(), *lo, *hi, *plo, *phi);
        }
      }
      std::fflush(stdout);
    }
    if (!json) {
      const double kv_kib = static_cast<double>(ember_session_kv_bytes(session.get())) / 1024;
      char kv[48];
      if (kv_kib < 1024) {
        std::snprintf(kv, sizeof(kv), "%.1f KiB", kv_kib);
      } else {
        std::snprintf(kv, sizeof(kv), "%.1f MiB", kv_kib / 1024);
      }
      std::printf(
          "(memory read bandwidth with %d threads: %.1f GB/s; KV cache %s: %s at n_ctx %lld)\n",
          n_threads, peak, KvTypeLabel(kv_type), kv, static_cast<long long>(max_ctx));
    }
  }
  return 0;
}

}  // namespace cli
