// Writes the default tiny test model to argv[1] (a ctest fixture for the C99
// test), or with argv[2] the tiny model of that architecture (ArchSpec: "qwen2"
// carries a chat template, for the server's Python test).
#include <cstdio>

#include "support/model_builder.h"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const ember::test::TinyModelSpec spec =
      argc > 2 ? ember::test::ArchSpec(argv[2]) : ember::test::TinyModelSpec();
  ember::Status s = ember::test::BuildTinyModel(spec, argv[1]);
  if (!s.ok()) {
    std::fprintf(stderr, "make_tiny_model: %s\n", s.message().c_str());
    return 1;
  }
  return 0;
}
