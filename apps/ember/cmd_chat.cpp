// ember chat: a conversation with an instruct model in the terminal.
//
// Interactive when stdin is a terminal: line editing and history (libedit),
// the reply streams as it is generated, Ctrl-C stops the reply (not the
// program), Ctrl-D or /exit ends. Otherwise each line of stdin is a message
// and only the replies go to stdout (one per line with --json), so scripts
// and tests can drive it: `echo "Hi" | ember chat -m MODEL`.
#include <editline/readline.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"
#include "sampling_flags.h"

namespace cli {
namespace {

struct ChatDeleter {
  void operator()(ember_chat* c) const { ember_chat_free(c); }
};

// Ctrl-C: while a reply is generated it cancels the reply; at the prompt it
// only marks the line as abandoned.
std::atomic<ember_session*> g_generating{nullptr};
std::atomic<bool> g_interrupted{false};

extern "C" void OnSigint(int) {
  g_interrupted.store(true);
  if (ember_session* s = g_generating.load()) ember_session_cancel(s);
}

enum class ReasoningView { kShow, kHide };

struct ReplyPrinter {
  bool tty = false;
  bool json = false;
  ReasoningView view = ReasoningView::kShow;
  bool in_reasoning = false;  // the reasoning channel is open on screen
  std::string content, reasoning;

  void Piece(const char* p, size_t n, bool is_reasoning) {
    (is_reasoning ? reasoning : content).append(p, n);
    if (json) return;
    if (is_reasoning) {
      if (view == ReasoningView::kHide) return;
      if (!in_reasoning) std::fputs(tty ? "\x1b[2m" : "<think>\n", stdout);
      in_reasoning = true;
    } else if (in_reasoning) {
      std::fputs(tty ? "\x1b[0m\n\n" : "\n</think>\n\n", stdout);
      in_reasoning = false;
    }
    std::fwrite(p, 1, n, stdout);
    std::fflush(stdout);
  }
  void End() {
    if (json) return;
    if (in_reasoning) std::fputs(tty ? "\x1b[0m" : "\n</think>", stdout);
    in_reasoning = false;
    std::fputs("\n", stdout);
    std::fflush(stdout);
  }
};

bool OnChatPiece(const char* piece, size_t len, bool reasoning, void* user_data) {
  static_cast<ReplyPrinter*>(user_data)->Piece(piece, len, reasoning);
  return true;
}

// A line from the terminal (libedit) or from a pipe; false at the end.
bool ReadLine(bool tty, const char* prompt, std::string* line) {
  if (!tty) return static_cast<bool>(std::getline(std::cin, *line));
  char* raw = readline(prompt);
  if (raw == nullptr) return false;
  *line = raw;
  std::free(raw);
  return true;
}

std::string HistoryPath() {
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return "";
  const std::string dir = std::string(home) + "/.cache/ember";
  ::mkdir((std::string(home) + "/.cache").c_str(), 0755);
  ::mkdir(dir.c_str(), 0755);
  return dir + "/chat_history";
}

const char* kHelp =
    "  /reset        forget the conversation (the system message stays)\n"
    "  /save FILE    save the conversation (JSON)\n"
    "  /load FILE    continue a saved conversation\n"
    "  /stats        the last reply's timings and the context in use\n"
    "  /help         this list\n"
    "  /exit         quit (also Ctrl-D)\n"
    "  A line ending in \\ continues on the next line. Ctrl-C stops a reply.\n";

}  // namespace

int ChatCommand(int argc, char** argv) {
  std::vector<OptionSpec> specs = {
      kModelOption,
      {"--system", "", "TEXT", "the system message"},
      kTemplateOption,
      {"--n-predict", "-n", "N", "tokens per reply at most (default: until the end of the turn)"},
      {"--ctx-size", "-c", "N", "context size in tokens (default: training context, at most 4096)"},
      kThreadsOption,
      kThreadsBatchOption,
      {"--batch-size", "-b", "N", "prompt tokens per forward chunk (default 256)"},
      {"--reasoning", "", "show|hide",
       "a reasoning model's thinking: shown (dimmed on a terminal; between <think> markers "
       "otherwise) or hidden (default show)"},
      {"--reasoning-budget", "", "N",
       "close the thinking after N tokens and let the model answer (-1: no limit)"},
      {"--enable-thinking", "", "0|1", "the template variable enable_thinking (default: unset)"},
      {"--ignore-eos", "", "", "replies do not end at end-of-turn tokens (for tests: -n decides)"},
      {"--json", "", "", "print each reply as one JSON line (content, reasoning, timings)"},
      {"--verbose-prompt", "", "",
       "with --json: also each turn's prompt tokens (the whole conversation as templated)"},
      kRepackOption,
  };
  for (OptionSpec& o : MmapOptions()) specs.push_back(std::move(o));
  for (OptionSpec& o : KvOptions(/*with_keep=*/false)) {
    if (o.name != "--no-context-shift") specs.push_back(std::move(o));
  }
  for (OptionSpec& o : SamplingOptions("temperature; 0 is greedy (default 0.8)")) {
    specs.push_back(std::move(o));
  }
  for (OptionSpec& o : SpeculativeOptions()) specs.push_back(std::move(o));
  for (OptionSpec& o : GrammarOptions()) specs.push_back(std::move(o));
  Args args;
  if (!args.Parse("chat", "[-m MODEL] [--system TEXT] [--template NAME|FILE] [options]", specs,
                  argc, argv)) {
    return 0;
  }
  const int64_t n_predict = args.GetInt("--n-predict", -1, -1, 1 << 24);
  const int64_t n_ctx = args.GetInt("--ctx-size", 0, 0, 1 << 24);
  const int32_t n_threads = GetThreads(args, "--threads");
  const int32_t n_threads_batch = GetThreads(args, "--threads-batch");
  const int64_t n_batch = args.GetInt("--batch-size", 0, 1, 1 << 16);
  const int64_t budget = args.GetInt("--reasoning-budget", -1, -1, 1 << 24);
  const int64_t enable_thinking = args.GetInt("--enable-thinking", -1, 0, 1);
  const bool json = args.Has("--json");
  const bool verbose_prompt = args.Has("--verbose-prompt");
  const std::string view = args.Get("--reasoning", "show");
  if (view != "show" && view != "hide") {
    throw UsageError{"--reasoning expects show or hide, got '" + view + "'"};
  }
  ember_session_params sp = ember_session_default_params();
  ApplyKvOptions(args, 0, &sp);  // flag errors before the model loads
  sp.context_shift = false;      // the chat drops whole turns instead
  sp.n_ctx = static_cast<int32_t>(n_ctx);
  sp.n_threads = n_threads;
  sp.n_threads_batch = n_threads_batch;
  sp.n_batch = static_cast<int32_t>(n_batch);
  const LogitBiases biases = ParseLogitBiases(args);
  ember_sampling_params sampling = SamplingParamsFromFlags(args, biases);
  const std::string sampler_order = args.Get("--samplers");
  if (args.Has("--samplers")) sampling.samplers = sampler_order.c_str();
  const std::string grammar = GrammarFromFlags(args);  // each reply follows it

  std::string template_source, template_name;
  GetTemplate(args, &template_source, &template_name);
  Speculative spec;
  SetUpSpeculative(args, nullptr, sp, &spec);  // flag errors before the model loads

  const std::string path = ResolveModelPath(args);
  ModelPtr model(
      LoadModel(path, false, EMBER_NUMERICS_EMBER, GetFloatWeights(args), GetMmapMode(args)));
  SamplerPtr sampler(CreateSampler(model.get(), sampling, grammar));
  ember_session* raw_session = nullptr;
  Check(CreateSession(model.get(), sp, args, &raw_session), "session");
  SessionPtr session(raw_session);

  ember_chat_params cp = ember_chat_default_params();
  const std::string system = args.Get("--system");
  cp.system = system.c_str();
  cp.template_source = template_source.empty() ? nullptr : template_source.c_str();
  cp.template_name = template_name.empty() ? nullptr : template_name.c_str();
  cp.reasoning_budget = static_cast<int32_t>(budget);
  cp.enable_thinking = static_cast<int32_t>(enable_thinking);
  ember_chat* raw_chat = nullptr;
  if (ember_chat_create(session.get(), &cp, &raw_chat) != EMBER_OK) {
    throw UsageError{std::string(ember_last_error()) +
                     (template_source.empty() ? " (give a template with --template FILE)" : "")};
  }
  std::unique_ptr<ember_chat, ChatDeleter> chat(raw_chat);
  SetUpSpeculative(args, model.get(), sp, &spec);
  if (spec.on) Check(ember_chat_set_speculative(chat.get(), &spec.params), "speculative decoding");

  const bool tty = isatty(STDIN_FILENO) != 0;
  ReplyPrinter printer;
  printer.tty = tty && isatty(STDOUT_FILENO) != 0;
  printer.json = json;
  printer.view = view == "hide" ? ReasoningView::kHide : ReasoningView::kShow;
  std::fprintf(stderr, "ember: chat with %s; %s; context %d tokens; template: %s\n", path.c_str(),
               DescribeThreads(session.get(), n_threads, n_threads_batch).c_str(),
               ember_session_n_ctx(session.get()), ember_chat_template_name(chat.get()));
  std::string history;
  if (tty) {
    std::fputs("Type a message; /help lists the commands, Ctrl-D ends.\n", stderr);
    history = HistoryPath();
    if (!history.empty()) read_history(history.c_str());
  }

  struct sigaction sa {};
  sa.sa_handler = OnSigint;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_sa {};
  sigaction(SIGINT, &sa, &old_sa);

  ember_chat_stats last{};
  bool have_last = false;
  int status = 0;
  std::string line;
  for (;;) {
    g_interrupted.store(false);
    std::string message;
    bool eof = false;
    for (bool first = true;; first = false) {
      if (!ReadLine(tty, first ? "> " : ". ", &line)) {
        eof = true;
        break;
      }
      if (!line.empty() && line.back() == '\r') line.pop_back();
      const bool more = !line.empty() && line.back() == '\\';
      if (more) line.pop_back();
      message += (first ? "" : "\n") + line;
      if (!more) break;
    }
    if (tty && g_interrupted.load()) {
      // Ctrl-C at the prompt (libedit's readline then returns as at the end
      // of input): drop the line and ask again.
      std::fputs("\n", stderr);
      continue;
    }
    if (eof && message.empty()) break;
    if (message.find_first_not_of(" \t\n") == std::string::npos) {
      if (eof) break;
      continue;
    }
    if (tty) add_history(message.c_str());

    if (message[0] == '/') {
      const size_t sp_at = message.find(' ');
      const std::string cmd = message.substr(0, sp_at);
      std::string arg = sp_at == std::string::npos ? "" : message.substr(sp_at + 1);
      while (!arg.empty() && (arg.back() == ' ' || arg.back() == '\n')) arg.pop_back();
      if (cmd == "/exit" || cmd == "/quit") break;
      if (cmd == "/help") {
        std::fputs(kHelp, stderr);
      } else if (cmd == "/reset") {
        ember_chat_reset(chat.get());
        std::fputs("ember: the conversation is reset\n", stderr);
      } else if (cmd == "/save" || cmd == "/load") {
        if (arg.empty()) {
          std::fprintf(stderr, "ember: %s needs a file name\n", cmd.c_str());
        } else if ((cmd == "/save" ? ember_chat_save(chat.get(), arg.c_str())
                                   : ember_chat_load(chat.get(), arg.c_str())) != EMBER_OK) {
          std::fprintf(stderr, "ember: %s: %s\n", cmd.c_str(), ember_last_error());
        } else {
          std::fprintf(stderr, "ember: %s %zu messages %s %s\n",
                       cmd == "/save" ? "saved" : "loaded", ember_chat_n_messages(chat.get()),
                       cmd == "/save" ? "to" : "from", arg.c_str());
        }
      } else if (cmd == "/stats") {
        if (have_last) {
          std::fprintf(stderr,
                       "ember: last reply: prompt %d tokens, %d from the cache, first token after "
                       "%.3f s; %d tokens at %.1f tok/s (%d reasoning); finish: %s\n",
                       last.gen.n_prompt, last.gen.n_reused, last.first_token_seconds,
                       last.gen.n_gen, last.gen.decode_tokens_per_second, last.n_reasoning,
                       ember_finish_reason_str(last.gen.finish_reason));
        }
        std::fprintf(stderr, "ember: %zu messages; context %d of %d tokens; KV cache %.1f MiB\n",
                     ember_chat_n_messages(chat.get()), ember_session_n_past(session.get()),
                     ember_session_n_ctx(session.get()),
                     static_cast<double>(ember_session_kv_bytes(session.get())) / 1048576.0);
      } else {
        std::fprintf(stderr, "ember: unknown command %s (/help lists them)\n", cmd.c_str());
      }
      if (eof) break;
      continue;
    }

    ember_generate_params gp = ember_generate_default_params();
    gp.n_predict = n_predict < 0 ? (1 << 24) : static_cast<int32_t>(n_predict);
    gp.sampler = sampler.get();
    gp.logprobs = false;
    gp.ignore_eos = args.Has("--ignore-eos");
    printer.content.clear();
    printer.reasoning.clear();
    ember_chat_stats stats{};
    g_generating.store(session.get());
    const ember_status s =
        ember_chat_send(chat.get(), message.c_str(), &gp, OnChatPiece, &printer, &stats);
    g_generating.store(nullptr);
    if (s != EMBER_OK) {
      // The conversation is unchanged: say why and read the next message.
      std::fprintf(stderr, "ember: %s\n", ember_last_error());
      status = 1;
    } else {
      printer.End();
      if (stats.gen.finish_reason == EMBER_FINISH_CANCELLED && tty) {
        std::fputs("ember: [reply stopped]\n", stderr);
      }
      if (stats.n_dropped_messages > 0) {
        std::fprintf(stderr, "ember: dropped the %d oldest messages to make room\n",
                     stats.n_dropped_messages);
      }
      if (json) {
        std::printf(
            "{\"content\":\"%s\",\"reasoning\":\"%s\",\"n_prompt\":%d,\"n_reused\":%d,"
            "\"n_gen\":%d,\"n_reasoning\":%d,\"finish_reason\":\"%s\",\"n_dropped_messages\":%d,"
            "\"first_token_s\":%.4f,\"prefill_tok_s\":%.2f,\"decode_tok_s\":%.2f",
            JsonEscape(printer.content).c_str(), JsonEscape(printer.reasoning).c_str(),
            stats.gen.n_prompt, stats.gen.n_reused, stats.gen.n_gen, stats.n_reasoning,
            ember_finish_reason_str(stats.gen.finish_reason), stats.n_dropped_messages,
            stats.first_token_seconds, stats.gen.prefill_tokens_per_second,
            stats.gen.decode_tokens_per_second);
        if (spec.on) std::printf("%s", SpeculativeJson(stats.spec).c_str());
        if (verbose_prompt) {
          size_t n = 0;
          std::vector<int32_t> ids(static_cast<size_t>(stats.gen.n_prompt));
          Check(ember_chat_last_prompt(chat.get(), ids.data(), ids.size(), &n), "prompt tokens");
          std::printf(",\"prompt_tokens\":[");
          for (size_t i = 0; i < n; ++i) std::printf(i ? ",%d" : "%d", ids[i]);
          std::printf("]");
        }
        std::printf("}\n");
        std::fflush(stdout);
      }
      last = stats;
      have_last = true;
    }
    if (eof) break;
  }
  sigaction(SIGINT, &old_sa, nullptr);
  if (tty && !history.empty()) write_history(history.c_str());
  return status;
}

}  // namespace cli
