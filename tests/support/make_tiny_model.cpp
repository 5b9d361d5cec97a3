// Writes the default tiny test model to argv[1] (a ctest fixture for the C99 test).
#include <cstdio>

#include "support/model_builder.h"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  ember::Status s = ember::test::BuildTinyModel(ember::test::TinyModelSpec(), argv[1]);
  if (!s.ok()) {
    std::fprintf(stderr, "make_tiny_model: %s\n", s.message().c_str());
    return 1;
  }
  return 0;
}
