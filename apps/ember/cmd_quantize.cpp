// ember quantize: convert a GGUF model's weight matrices to another type.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <string>

#include "cli.h"

namespace cli {
namespace {

// A one-line progress bar, redrawn in place; only when stderr is a terminal.
bool DrawProgress(float done, const char* tensor, void* /*user_data*/) {
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(done * kWidth);
  std::string bar(static_cast<size_t>(filled), '=');
  if (filled < kWidth) bar += '>';
  bar.resize(kWidth, ' ');
  std::fprintf(stderr, "\r[%s] %3d%% %-40.40s", bar.c_str(), static_cast<int>(done * 100), tensor);
  if (done >= 1.0f) std::fprintf(stderr, "\n");
  std::fflush(stderr);
  return true;
}

// Matrices that were quantized already (their notes hold "requantized from
// TYPE: ..."; include/ember.h): summed up in one line at the end rather than
// a line per tensor.
struct Requantized {
  int n = 0;
  bool more_bits = false;   // some went to a type of more bits than their source
  bool adds_error = false;  // some went to as many bits or fewer
  std::set<std::string> from;
};

// Prints the tensors whose type is not the file type's default, and why.
void ShowTensor(const char* tensor, const char* type, const char* note, void* user_data) {
  static constexpr char kFrom[] = "requantized from ";
  std::string rest = note;
  if (const size_t at = rest.find(kFrom); at != std::string::npos) {
    auto* rq = static_cast<Requantized*>(user_data);
    const std::string what = rest.substr(at + sizeof(kFrom) - 1);
    ++rq->n;
    rq->from.insert(what.substr(0, what.find(':')));
    const bool more = what.find("no more precise") != std::string::npos;
    rq->more_bits = rq->more_bits || more;
    rq->adds_error = rq->adds_error || !more;
    rest.resize(at >= 2 ? at - 2 : 0);  // and the "; " before it
  }
  if (rest.empty()) return;
  std::fprintf(stderr, "%s%-36s -> %-5s %s\n", isatty(STDERR_FILENO) ? "\r" : "", tensor, type,
               rest.c_str());
}

}  // namespace

int QuantizeCommand(int argc, char** argv) {
  const std::vector<OptionSpec> specs = {
      {"--model", "-m", "IN", "the GGUF model to convert"},
      {"--output", "-o", "OUT", "where to write the converted model"},
      {"--type", "", "TYPE",
       "Q4_K_M, Q4_K_S, Q5_K_M, Q5_K_S, Q6_K, Q3_K_M, Q3_K_S, Q3_K_L, Q2_K, IQ4_NL, IQ4_XS, "
       "Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, F16, BF16, F32 "
       "(llama-quantize's mixes: its type per tensor), or native (ember's layouts: loads by "
       "mmap, no repack; only ember reads it)"},
      {"--threads", "-t", "N", "threads (default: every core)"},
      {"--pure", "", "",
       "every matrix the type's default, no per-tensor rules (llama-quantize "
       "--pure); rows that are not whole blocks still fall back"},
  };
  Args args;
  if (!args.Parse("quantize", "-m IN -o OUT --type TYPE", specs, argc, argv)) return 0;
  if (!args.Has("--model")) throw UsageError{"-m IN is required"};
  if (!args.Has("--output")) throw UsageError{"-o OUT is required"};
  if (!args.Has("--type"))
    throw UsageError{"--type TYPE is required (Q4_K_M, Q5_K_M, Q6_K, Q8_0, ..., native)"};
  const std::string in = args.Get("--model"), out = args.Get("--output"), type = args.Get("--type");
  ember_quantize_params p = ember_quantize_default_params();
  p.type = type.c_str();
  p.n_threads = static_cast<int32_t>(args.GetInt("--threads", 0, 1, 1024));
  p.pure = args.Has("--pure");
  p.progress = isatty(STDERR_FILENO) ? DrawProgress : nullptr;
  p.on_tensor = ShowTensor;
  Requantized rq;
  p.user_data = &rq;
  const auto t0 = std::chrono::steady_clock::now();
  Check(ember_quantize_ex(in.c_str(), out.c_str(), &p), "quantize");
  std::fprintf(stderr, "ember: wrote %s (%s) in %.1f s\n", out.c_str(), type.c_str(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  if (rq.n > 0) {
    std::string from;
    for (const std::string& t : rq.from) from += (from.empty() ? "" : ", ") + t;
    std::fprintf(stderr,
                 "ember: note: %d matrices were quantized already (%s) and were converted from "
                 "their quantized values (llama-quantize --allow-requantize)%s%s\n",
                 rq.n, from.c_str(),
                 rq.adds_error ? "; that adds error: quantize from the F16 / BF16 / F32 original "
                                 "where you have it"
                               : "",
                 rq.more_bits ? "; a type of more bits keeps the source's precision, it cannot "
                                "restore what the source's quantization lost"
                              : "");
  }
  return 0;
}

}  // namespace cli
