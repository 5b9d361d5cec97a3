// ember_soak: a long run through the C API doing what a long-lived process
// does with a model, while the process's memory (VmRSS) and open descriptors
// are sampled: a leak shows as growth after the warm-up. scripts/soak.sh runs
// it; docs/RELIABILITY.md records the result.
//
//   ember_soak -m MODEL [--tokens N] [--ctx N] [--threads N] [--warmup N]
//              [--sample-every N] [--csv OUT.csv] [--state-file PATH]
//              [--max-growth-kib N]
//
// Rounds cycle through these scenarios, each generating tokens (the count is
// of generated tokens only):
//   generate     append to a small context (n_ctx 256 by default), so the
//                context shifts every few rounds;
//   state        save the session to a file, free it, create a new session,
//                load the file and go on from it;
//   reuse        a new prompt that shares the context's first tokens
//                (reuse_prefix: the shared prefix is kept, the rest computed);
//   chat         a turn of a chat (its prefix reused, old turns dropped when
//                the context is full); every 8th chat round starts over, every
//                32nd frees the chat and its session and makes new ones;
//   speculative  prompt lookup drafts (n-grams of the context);
//   grammar      output constrained by a JSON schema's grammar.
// Each round uses the next of several sampler chains (greedy, temperature
// draw, top-k/top-p/min-p, penalties and DRY, typical and XTC, mirostat v2,
// top-n-sigma) and asks for the top candidates' log-probabilities.
//
// Exit status: 0 when the RSS grew by at most --max-growth-kib (default 1024)
// from the end of the warm-up to the end and the descriptors did not change;
// 1 otherwise or when a call failed; 2 for bad arguments.
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ember.h"

namespace {

struct Options {
  std::string model;
  int64_t tokens = 100000;
  int32_t n_ctx = 256;
  int32_t threads = 0;
  int64_t warmup = -1;  // -1: a tenth of the tokens
  int64_t sample_every = 2000;
  std::string csv;
  std::string state_file;
  int64_t max_growth_kib = 1024;
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "ember_soak: %s: %s\n", what.c_str(), ember_last_error());
  std::exit(1);
}

void Check(ember_status s, const std::string& what) {
  if (s != EMBER_OK) Die(what + " (" + ember_status_str(s) + ")");
}

int64_t RssKib() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  int64_t kib = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, "VmRSS:", 6) == 0) kib = std::strtoll(line + 6, nullptr, 10);
  }
  std::fclose(f);
  return kib;
}

int OpenFds() {
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(d);
  return n - 1;  // not the descriptor opendir itself holds
}

// The sampler chains the rounds take in turn.
constexpr int kChains = 7;

const char* ChainName(int i) {
  static const char* kNames[kChains] = {"greedy",        "temperature", "top-k/top-p/min-p",
                                        "penalties+dry", "typical+xtc", "mirostat-v2",
                                        "top-n-sigma"};
  return kNames[i];
}

ember_sampler* MakeChain(const ember_model* model, int i, uint64_t seed) {
  ember_sampling_params p = ember_sampling_default_params();
  p.seed = seed;
  switch (i) {
    case 0:
      p.temperature = 0;
      break;
    case 1:
      p.top_k = 0;
      p.top_p = 1;
      p.min_p = 0;
      p.temperature = 0.9f;
      break;
    case 2:
      p.top_k = 40;
      p.top_p = 0.9f;
      p.min_p = 0.05f;
      p.temperature = 0.8f;
      break;
    case 3:
      p.penalty_last_n = 64;
      p.repeat_penalty = 1.1f;
      p.presence_penalty = 0.2f;
      p.frequency_penalty = 0.1f;
      p.dry_multiplier = 0.8f;
      break;
    case 4:
      p.typical_p = 0.9f;
      p.xtc_probability = 0.5f;
      p.xtc_threshold = 0.1f;
      break;
    case 5:
      p.mirostat = 2;
      break;
    default:
      p.top_n_sigma = 1.5f;
      break;
  }
  ember_sampler* s = nullptr;
  Check(ember_sampler_from_params(model, 0, &p, &s), std::string("sampler ") + ChainName(i));
  return s;
}

std::vector<int32_t> Tokenize(const ember_model* model, const std::string& text) {
  std::vector<int32_t> ids(text.size() + 8);
  size_t n = 0;
  Check(ember_tokenize(model, text.data(), text.size(), true, false, ids.data(), ids.size(), &n),
        "tokenize");
  ids.resize(n);
  return ids;
}

// What the callbacks of a round see: the generated ids, and the sum of the
// top candidates' probabilities (so that on_token_info's data is read).
struct RoundData {
  std::vector<int32_t> tokens;
  double top_p_sum = 0;
};

bool OnToken(int32_t token, void* user) {
  static_cast<RoundData*>(user)->tokens.push_back(token);
  return true;
}

bool OnTokenInfo(const ember_token_info* info, void* user) {
  static_cast<RoundData*>(user)->top_p_sum +=
      info->n_top > 0 ? static_cast<double>(info->top[0].p) : 0.0;
  return true;
}

const char* const kTopics[] = {"the sea",    "a lighthouse", "bread",     "the moon",
                               "a library",  "winter",       "a bicycle", "trains",
                               "old clocks", "a garden",     "rain",      "mountains"};
constexpr int kTopicCount = sizeof(kTopics) / sizeof(kTopics[0]);

const char* kSchema =
    "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\", \"maxLength\": 12}, "
    "\"age\": {\"type\": \"integer\"}}, \"required\": [\"name\", \"age\"], "
    "\"additionalProperties\": false}";

struct Counts {
  int64_t rounds[6] = {0, 0, 0, 0, 0, 0};
  int64_t tokens[6] = {0, 0, 0, 0, 0, 0};
  double seconds[6] = {0, 0, 0, 0, 0, 0};
};
const char* kScenario[6] = {"generate", "state", "reuse", "chat", "speculative", "grammar"};

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ember_soak: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "-m" || a == "--model") {
      o->model = value();
    } else if (a == "--tokens") {
      o->tokens = std::atoll(value().c_str());
    } else if (a == "--ctx" || a == "-c") {
      o->n_ctx = std::atoi(value().c_str());
    } else if (a == "--threads" || a == "-t") {
      o->threads = std::atoi(value().c_str());
    } else if (a == "--warmup") {
      o->warmup = std::atoll(value().c_str());
    } else if (a == "--sample-every") {
      o->sample_every = std::max<int64_t>(1, std::atoll(value().c_str()));
    } else if (a == "--csv") {
      o->csv = value();
    } else if (a == "--state-file") {
      o->state_file = value();
    } else if (a == "--max-growth-kib") {
      o->max_growth_kib = std::atoll(value().c_str());
    } else {
      std::fprintf(stderr,
                   "usage: ember_soak -m MODEL [--tokens N] [--ctx N] [--threads N] "
                   "[--warmup N] [--sample-every N] [--csv OUT] [--state-file PATH] "
                   "[--max-growth-kib N]\n");
      return false;
    }
  }
  if (o->model.empty() || o->tokens <= 0 || o->n_ctx < 64) {
    std::fprintf(stderr, "ember_soak: -m MODEL, --tokens > 0 and --ctx >= 64 are needed\n");
    return false;
  }
  if (o->warmup < 0) o->warmup = o->tokens / 10;
  if (o->state_file.empty())
    o->state_file = "/tmp/ember_soak_" + std::to_string(getpid()) + ".state";
  return true;
}

struct Sample {
  int64_t tokens;
  double seconds;
  int64_t rss_kib;
  int fds;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, &o)) return 2;
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };

  ember_model* model = nullptr;
  Check(ember_model_load(o.model.c_str(), nullptr, &model), "loading " + o.model);
  ember_session_params sp = ember_session_default_params();
  sp.n_ctx = o.n_ctx;
  sp.n_threads = o.threads;
  sp.n_batch = 64;
  ember_session* session = nullptr;
  Check(ember_session_create(model, &sp, &session), "session");
  ember_session* chat_session = nullptr;
  ember_chat* chat = nullptr;
  auto new_chat = [&] {
    ember_chat_free(chat);
    ember_session_free(chat_session);
    Check(ember_session_create(model, &sp, &chat_session), "chat session");
    ember_chat_params cp = ember_chat_default_params();
    cp.system = "You are a helpful assistant. Answer in a few sentences.";
    Check(ember_chat_create(chat_session, &cp, &chat), "chat");
  };
  new_chat();
  std::vector<char> gbnf(1 << 16);
  size_t gbnf_len = 0;
  Check(ember_json_schema_to_grammar(kSchema, gbnf.data(), gbnf.size(), &gbnf_len),
        "JSON schema to grammar");

  std::FILE* csv = nullptr;
  if (!o.csv.empty()) {
    csv = std::fopen(o.csv.c_str(), "w");
    if (csv == nullptr) {
      std::fprintf(stderr, "ember_soak: cannot write %s\n", o.csv.c_str());
      return 2;
    }
    std::fprintf(csv, "tokens,seconds,rss_kib,fds\n");
  }
  std::vector<Sample> samples;
  auto sample = [&](int64_t tokens) {
    samples.push_back({tokens, seconds(), RssKib(), OpenFds()});
    const Sample& s = samples.back();
    if (csv != nullptr) {
      std::fprintf(csv, "%lld,%.1f,%lld,%d\n", static_cast<long long>(s.tokens), s.seconds,
                   static_cast<long long>(s.rss_kib), s.fds);
      std::fflush(csv);
    }
    std::printf("%8lld tokens %7.0f s  RSS %8.1f MiB  fds %d\n", static_cast<long long>(s.tokens),
                s.seconds, static_cast<double>(s.rss_kib) / 1024.0, s.fds);
    std::fflush(stdout);
  };
  sample(0);

  Counts counts;
  int64_t total = 0, next_sample = o.sample_every, dropped = 0, reused = 0;
  int64_t round = 0;
  RoundData data;
  while (total < o.tokens) {
    const int scenario = static_cast<int>(round % 6);
    const int chain_i = static_cast<int>((round / 6 + round) % kChains);
    const double round_start = seconds();
    const int32_t dropped_before = ember_session_n_dropped(session);
    ember_sampler* chain = MakeChain(model, chain_i, static_cast<uint64_t>(round));
    ember_generate_params gp = ember_generate_default_params();
    gp.sampler = chain;
    gp.n_predict = 96;
    gp.ignore_eos = scenario == 0;  // the generate rounds fill the context
    gp.n_probs = 4;
    gp.on_token = OnToken;
    gp.on_token_info = OnTokenInfo;
    data.tokens.clear();
    const std::string topic = kTopics[round % kTopicCount];
    ember_generate_stats st{};
    switch (scenario) {
      case 0: {  // append: the context shifts every few rounds
        const std::vector<int32_t> p = Tokenize(model, " Now a few words about " + topic + ".");
        Check(ember_generate(session, p.data(), p.size(), &gp, nullptr, &data, &st), "generate");
        break;
      }
      case 1: {  // save, a new session, load, go on
        Check(ember_session_save(session, o.state_file.c_str()), "save state");
        const int32_t n_past = ember_session_n_past(session);
        ember_session_free(session);
        session = nullptr;
        Check(ember_session_create(model, &sp, &session), "session after save");
        Check(ember_session_load(session, o.state_file.c_str()), "load state");
        if (ember_session_n_past(session) != n_past) {
          std::fprintf(stderr, "ember_soak: the loaded state has %d tokens, %d were saved\n",
                       ember_session_n_past(session), n_past);
          return 1;
        }
        const std::vector<int32_t> p = Tokenize(model, " And then");
        Check(ember_generate(session, p.data(), p.size(), &gp, nullptr, &data, &st),
              "generate after load");
        break;
      }
      case 2: {  // two turns, the second sharing all of the first
        // The first shares with the context what the reuse rounds put first
        // (all of that text, or after a context shift the first n_keep
        // tokens); the second is the first turn, its reply and a new
        // question: only the question is computed.
        std::vector<int32_t> prompt =
            Tokenize(model, "A conversation about many things, one at a time.");
        const int32_t bos = prompt[0];
        auto append = [&](const std::string& text) {
          const std::vector<int32_t> q = Tokenize(model, text);
          const size_t skip = q.size() > 1 && q[0] == bos ? 1 : 0;  // a second BOS
          prompt.insert(prompt.end(), q.begin() + static_cast<std::ptrdiff_t>(skip), q.end());
        };
        append(" Tell me about " + topic + ":");
        gp.reuse_prefix = true;
        gp.n_predict = 48;
        ember_generate_stats first{};
        Check(ember_generate(session, prompt.data(), prompt.size(), &gp, nullptr, &data, &first),
              "generate reusing the prefix");
        prompt.insert(prompt.end(), data.tokens.begin(), data.tokens.end());
        append(" And what else?");
        Check(ember_generate(session, prompt.data(), prompt.size(), &gp, nullptr, &data, &st),
              "the next turn, reusing the first");
        reused += first.n_reused + st.n_reused;
        st.n_gen += first.n_gen;
        break;
      }
      case 3: {  // a chat turn
        if (round % (6 * 32) == 3) {
          new_chat();
        } else if (round % (6 * 8) == 3) {
          ember_chat_reset(chat);
        }
        ember_chat_stats cs{};
        Check(ember_chat_send(chat, ("Tell me something about " + topic + ".").c_str(), &gp,
                              nullptr, &data, &cs),
              "chat");
        st = cs.gen;
        break;
      }
      case 4: {  // prompt-lookup speculative decoding
        ember_speculative_params spec = ember_speculative_default_params();
        spec.lookup = 3;
        ember_speculative_stats ss{};
        const std::vector<int32_t> p = Tokenize(model, " Once more, about " + topic + ",");
        gp.on_token_info = nullptr;  // not with speculative decoding
        Check(ember_generate_speculative(session, p.data(), p.size(), &gp, &spec, nullptr, &data,
                                         &st, &ss),
              "speculative generate");
        break;
      }
      default: {  // JSON-schema output
        ember_sampler* g = nullptr;
        ember_sampling_params p = ember_sampling_default_params();
        p.seed = static_cast<uint64_t>(round);
        Check(ember_sampler_from_params_grammar(model, &p, gbnf.data(), nullptr, &g),
              "grammar sampler");
        gp.sampler = g;
        gp.n_predict = 64;
        const std::vector<int32_t> prompt = Tokenize(model, "A person as JSON:");
        Check(ember_generate(session, prompt.data(), prompt.size(), &gp, nullptr, &data, &st),
              "grammar generate");
        ember_sampler_free(g);
        break;
      }
    }
    ember_sampler_free(chain);
    // (a state round's new session starts with none dropped)
    dropped += std::max(0, ember_session_n_dropped(session) - (scenario == 1 ? 0 : dropped_before));
    counts.rounds[scenario] += 1;
    counts.tokens[scenario] += st.n_gen;
    counts.seconds[scenario] += seconds() - round_start;
    total += st.n_gen;
    ++round;
    while (total >= next_sample) {
      sample(total);
      next_sample += o.sample_every;
    }
  }
  if (samples.back().tokens != total) sample(total);
  const double elapsed = seconds();

  ember_chat_free(chat);
  ember_session_free(chat_session);
  ember_session_free(session);
  ember_model_free(model);
  std::remove(o.state_file.c_str());
  if (csv != nullptr) std::fclose(csv);

  // Summary: the RSS after the warm-up against the end and the maximum.
  const Sample* warm = &samples.back();
  for (const Sample& s : samples) {
    if (s.tokens >= o.warmup) {
      warm = &s;
      break;
    }
  }
  int64_t max_rss = 0;
  for (const Sample& s : samples) {
    if (s.tokens >= warm->tokens) max_rss = std::max(max_rss, s.rss_kib);
  }
  const Sample& end = samples.back();
  const int64_t growth = end.rss_kib - warm->rss_kib;
  std::printf(
      "\nsoak: %lld tokens in %.0f s (%.1f tokens/s), %lld rounds:", static_cast<long long>(total),
      elapsed, static_cast<double>(total) / elapsed, static_cast<long long>(round));
  for (int i = 0; i < 6; ++i) {
    std::printf(" %s %lld (%lld tokens, %.0f s)%s", kScenario[i],
                static_cast<long long>(counts.rounds[i]), static_cast<long long>(counts.tokens[i]),
                counts.seconds[i], i < 5 ? "," : "\n");
  }
  std::printf("soak: sampler chains in turn: ");
  for (int i = 0; i < kChains; ++i)
    std::printf("%s%s", ChainName(i), i + 1 < kChains ? ", " : "\n");
  std::printf("soak: tokens dropped by context shifts %lld, prompt tokens reused %lld\n",
              static_cast<long long>(dropped), static_cast<long long>(reused));
  std::printf(
      "soak: RSS after the warm-up (%lld tokens) %.1f MiB, at the end %.1f MiB, max %.1f MiB: "
      "growth %+lld KiB (limit %lld KiB)\n",
      static_cast<long long>(warm->tokens), static_cast<double>(warm->rss_kib) / 1024.0,
      static_cast<double>(end.rss_kib) / 1024.0, static_cast<double>(max_rss) / 1024.0,
      static_cast<long long>(growth), static_cast<long long>(o.max_growth_kib));
  std::printf("soak: open descriptors at the start %d, after the warm-up %d, at the end %d\n",
              samples.front().fds, warm->fds, end.fds);
  const bool ok = growth <= o.max_growth_kib && end.fds == warm->fds;
  std::printf("soak: %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
