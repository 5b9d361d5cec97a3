// ember run: stream generated text to stdout; logs and timings to stderr.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.h"
#include "sampling_flags.h"

namespace cli {
namespace {

struct TokenRecord {
  int32_t id;
  float logprob;
  std::vector<ember_token_prob> top;
};

struct RunState {
  bool stream = true;
  bool record_probs = false;
  std::string text;
  std::vector<int32_t> tokens;
  std::vector<TokenRecord> records;
};

bool OnPiece(const char* piece, size_t len, int32_t /*token*/, void* user_data) {
  auto* st = static_cast<RunState*>(user_data);
  st->text.append(piece, len);
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

bool OnTokenInfo(const ember_token_info* info, void* user_data) {
  auto* st = static_cast<RunState*>(user_data);
  if (st->record_probs) {
    st->records.push_back({info->token, info->logprob,
                           std::vector<ember_token_prob>(info->top, info->top + info->n_top)});
  }
  return true;
}

std::string Piece(ember_model* model, int32_t id) {
  char buf[256];
  size_t n = 0;
  if (ember_token_to_piece(model, id, true, buf, sizeof(buf), &n) != EMBER_OK) return "";
  return std::string(buf, n);
}

struct ConsistencyState {
  std::vector<std::string> answers;
  std::string json_samples;
};

bool OnConsistencySample(const ember_consistency_sample* s, void* user_data) {
  auto* st = static_cast<ConsistencyState*>(user_data);
  st->answers.emplace_back(s->answer);
  std::fprintf(stderr, "ember: sample %d: answer '%s' (%d tokens, %s)\n", s->index + 1, s->answer,
               s->n_gen, ember_finish_reason_str(s->finish_reason));
  char head[96];
  std::snprintf(head, sizeof(head), "{\"index\":%d,\"n_gen\":%d,\"finish_reason\":\"%s\",",
                s->index, s->n_gen, ember_finish_reason_str(s->finish_reason));
  st->json_samples += (st->json_samples.empty() ? "" : ",") + std::string(head) + "\"answer\":\"" +
                      JsonEscape(s->answer) + "\",\"reasoning\":\"" + JsonEscape(s->reasoning) +
                      "\",\"content\":\"" + JsonEscape(s->content) + "\"}";
  return true;
}

// --self-consistency K: the majority answer on stdout, the votes on stderr
// (or everything as one JSON object).
int RunSelfConsistency(ember_session* session, const std::vector<int32_t>& ids,
                       const ember_generate_params& gp, int32_t k, bool json) {
  ConsistencyState st;
  std::string answer(4096, '\0');
  size_t needed = 0;
  int32_t votes = 0;
  ember_status s =
      ember_self_consistency(session, ids.data(), ids.size(), &gp, k, OnConsistencySample, &st,
                             answer.data(), answer.size(), &needed, &votes);
  Check(s, "self-consistency");
  answer.resize(needed - 1);
  // The tally as the library counts it: equal answers, empty ones not voting,
  // most votes first and ties in the order first reached.
  std::vector<std::pair<std::string, int>> tally;
  for (const std::string& a : st.answers) {
    if (a.empty()) continue;
    auto it = std::find_if(tally.begin(), tally.end(), [&](const auto& t) { return t.first == a; });
    if (it == tally.end()) {
      tally.emplace_back(a, 1);
    } else {
      ++it->second;
    }
  }
  std::stable_sort(tally.begin(), tally.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (json) {
    std::string out = "{\"answer\":\"" + JsonEscape(answer) +
                      "\",\"votes\":" + std::to_string(votes) + ",\"tally\":[";
    for (size_t i = 0; i < tally.size(); ++i) {
      out += (i ? "," : "") + std::string("{\"answer\":\"") + JsonEscape(tally[i].first) +
             "\",\"votes\":" + std::to_string(tally[i].second) + "}";
    }
    out += "],\"samples\":[" + st.json_samples + "]}\n";
    std::fputs(out.c_str(), stdout);
  } else {
    std::fprintf(stderr, "ember: votes:");
    for (const auto& [a, n] : tally) std::fprintf(stderr, " '%s' %d;", a.c_str(), n);
    std::fprintf(stderr, " %zu of %d samples gave an answer\n",
                 st.answers.size() -
                     static_cast<size_t>(std::count(st.answers.begin(), st.answers.end(), "")),
                 k);
    std::printf("%s\n", answer.c_str());
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace

int RunCommand(int argc, char** argv) {
  std::vector<OptionSpec> specs = {
      kModelOption,
      kPromptOption,
      kFileOption,
      {"--n-predict", "-n", "N", "tokens to generate (default 128)"},
      {"--ctx-size", "-c", "N", "context size in tokens (default: training context, at most 4096)"},
      kThreadsOption,
      kThreadsBatchOption,
      {"--batch-size", "-b", "N",
       "prompt tokens per forward chunk (default 256): fewer take less memory for activations"},
      {"--stop", "", "STR", "stop where STR begins; STR is not printed (repeatable)"},
      {"--ignore-eos", "", "", "keep generating after end-of-generation tokens"},
      {"--n-probs", "", "K", "with --json: each token's K most likely candidates"},
      {"--beams", "", "B", "beam search with B beams instead of sampling (1 = greedy)"},
      {"--length-penalty", "", "A", "beam score = logprob / length^A (default 1)"},
      {"--json", "", "", "print one JSON object at the end instead of streaming"},
      {"--chat", "", "",
       "send the prompt as a user message in the model's chat template (with --system, "
       "--template); generation ends at the end of the turn"},
      {"--system", "", "TEXT", "with --chat: a system message before it"},
      kTemplateOption,
      {"--self-consistency", "", "K",
       "sample K replies and print the final answer most of them reach, with the votes "
       "(reasoning split at the model's thinking markers; sample i uses --seed + i)"},
      {"--prompt-cache", "", "FILE",
       "load the session state from FILE if it exists, compute only the part of the prompt it "
       "does not hold, and save the state (prompt and reply) to FILE at the end"},
      {"--prompt-cache-ro", "", "", "with --prompt-cache: use FILE but do not update it"},
      kNumericsOption,
      kRepackOption,
  };
  for (OptionSpec& o : MmapOptions()) specs.push_back(std::move(o));
  for (OptionSpec& o : KvOptions(/*with_keep=*/true)) specs.push_back(std::move(o));
  for (OptionSpec& o : SpeculativeOptions()) specs.push_back(std::move(o));
  for (OptionSpec& o : SamplingOptions("temperature; 0 is greedy (default 0.8)")) {
    specs.push_back(std::move(o));
  }
  for (OptionSpec& o : GrammarOptions()) specs.push_back(std::move(o));
  Args args;
  if (!args.Parse("run", "[-m MODEL] (-p PROMPT | -f FILE) [options]", specs, argc, argv)) {
    return 0;
  }
  const std::string prompt = ReadPrompt(args);
  const int64_t n_predict = args.GetInt("--n-predict", 128, 0, 1 << 24);
  const int64_t n_ctx = args.GetInt("--ctx-size", 0, 0, 1 << 24);
  const int32_t n_threads = GetThreads(args, "--threads");
  const int32_t n_threads_batch = GetThreads(args, "--threads-batch");
  const int64_t n_batch = args.GetInt("--batch-size", 0, 1, 1 << 16);
  const int64_t n_probs = args.GetInt("--n-probs", 0, 0, 1000);
  const int64_t beams = args.GetInt("--beams", 0, 1, 64);
  const double length_penalty = args.GetDouble("--length-penalty", 1.0, 0.0, 10.0);
  const bool json = args.Has("--json");
  const int64_t consistency = args.GetInt("--self-consistency", 0, 1, 1 << 16);
  const bool chat = args.Has("--chat");
  const std::string system = args.Get("--system");
  if (!system.empty() && !chat) throw UsageError{"--system needs --chat"};
  std::string template_source, template_name;
  GetTemplate(args, &template_source, &template_name);
  if (args.Has("--template") && !chat) throw UsageError{"--template needs --chat"};
  Speculative spec;
  SetUpSpeculative(args, nullptr, ember_session_default_params(), &spec);  // flag errors first
  if (spec.on && (beams > 0 || consistency > 0)) {
    throw UsageError{"speculative decoding does not combine with --beams or --self-consistency"};
  }
  if (consistency > 0 && beams > 0) {
    throw UsageError{"--self-consistency samples; it does not combine with --beams"};
  }
  const std::string cache_path = args.Get("--prompt-cache");
  const bool cache_ro = args.Has("--prompt-cache-ro");
  if (args.Has("--prompt-cache") && cache_path.empty()) {
    throw UsageError{"--prompt-cache needs a file name"};
  }
  if (cache_ro && cache_path.empty())
    throw UsageError{"--prompt-cache-ro needs --prompt-cache FILE"};
  {
    ember_session_params probe = ember_session_default_params();
    ApplyKvOptions(args, 0, &probe);  // flag errors before the model loads
  }
  const std::vector<std::string> stops = args.GetAll("--stop");
  for (const std::string& s : stops) {
    if (s.empty()) throw UsageError{"--stop needs a non-empty string"};
  }
  const LogitBiases biases = ParseLogitBiases(args);
  ember_sampling_params sampling = SamplingParamsFromFlags(args, biases);
  const std::string sampler_order = args.Get("--samplers");
  if (args.Has("--samplers")) sampling.samplers = sampler_order.c_str();
  const std::string grammar = GrammarFromFlags(args);

  const ember_numerics numerics = GetNumerics(args);
  const std::string path = ResolveModelPath(args);
  auto t0 = std::chrono::steady_clock::now();
  ModelPtr model(LoadModel(path, false, numerics, GetFloatWeights(args), GetMmapMode(args)));
  ember_model_info info;
  Check(ember_model_get_info(model.get(), &info), "model info");
  std::fprintf(stderr, "ember: loaded %s (%s, %d layers, %.1f M params) in %.2f s\n", path.c_str(),
               info.architecture, info.n_layer, static_cast<double>(info.n_params) / 1e6,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

  // The sampler chain is built (and so validated) before any work. Beam
  // search applies no samplers, only a grammar (the chain carries it).
  SamplerPtr sampler;
  if (beams == 0 || !grammar.empty()) sampler.reset(CreateSampler(model.get(), sampling, grammar));

  // Special-token text in the prompt (e.g. a chat template) is parsed as
  // special tokens, as llama.cpp's tools do; BOS is added when the model says so.
  std::vector<int32_t> ids;
  if (chat) {
    std::vector<ember_chat_message> messages;
    if (!system.empty()) messages.push_back({"system", system.c_str()});
    messages.push_back({"user", prompt.c_str()});
    const char* src = template_source.empty() ? nullptr : template_source.c_str();
    const char* name = template_name.empty() ? nullptr : template_name.c_str();
    size_t n = 0;
    const ember_status s = ember_chat_prompt_tokens(model.get(), src, name, messages.data(),
                                                    messages.size(), true, nullptr, 0, &n);
    if (s != EMBER_OK && s != EMBER_ERR_BUFFER_TOO_SMALL) Check(s, "--chat");
    ids.resize(n);
    Check(ember_chat_prompt_tokens(model.get(), src, name, messages.data(), messages.size(), true,
                                   ids.data(), ids.size(), &n),
          "--chat");
  } else {
    ids = Tokenize(model.get(), prompt, true, true);
  }
  if (ids.empty()) throw UsageError{"the prompt has no tokens"};

  ember_session_params sp = ember_session_default_params();
  sp.n_ctx = static_cast<int32_t>(n_ctx);
  sp.n_threads = n_threads;
  sp.n_threads_batch = n_threads_batch;
  sp.n_batch = static_cast<int32_t>(n_batch);
  ApplyKvOptions(args, static_cast<int32_t>(ids.size()), &sp);
  // Beams share the prompt's rows, which sliding-window rings cannot.
  if (beams > 0) sp.swa_full = true;
  ember_session* raw_session = nullptr;
  Check(CreateSession(model.get(), sp, args, &raw_session), "session");
  SessionPtr session(raw_session);
  SetUpSpeculative(args, model.get(), sp, &spec);
  std::fprintf(stderr, "ember: %s; KV cache %s, %.1f MiB\n",
               DescribeThreads(session.get(), n_threads, n_threads_batch).c_str(),
               KvTypeLabel(sp.kv_type),
               static_cast<double>(ember_session_kv_bytes(session.get())) / (1024.0 * 1024.0));
  if (!cache_path.empty()) {
    if (std::FILE* f = std::fopen(cache_path.c_str(), "rb")) {
      std::fclose(f);
      const auto t_load = std::chrono::steady_clock::now();
      if (ember_session_load(session.get(), cache_path.c_str()) != EMBER_OK) {
        throw UsageError{std::string("--prompt-cache: ") + ember_last_error() +
                         " (remove the file to start a new cache)"};
      }
      std::fprintf(
          stderr, "ember: prompt cache: loaded %d tokens from %s in %.3f s\n",
          ember_session_n_past(session.get()), cache_path.c_str(),
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t_load).count());
    } else {
      std::fprintf(stderr, "ember: prompt cache: %s does not exist yet; it will be written\n",
                   cache_path.c_str());
    }
  }

  std::vector<const char*> stop_ptrs;
  for (const std::string& s : stops) stop_ptrs.push_back(s.c_str());
  ember_generate_params gp = ember_generate_default_params();
  gp.n_predict = static_cast<int32_t>(n_predict);
  gp.sampler = sampler.get();
  gp.ignore_eos = args.Has("--ignore-eos");
  gp.stop = stop_ptrs.data();
  gp.n_stop = stop_ptrs.size();
  gp.n_probs = static_cast<int32_t>(n_probs);
  gp.logprobs = json;  // only --json reports them
  gp.beams = static_cast<int32_t>(beams);
  gp.length_penalty = static_cast<float>(length_penalty);
  gp.on_token = OnToken;
  gp.on_token_info = OnTokenInfo;
  // With a prompt cache, the prompt is matched against what the cache holds.
  gp.reuse_prefix = !cache_path.empty();
  if (consistency > 0) {
    gp.seed = sampling.seed;
    return RunSelfConsistency(session.get(), ids, gp, static_cast<int32_t>(consistency), json);
  }
  RunState st;
  st.stream = !json;
  st.record_probs = json && n_probs > 0;
  ember_generate_stats stats{};
  ember_speculative_stats spec_stats{};
  if (spec.on) {
    Check(ember_generate_speculative(session.get(), ids.data(), ids.size(), &gp, &spec.params,
                                     OnPiece, &st, &stats, &spec_stats),
          "generate");
  } else {
    Check(ember_generate(session.get(), ids.data(), ids.size(), &gp, OnPiece, &st, &stats),
          "generate");
  }
  if (!cache_path.empty()) {
    std::fprintf(stderr, "ember: prompt cache: reused %d of %d prompt tokens\n", stats.n_reused,
                 stats.n_prompt);
    if (!cache_ro) {
      Check(ember_session_save(session.get(), cache_path.c_str()), "--prompt-cache");
      std::fprintf(stderr, "ember: prompt cache: saved %d tokens to %s\n",
                   ember_session_n_past(session.get()), cache_path.c_str());
    }
  }

  if (json) {
    std::string out = "{\"text\":\"" + JsonEscape(st.text) + "\",\"tokens\":[";
    for (size_t i = 0; i < st.tokens.size(); ++i) {
      out += (i ? "," : "") + std::to_string(st.tokens[i]);
    }
    char tail[320];
    std::snprintf(tail, sizeof(tail), "],\"n_prompt\":%d,", stats.n_prompt);
    out += tail;
    if (!cache_path.empty()) out += "\"n_reused\":" + std::to_string(stats.n_reused) + ",";
    std::snprintf(tail, sizeof(tail), "\"n_gen\":%d,\"finish_reason\":\"%s\",", stats.n_gen,
                  ember_finish_reason_str(stats.finish_reason));
    out += tail;
    if (stats.stop_index >= 0) {
      out += "\"stop\":\"" + JsonEscape(stops[static_cast<size_t>(stats.stop_index)]) + "\",";
    }
    std::snprintf(tail, sizeof(tail),
                  "\"logprob\":%.6f,\"prefill_tok_s\":%.2f,\"decode_tok_s\":%.2f", stats.logprob,
                  stats.prefill_tokens_per_second, stats.decode_tokens_per_second);
    out += tail;
    if (spec.on) out += SpeculativeJson(spec_stats);
    if (st.record_probs) {
      out += ",\"probs\":[";
      for (size_t i = 0; i < st.records.size(); ++i) {
        const TokenRecord& r = st.records[i];
        std::snprintf(tail, sizeof(tail), "{\"id\":%d,\"logprob\":%.6f,\"piece\":\"", r.id,
                      r.logprob);
        out += (i ? "," : "") + std::string(tail) + JsonEscape(Piece(model.get(), r.id)) +
               "\",\"top\":[";
        for (size_t j = 0; j < r.top.size(); ++j) {
          std::snprintf(tail, sizeof(tail), "{\"id\":%d,\"p\":%.6f,\"piece\":\"", r.top[j].id,
                        r.top[j].p);
          out += (j ? "," : "") + std::string(tail) + JsonEscape(Piece(model.get(), r.top[j].id)) +
                 "\"}";
        }
        out += "]}";
      }
      out += "]";
    }
    out += "}\n";
    std::fputs(out.c_str(), stdout);
  } else {
    std::fputs("\n", stdout);
  }
  std::fflush(stdout);
  std::fprintf(stderr,
               "ember: prompt %d tokens (%d from the cache) in %.3f s (%.1f tok/s, %d threads); "
               "generated %d tokens in %.3f s (%.1f tok/s, %d threads); finish: %s",
               stats.n_prompt, stats.n_reused, stats.prefill_seconds,
               stats.prefill_tokens_per_second, ember_session_n_threads_batch(session.get()),
               stats.n_gen, stats.decode_seconds, stats.decode_tokens_per_second,
               ember_session_n_threads(session.get()),
               ember_finish_reason_str(stats.finish_reason));
  if (spec.on) std::fputs(DescribeSpeculative(spec_stats).c_str(), stderr);
  const int32_t dropped = ember_session_n_dropped(session.get());
  if (dropped > 0) {
    std::fprintf(stderr, "; context shifts dropped %d tokens (kept the first %d)", dropped,
                 sp.n_keep);
  }
  std::fputs("\n", stderr);
  return 0;
}

}  // namespace cli
