// ember: run GGUF language models on the CPU.
#include <cstdio>
#include <cstring>
#include <string>

#include "cli.h"

// The static CLI (EMBER_STATIC_CLI in CMakeLists.txt) is built without `serve`
// (Debian's cpp-httplib is a shared library only).
#ifdef EMBER_CLI_STATIC
constexpr bool kHasServe = false;
constexpr const char* kBuildNote = ", static: no serve";
#else
constexpr bool kHasServe = true;
constexpr const char* kBuildNote = "";
#endif

namespace {

void PrintUsage(FILE* to) {
  std::fprintf(
      to,
      "usage: ember COMMAND [options]\n\n"
      "commands:\n"
      "  run        generate text from a prompt, streaming it to stdout\n"
      "  chat       talk with an instruct model (its chat template, turn by turn)\n"
      "  tokenize   print the token ids of a text\n"
      "  eval       write the last position's logits of a prompt to a file\n"
      "  embed      the embedding of each line of a text (pooled hidden states)\n"
      "  info       describe a model: architecture, dimensions, vocab, tensors\n"
      "  bench      prefill and decode speed, GB/s and %% of memory bandwidth\n"
      "  quantize   convert a model to a llama-quantize mix (Q4_K_M, IQ4_XS, Q8_0, F16, ...)\n"
      "  sample     apply samplers to given logits and show what each one does\n"
      "  perplexity score a text: perplexity over chunks, or streamed through the KV ring\n"
      "  template   print a chat template's rendering of a conversation (the prompt)\n"
      "%s\n"
      "'ember COMMAND --help' shows a command's options.\n",
      kHasServe ? "  serve      an OpenAI-compatible HTTP server (chat, completions, a web page)\n"
                : "");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(stderr);
    return 2;
  }
  const std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    PrintUsage(stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::printf("ember %s (C API version %d%s)\n", EMBER_VERSION_STRING, EMBER_API_VERSION,
                kBuildNote);
    return 0;
  }
  try {
    if (cmd == "run") return cli::RunCommand(argc - 2, argv + 2);
    if (cmd == "chat") return cli::ChatCommand(argc - 2, argv + 2);
    if (cmd == "tokenize") return cli::TokenizeCommand(argc - 2, argv + 2);
    if (cmd == "eval") return cli::EvalCommand(argc - 2, argv + 2);
    if (cmd == "embed") return cli::EmbedCommand(argc - 2, argv + 2);
    if (cmd == "info") return cli::InfoCommand(argc - 2, argv + 2);
    if (cmd == "bench") return cli::BenchCommand(argc - 2, argv + 2);
    if (cmd == "quantize") return cli::QuantizeCommand(argc - 2, argv + 2);
    if (cmd == "sample") return cli::SampleCommand(argc - 2, argv + 2);
    if (cmd == "perplexity") return cli::PerplexityCommand(argc - 2, argv + 2);
    if (cmd == "template") return cli::TemplateCommand(argc - 2, argv + 2);
#ifndef EMBER_CLI_STATIC
    if (cmd == "serve") return cli::ServeCommand(argc - 2, argv + 2);
#else
    if (cmd == "serve") {
      throw cli::UsageError{
          "this is the static ember, built without 'serve' (it needs the shared cpp-httplib); "
          "use the ember package or a dynamically linked build"};
    }
#endif
    throw cli::UsageError{"unknown command '" + cmd + "' (see 'ember --help')"};
  } catch (const cli::UsageError& e) {
    std::fprintf(stderr, "ember: error: %s\n", e.message.c_str());
    return 1;
  }
}
