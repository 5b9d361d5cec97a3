// ember quantize: convert a GGUF model's weight matrices to another type.
#include <unistd.h>

#include <chrono>
#include <cstdio>
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

}  // namespace

int QuantizeCommand(int argc, char** argv) {
  const std::vector<OptionSpec> specs = {
      {"--model", "-m", "IN", "the GGUF model to convert"},
      {"--output", "-o", "OUT", "where to write the converted model"},
      {"--type", "", "TYPE",
       "Q8_0, Q4_0, Q4_1, F16, F32, or native (ember's layouts: loads by mmap, no repack; only "
       "ember reads it)"},
  };
  Args args;
  if (!args.Parse("quantize", "-m IN -o OUT --type TYPE", specs, argc, argv)) return 0;
  if (!args.Has("--model")) throw UsageError{"-m IN is required"};
  if (!args.Has("--output")) throw UsageError{"-o OUT is required"};
  if (!args.Has("--type"))
    throw UsageError{"--type TYPE is required (Q8_0, Q4_0, Q4_1, F16, F32, native)"};
  const std::string in = args.Get("--model"), out = args.Get("--output"), type = args.Get("--type");
  const auto t0 = std::chrono::steady_clock::now();
  Check(ember_quantize(in.c_str(), out.c_str(), type.c_str(),
                       isatty(STDERR_FILENO) ? DrawProgress : nullptr, nullptr),
        "quantize");
  std::fprintf(stderr, "ember: wrote %s (%s) in %.1f s\n", out.c_str(), type.c_str(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return 0;
}

}  // namespace cli
