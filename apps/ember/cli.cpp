#include "cli.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace cli {

const OptionSpec kModelOption{"--model", "-m", "MODEL",
                              "GGUF model file (default: SmolLM2-135M-Instruct Q4_1 in the cache)"};
const OptionSpec kPromptOption{"--prompt", "-p", "TEXT", "prompt text"};
const OptionSpec kFileOption{"--file", "-f", "FILE", "read the prompt from FILE"};

bool Args::Parse(const std::string& command, const std::string& synopsis,
                 const std::vector<OptionSpec>& specs, int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf("usage: ember %s %s\n\noptions:\n", command.c_str(), synopsis.c_str());
      for (const OptionSpec& s : specs) {
        std::string left = (s.alias.empty() ? "    " : s.alias + ", ") + s.name;
        if (!s.value.empty()) left += " " + s.value;
        std::printf("  %-28s %s\n", left.c_str(), s.help.c_str());
      }
      std::printf("  %-28s %s\n", "-h, --help", "show this help");
      return false;
    }
    const OptionSpec* spec = nullptr;
    std::string inline_value;
    bool has_inline = false;
    if (size_t eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_inline = true;
    }
    for (const OptionSpec& s : specs) {
      if (a == s.name || (!s.alias.empty() && a == s.alias)) spec = &s;
    }
    if (spec == nullptr) {
      throw UsageError{"unknown option '" + a + "' for 'ember " + command + "' (see 'ember " +
                       command + " --help')"};
    }
    if (spec->value.empty()) {
      if (has_inline) throw UsageError{"option " + spec->name + " takes no value"};
      values_[spec->name] = "1";
    } else if (has_inline) {
      values_[spec->name] = inline_value;
    } else {
      if (i + 1 >= argc) throw UsageError{"option " + spec->name + " needs a value"};
      values_[spec->name] = argv[++i];
    }
    all_[spec->name].push_back(values_[spec->name]);
  }
  return true;
}

std::vector<std::string> Args::GetAll(const std::string& name) const {
  auto it = all_.find(name);
  return it == all_.end() ? std::vector<std::string>{} : it->second;
}

std::string Args::Get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

int64_t Args::GetInt(const std::string& name, int64_t fallback, int64_t min, int64_t max) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  const std::string& s = it->second;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0) {
    throw UsageError{name + " expects an integer, got '" + s + "'"};
  }
  if (v < min || v > max) {
    throw UsageError{name + " must be between " + std::to_string(min) + " and " +
                     std::to_string(max) + ", got " + s};
  }
  return v;
}

double Args::GetDouble(const std::string& name, double fallback, double min, double max) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  const std::string& s = it->second;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || errno != 0 || !std::isfinite(v)) {
    throw UsageError{name + " expects a number, got '" + s + "'"};
  }
  if (v < min || v > max) {
    std::ostringstream m;
    m << name << " must be between " << min << " and " << max << ", got " << s;
    throw UsageError{m.str()};
  }
  return v;
}

uint64_t Args::GetUint64(const std::string& name, uint64_t fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  const std::string& s = it->second;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (s.empty() || s[0] == '-' || *end != '\0' || errno != 0) {
    throw UsageError{name + " expects a non-negative integer, got '" + s + "'"};
  }
  return v;
}

std::string ReadTextFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw UsageError{"cannot read '" + path + "'"};
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string ResolveModelPath(const Args& args) {
  if (args.Has("--model")) return args.Get("--model");
  std::string dir;
  if (const char* e = std::getenv("EMBER_MODELS")) {
    dir = e;
  } else {
    const char* home = std::getenv("HOME");
    dir = std::string(home ? home : ".") + "/.cache/ember/models";
  }
  std::string path = dir + "/SmolLM2-135M-Instruct.Q4_1.gguf";
  std::ifstream f(path);
  if (!f) {
    throw UsageError{"no -m MODEL given and the default model is not at " + path +
                     "; fetch it with 'bash scripts/fetch-models.sh' (or set EMBER_MODELS)"};
  }
  return path;
}

void Check(ember_status s, const std::string& what) {
  if (s != EMBER_OK) throw UsageError{what + ": " + ember_last_error()};
}

ember_model* LoadModel(const std::string& path, bool vocab_only, ember_numerics numerics,
                       ember_float_weights float_weights, ember_mmap_mode mmap_mode) {
  ember_model* model = nullptr;
  ember_model_params mp = ember_model_default_params();
  mp.vocab_only = vocab_only;
  mp.numerics = static_cast<uint8_t>(numerics);
  mp.float_weights = static_cast<uint8_t>(float_weights);
  mp.mmap_mode = static_cast<uint8_t>(mmap_mode);
  ember_status s = ember_model_load(path.c_str(), &mp, &model);
  if (s != EMBER_OK) throw UsageError{ember_last_error()};
  return model;
}

std::vector<OptionSpec> MmapOptions() {
  return {
      {"--no-mmap", "", "",
       "read the model file into memory instead of mapping it: the process no longer depends "
       "on the file (a mapped file truncated by another process kills it with SIGBUS); the "
       "default maps it, except on network and FUSE file systems"},
      {"--mmap", "", "", "always map the model file, also on network and FUSE file systems"},
  };
}

ember_mmap_mode GetMmapMode(const Args& args) {
  if (args.Has("--no-mmap") && args.Has("--mmap")) {
    throw UsageError{"give --mmap or --no-mmap, not both"};
  }
  if (args.Has("--no-mmap")) return EMBER_MMAP_OFF;
  if (args.Has("--mmap")) return EMBER_MMAP_ON;
  return EMBER_MMAP_AUTO;
}

const OptionSpec kMaxMemoryOption = {
    "--max-memory", "", "SIZE",
    "the most memory the context (KV cache and scratch) may take, e.g. 512M or 4G; a larger "
    "context is refused before anything is allocated (default: the memory available, from "
    "/proc/meminfo and the cgroup's limit)"};

bool ParseSize(const std::string& text, uint64_t* out) {
  size_t i = 0;
  double value = 0;
  bool digits = false;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    value = value * 10 + (text[i] - '0');
    digits = true;
  }
  if (i < text.size() && text[i] == '.') {
    double scale = 0.1;
    for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      value += (text[i] - '0') * scale;
      scale /= 10;
      digits = true;
    }
  }
  if (!digits) return false;
  std::string unit = text.substr(i);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double multiplier = 1;
  if (!unit.empty() && std::string("KMGT").find(unit[0]) != std::string::npos) {
    multiplier = std::pow(1024.0, 1 + static_cast<double>(std::string("KMGT").find(unit[0])));
    unit.erase(0, 1);
    if (unit == "IB" || unit == "B") unit.clear();
  } else if (unit == "B") {
    unit.clear();
  }
  if (!unit.empty()) return false;
  const double bytes = value * multiplier;
  if (!(bytes >= 1) || bytes >= 18446744073709551615.0) return false;
  *out = static_cast<uint64_t>(bytes);
  return true;
}

uint64_t GetMaxMemory(const Args& args) {
  if (!args.Has("--max-memory")) return 0;
  uint64_t bytes = 0;
  const std::string v = args.Get("--max-memory");
  if (!ParseSize(v, &bytes)) {
    throw UsageError{"--max-memory expects a size such as 512M or 4G, got '" + v + "'"};
  }
  return bytes;
}

ember_status CreateSession(const ember_model* model, const ember_session_params& sp,
                           const Args& args, ember_session** out) {
  ember_session_limits limits = ember_session_limits_default();
  limits.max_memory = GetMaxMemory(args);
  return ember_session_create_ex(model, &sp, &limits, out);
}

const OptionSpec kNumericsOption = {
    "--numerics", "", "ember|ggml",
    "ggml: llama.cpp's CPU arithmetic bit for bit (its logits and greedy tokens on x86-64 "
    "AVX-512; Q4_0/Q4_1/Q8_0 weights, f16 KV; slower than ember's own kernels). Default ember"};

ember_numerics GetNumerics(const Args& args) {
  const std::string v = args.Get("--numerics", "ember");
  if (v == "ember") return EMBER_NUMERICS_EMBER;
  if (v == "ggml") return EMBER_NUMERICS_GGML;
  throw UsageError{"--numerics: expected ember or ggml, got '" + v + "'"};
}

const OptionSpec kRepackOption = {
    "--repack", "", "float|int8",
    "what F32/F16/BF16 weight matrices become: float multiplies them as stored, without loss "
    "(default); int8 requantizes them to ember's int8 groups (fewer bytes per token, lossy)"};

ember_float_weights GetFloatWeights(const Args& args) {
  const std::string v = args.Get("--repack", "float");
  if (v == "float") return EMBER_FLOAT_WEIGHTS_FLOAT;
  if (v == "int8") return EMBER_FLOAT_WEIGHTS_INT8;
  throw UsageError{"--repack: expected float or int8, got '" + v + "'"};
}

std::vector<int32_t> Tokenize(ember_model* model, const std::string& text, bool add_special,
                              bool parse_special) {
  size_t n = 0;
  std::vector<int32_t> ids(text.size() + 4);
  ember_status s = ember_tokenize(model, text.data(), text.size(), add_special, parse_special,
                                  ids.data(), ids.size(), &n);
  if (s == EMBER_ERR_BUFFER_TOO_SMALL) {
    ids.resize(n);
    s = ember_tokenize(model, text.data(), text.size(), add_special, parse_special, ids.data(),
                       ids.size(), &n);
  }
  Check(s, "tokenize");
  ids.resize(n);
  return ids;
}

std::string JsonEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

}  // namespace cli

namespace cli {
std::string ReadPrompt(const Args& args) {
  if (args.Has("--prompt") && args.Has("--file")) throw UsageError{"give -p or -f, not both"};
  if (args.Has("--prompt")) return args.Get("--prompt");
  if (args.Has("--file")) return ReadTextFile(args.Get("--file"));
  throw UsageError{"a prompt is needed: -p TEXT or -f FILE"};
}
}  // namespace cli

namespace cli {
std::vector<int32_t> ParseIds(const std::string& text) {
  std::vector<int32_t> ids;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ',' || text[i] == ' ') {
      ++i;
      continue;
    }
    size_t j = i;
    if (text[j] == '-') ++j;
    while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
    if (j == i || (j == i + 1 && text[i] == '-') || j - i > 10) {
      throw UsageError{"--tokens expects comma-separated token ids, got '" + text + "'"};
    }
    ids.push_back(static_cast<int32_t>(std::stoll(text.substr(i, j - i))));
    i = j;
  }
  if (ids.empty()) throw UsageError{"--tokens has no ids"};
  return ids;
}
}  // namespace cli

namespace cli {
const OptionSpec kThreadsOption{"--threads", "-t", "N|auto",
                                "decode threads (default auto: the fewest big cores that reach "
                                "95% of the measured memory bandwidth)"};
const OptionSpec kThreadsBatchOption{
    "--threads-batch", "", "N|auto",
    "prompt (prefill) threads (default: -t N when given, else auto: all big cores)"};

int32_t ParseThreadCount(const std::string& option, const std::string& value) {
  if (value == "auto") return 0;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno != 0 || v < 0 || v > 1024) {
    throw UsageError{option + " expects 'auto' or a thread count from 1 to 1024, got '" + value +
                     "'"};
  }
  return static_cast<int32_t>(v);
}

int32_t GetThreads(const Args& args, const std::string& name) {
  return args.Has(name) ? ParseThreadCount(name, args.Get(name)) : 0;
}

std::string ThreadsText(int32_t n) { return n > 0 ? std::to_string(n) : "auto"; }

std::string DescribeThreads(const ember_session* session, int32_t n_threads,
                            int32_t n_threads_batch) {
  const int32_t decode = ember_session_n_threads(session);
  const int32_t batch = ember_session_n_threads_batch(session);
  auto count = [](int32_t n) { return std::to_string(n) + (n == 1 ? " thread" : " threads"); };
  ember_thread_plan plan{};
  const bool have_plan =
      (n_threads == 0 || n_threads_batch == 0) && ember_get_thread_plan(&plan) == EMBER_OK;
  char buf[256];
  std::string out = "decode " + count(decode);
  if (n_threads > 0) {
    out += " (-t " + std::to_string(n_threads) + ")";
  } else if (have_plan && plan.peak_read_gbps > 0) {
    std::snprintf(buf, sizeof(buf), " (auto: %.1f GB/s read, %.0f%% of the %.1f GB/s peak)",
                  plan.decode_read_gbps, 100.0 * plan.decode_read_gbps / plan.peak_read_gbps,
                  plan.peak_read_gbps);
    out += buf;
  } else {
    out += " (auto)";
  }
  out += ", prefill " + count(batch);
  if (n_threads_batch > 0) {
    out += " (--threads-batch " + std::to_string(n_threads_batch) + ")";
  } else if (n_threads > 0) {
    out += " (as -t)";
  } else if (have_plan) {
    std::snprintf(buf, sizeof(buf), " (auto: the %d big cores of %d cpus)", plan.n_big,
                  plan.n_cpus);
    out += buf;
  } else {
    out += " (auto)";
  }
  return out;
}
}  // namespace cli

namespace cli {
const OptionSpec kKvTypeOption = {
    "--kv-type", "", "f16|q8|f32",
    "KV cache storage: f16 (default), q8 (int8 with per-token, per-head scales; about half the "
    "memory) or f32 (no rounding, twice the memory; llama.cpp's -ctk f32 -ctv f32 --fa off)"};

ember_kv_type GetKvType(const Args& args) {
  const std::string type = args.Get("--kv-type", "f16");
  if (type == "f16") return EMBER_KV_F16;
  if (type == "q8" || type == "q8_0") return EMBER_KV_Q8;
  if (type == "f32") return EMBER_KV_F32;
  throw UsageError{"--kv-type expects f16, q8 or f32, got '" + type + "'"};
}

const OptionSpec kPoolingOption = {
    "--pooling", "", "P",
    "how an embedding pools a text's tokens: model (default: the file's own, mean if it names "
    "none), mean, first (cls), last, or none (a vector per token)"};

ember_pooling GetPooling(const Args& args) {
  static constexpr struct {
    const char* name;
    ember_pooling pooling;
  } kNames[] = {{"model", EMBER_POOLING_MODEL}, {"mean", EMBER_POOLING_MEAN},
                {"first", EMBER_POOLING_FIRST}, {"cls", EMBER_POOLING_FIRST},
                {"last", EMBER_POOLING_LAST},   {"none", EMBER_POOLING_NONE}};
  const std::string s = args.Get("--pooling", "model");
  for (const auto& p : kNames) {
    if (s == p.name) return p.pooling;
  }
  throw UsageError{"--pooling must be model, mean, first (cls), last or none, not '" + s + "'"};
}

std::vector<OptionSpec> KvOptions(bool with_keep) {
  std::vector<OptionSpec> o = {
      kKvTypeOption,
      {"--no-context-shift", "", "",
       "stop at a full context instead of dropping the oldest tokens and going on"},
      {"--swa-full", "", "",
       "sliding-window layers (Gemma 3) keep the whole context instead of a ring of the "
       "window's size (more memory; beam search sets it)"},
      kMaxMemoryOption,
  };
  if (with_keep) {
    o.push_back({"--keep", "", "N",
                 "tokens from the start of the prompt never dropped when the context shifts "
                 "(default 4: the first tokens act as attention sinks; -1: the whole prompt)"});
  }
  return o;
}

const char* KvTypeLabel(ember_kv_type type) {
  switch (type) {
    case EMBER_KV_Q8:
      return "q8";
    case EMBER_KV_F32:
      return "f32";
    case EMBER_KV_F16:
      break;
  }
  return "f16";
}

void ApplyKvOptions(const Args& args, int32_t n_prompt, ember_session_params* sp) {
  sp->kv_type = GetKvType(args);
  sp->context_shift = !args.Has("--no-context-shift");
  sp->swa_full = args.Has("--swa-full");
  GetMaxMemory(args);  // its errors before the model loads
  if (args.Has("--keep")) {
    const int64_t keep = args.GetInt("--keep", 0, -1, 1 << 24);
    sp->n_keep = keep < 0 ? n_prompt : static_cast<int32_t>(keep);
  }
}

const OptionSpec kTemplateOption = {
    "--template", "", "NAME|FILE",
    "the chat template: a Jinja file, or the name of one in the model "
    "(tokenizer.chat_template.NAME); default: the model's own"};

void GetTemplate(const Args& args, std::string* source, std::string* name) {
  source->clear();
  name->clear();
  if (!args.Has("--template")) return;
  const std::string t = args.Get("--template");
  if (t.empty()) throw UsageError{"--template needs a file or a name"};
  if (std::FILE* f = std::fopen(t.c_str(), "rb")) {
    std::fclose(f);
    *source = ReadTextFile(t);
  } else if (t.find('/') != std::string::npos || t.find('.') != std::string::npos) {
    throw UsageError{"--template: cannot read " + t};
  } else {
    *name = t;
  }
}

std::vector<OptionSpec> SpeculativeOptions() {
  return {
      {"--draft-model", "", "MODEL",
       "speculative decoding: drafts from this smaller model of the same vocabulary, verified "
       "in one pass (the output is the same as without)"},
      {"--lookup", "", "N",
       "speculative decoding without a second model: drafts from earlier occurrences of the "
       "last 1..N tokens in the context (prompt lookup)"},
      {"--draft-max", "", "K", "tokens drafted per step at most (default 8)"},
      {"--draft-min", "", "N", "drafts shorter than N are not verified (default 0)"},
      {"--draft-fixed", "", "",
       "always draft --draft-max tokens (default: adapt to the acceptance and the cost)"},
  };
}

void SetUpSpeculative(const Args& args, ember_model* target, const ember_session_params& sp,
                      Speculative* out) {
  const bool draft = args.Has("--draft-model"), lookup = args.Has("--lookup");
  if (draft && lookup) throw UsageError{"give --draft-model or --lookup, not both"};
  if (!draft && !lookup) {
    for (const char* o : {"--draft-max", "--draft-min", "--draft-fixed"}) {
      if (args.Has(o)) throw UsageError{std::string(o) + " needs --draft-model or --lookup"};
    }
    return;
  }
  out->on = true;
  out->params = ember_speculative_default_params();
  out->params.lookup = lookup ? static_cast<int32_t>(args.GetInt("--lookup", 3, 1, 8)) : 0;
  out->params.draft_max = static_cast<int32_t>(args.GetInt("--draft-max", 8, 1, 32));
  out->params.draft_min =
      static_cast<int32_t>(args.GetInt("--draft-min", 0, 0, out->params.draft_max));
  out->params.adaptive = !args.Has("--draft-fixed");
  if (target == nullptr || !draft) return;
  out->draft_model.reset(LoadModel(args.Get("--draft-model"), false, EMBER_NUMERICS_EMBER,
                                   EMBER_FLOAT_WEIGHTS_FLOAT, GetMmapMode(args)));
  ember_session* s = nullptr;
  ember_session_params dp = sp;
  dp.context_shift = false;  // the draft follows the target's context; it never shifts itself
  Check(CreateSession(out->draft_model.get(), dp, args, &s), "--draft-model session");
  out->draft_session.reset(s);
  out->params.draft = s;
}

std::string DescribeSpeculative(const ember_speculative_stats& s) {
  char buf[200];
  std::snprintf(buf, sizeof(buf),
                "; speculative: %d drafted, %d accepted (%.1f%%), %.2f tokens per pass",
                s.n_drafted, s.n_accepted, 100.0 * s.acceptance, s.tokens_per_step);
  return buf;
}

std::string SpeculativeJson(const ember_speculative_stats& s) {
  char buf[320];
  std::snprintf(buf, sizeof(buf),
                ",\"speculative\":{\"steps\":%d,\"drafted\":%d,\"accepted\":%d,"
                "\"acceptance\":%.4f,\"tokens_per_step\":%.3f,\"draft_s\":%.4f,"
                "\"verify_s\":%.4f}",
                s.n_steps, s.n_drafted, s.n_accepted, s.acceptance, s.tokens_per_step,
                s.draft_seconds, s.verify_seconds);
  return buf;
}
}  // namespace cli
