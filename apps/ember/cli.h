// Shared pieces of the `ember` command line: a small option parser, error
// reporting (one line "ember: error: ..." on stderr, non-zero exit), model
// loading with the default model, and JSON string escaping.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ember.h"

namespace cli {

// Thrown inside a subcommand to end it with "ember: error: <message>".
struct UsageError {
  std::string message;
};

struct OptionSpec {
  std::string name;   // "--model"
  std::string alias;  // "-m" or ""
  std::string value;  // value name for help, "" for a flag
  std::string help;
};

class Args {
 public:
  // Parses argv (after the subcommand). Throws UsageError on unknown options
  // or missing values. Returns false if --help was given (help printed).
  bool Parse(const std::string& command, const std::string& synopsis,
             const std::vector<OptionSpec>& specs, int argc, char** argv);

  bool Has(const std::string& name) const { return values_.count(name) != 0; }
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  // Every value of a repeatable option, in command-line order.
  std::vector<std::string> GetAll(const std::string& name) const;
  int64_t GetInt(const std::string& name, int64_t fallback, int64_t min, int64_t max) const;
  double GetDouble(const std::string& name, double fallback, double min, double max) const;
  uint64_t GetUint64(const std::string& name, uint64_t fallback) const;

 private:
  std::map<std::string, std::string> values_;  // the last value of each option
  std::map<std::string, std::vector<std::string>> all_;
};

// Reads a file whole; throws UsageError naming it when it cannot be read.
std::string ReadTextFile(const std::string& path);

// -m MODEL, or the default model in the cache (with fetch instructions when missing).
std::string ResolveModelPath(const Args& args);

// Loads a model or throws UsageError with ember's message.
// vocab_only: metadata and tokenizer only (tokenize needs no weights).
ember_model* LoadModel(const std::string& path, bool vocab_only = false,
                       ember_numerics numerics = EMBER_NUMERICS_EMBER,
                       ember_float_weights float_weights = EMBER_FLOAT_WEIGHTS_FLOAT,
                       ember_mmap_mode mmap_mode = EMBER_MMAP_AUTO);

// --no-mmap (read the model into memory) and --mmap (always map it).
std::vector<OptionSpec> MmapOptions();
// Their value (EMBER_MMAP_AUTO when neither is given); both is a UsageError.
ember_mmap_mode GetMmapMode(const Args& args);

// --max-memory SIZE: the most memory a session's context (KV cache and
// scratch) may take; KvOptions includes it.
extern const OptionSpec kMaxMemoryOption;
// "512M", "4G", "1.5GiB", "1048576" -> bytes (K, M, G, T: powers of 1024; an
// optional "iB" or "B" after them). False for anything else or 0.
bool ParseSize(const std::string& text, uint64_t* out);
// --max-memory's value in bytes, 0 when absent (what the machine has);
// throws UsageError naming the option on a bad value.
uint64_t GetMaxMemory(const Args& args);
// ember_session_create_ex with --max-memory's limit.
ember_status CreateSession(const ember_model* model, const ember_session_params& sp,
                           const Args& args, ember_session** out);

// --numerics ember|ggml: whose arithmetic the session follows.
extern const OptionSpec kNumericsOption;
// Its value (EMBER_NUMERICS_EMBER when absent); throws UsageError otherwise.
ember_numerics GetNumerics(const Args& args);

// --repack float|int8: what F32/F16/BF16 matrices become (float: as stored).
extern const OptionSpec kRepackOption;
ember_float_weights GetFloatWeights(const Args& args);

// Throws UsageError("<what>: <last error>") when s != EMBER_OK.
void Check(ember_status s, const std::string& what);

std::vector<int32_t> Tokenize(ember_model* model, const std::string& text, bool add_special,
                              bool parse_special);

std::string JsonEscape(const std::string& s);

// The options every model-using command shares.
extern const OptionSpec kModelOption;
extern const OptionSpec kPromptOption;
extern const OptionSpec kFileOption;

// Subcommands: return the process exit code.
int RunCommand(int argc, char** argv);
int ChatCommand(int argc, char** argv);
int TokenizeCommand(int argc, char** argv);
int EmbedCommand(int argc, char** argv);
int EvalCommand(int argc, char** argv);
int InfoCommand(int argc, char** argv);
int BenchCommand(int argc, char** argv);
int QuantizeCommand(int argc, char** argv);
int SampleCommand(int argc, char** argv);
int PerplexityCommand(int argc, char** argv);
int TemplateCommand(int argc, char** argv);
int ServeCommand(int argc, char** argv);

}  // namespace cli

#include <memory>

namespace cli {
struct ModelDeleter {
  void operator()(ember_model* m) const { ember_model_free(m); }
};
struct SessionDeleter {
  void operator()(ember_session* s) const { ember_session_free(s); }
};
struct SamplerDeleter {
  void operator()(ember_sampler* s) const { ember_sampler_free(s); }
};
using ModelPtr = std::unique_ptr<ember_model, ModelDeleter>;
using SessionPtr = std::unique_ptr<ember_session, SessionDeleter>;
using SamplerPtr = std::unique_ptr<ember_sampler, SamplerDeleter>;

// The prompt from -p or -f (exactly one); throws UsageError otherwise.
std::string ReadPrompt(const Args& args);

// "1,2,3" (or space-separated) -> ids; throws UsageError on anything else.
std::vector<int32_t> ParseIds(const std::string& text);

// -t/--threads and --threads-batch: "auto" (the default) or a thread count.
extern const OptionSpec kThreadsOption;
extern const OptionSpec kThreadsBatchOption;

// A thread option's value: 0 for "auto" (0 is also taken as auto), else the
// count, 1..1024; throws UsageError naming `option` on anything else.
int32_t ParseThreadCount(const std::string& option, const std::string& value);

// ParseThreadCount of the option's value; 0 (auto) when it is absent.
int32_t GetThreads(const Args& args, const std::string& name);

// "auto" or the number, for messages.
std::string ThreadsText(int32_t n);

// The threads a session uses and why, for a log line, e.g. "decode 2 threads
// (auto: 22.4 GB/s read, 100% of the 22.4 GB/s peak), prefill 2 threads (auto:
// the 2 big cores of 2 cpus)". n_threads / n_threads_batch: as asked (0: auto).
std::string DescribeThreads(const ember_session* session, int32_t n_threads,
                            int32_t n_threads_batch);

// --kv-type f16|q8|f32 (q8_0 as an alias of q8, llama.cpp's name) alone, and
// its value.
extern const OptionSpec kKvTypeOption;
ember_kv_type GetKvType(const Args& args);

// --pooling for embeddings (embed, serve): model (default), mean, first
// (llama.cpp's "cls"), last, none.
extern const OptionSpec kPoolingOption;
ember_pooling GetPooling(const Args& args);

// The KV cache options of commands that create sessions: --kv-type,
// --no-context-shift, --swa-full, --max-memory and (with_keep) --keep.
std::vector<OptionSpec> KvOptions(bool with_keep);

// Sets kv_type and context_shift from the flags; with --keep, n_keep: the
// value, or n_prompt for -1 ("the whole prompt", as llama.cpp's --keep -1).
// Range errors (keep >= n_ctx) are left to ember_session_create. Checks
// --max-memory's value (CreateSession applies it).
void ApplyKvOptions(const Args& args, int32_t n_prompt, ember_session_params* sp);
// --template NAME|FILE: a Jinja file when one exists at that path (its text
// goes to *source), else the name of a template in the model (*name:
// tokenizer.chat_template.NAME). Both stay empty without the option.
extern const OptionSpec kTemplateOption;
void GetTemplate(const Args& args, std::string* source, std::string* name);

// Speculative decoding: --draft-model M, --lookup N, --draft-max K,
// --draft-min N, --draft-fixed.
std::vector<OptionSpec> SpeculativeOptions();
struct Speculative {
  ModelPtr draft_model;
  SessionPtr draft_session;
  ember_speculative_params params{};
  bool on = false;
};
// Reads the flags (errors before any model loads: call with model NULL
// first), then with the target model loads the draft model and creates its
// session with the target session's parameters.
void SetUpSpeculative(const Args& args, ember_model* target, const ember_session_params& sp,
                      Speculative* out);
// "; speculative: 412 drafted, 300 accepted (72.8%), 2.31 tokens per pass"
std::string DescribeSpeculative(const ember_speculative_stats& s);
// ,"speculative":{...} for --json
std::string SpeculativeJson(const ember_speculative_stats& s);

// "f16", "q8" or "f32", as --kv-type spells it.
const char* KvTypeLabel(ember_kv_type type);
}  // namespace cli
