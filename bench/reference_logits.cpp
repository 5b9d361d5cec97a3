// ember_reference_logits: the next-token logits of every position of a token
// sequence from the plain-float reference forward (tests/support/
// reference_forward.h: doubles, exact RoPE and GELU, no KV cache, no
// activation quantization), to tell which engine is nearer exact math where
// ember's and llama.cpp's logits part (scripts/validate.sh).
//
//   ember_reference_logits MODEL IDS OUT [--int8-acts]   IDS: comma-separated ids
//
// --int8-acts rounds every matrix input as ember's and ggml's int8 activation
// groups do, to see how much of an engine's distance to exact math is that.
//
// OUT: n_tokens * n_vocab little-endian f32, position-major (the layout of
// peer_tool logits --all and ember eval --all-logits).
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/model/model.h"
#include "support/reference_forward.h"

int main(int argc, char** argv) {
  const bool int8_acts = argc == 5 && std::string(argv[4]) == "--int8-acts";
  if (argc != 4 && !int8_acts) {
    std::fprintf(stderr, "usage: ember_reference_logits MODEL IDS OUT [--int8-acts]\n");
    return 2;
  }
  std::unique_ptr<ember::Model> model;
  if (ember::Status s = ember::Model::Load(argv[1], nullptr, &model); !s.ok()) {
    std::fprintf(stderr, "ember_reference_logits: %s\n", s.message().c_str());
    return 1;
  }
  std::vector<int32_t> ids;
  std::stringstream ss(argv[2]);
  for (std::string tok; std::getline(ss, tok, ',');) ids.push_back(std::stoi(tok));
  std::vector<float> logits;
  if (ember::Status s = ember::test::ReferenceForward(*model, ids, &logits, {int8_acts}); !s.ok()) {
    std::fprintf(stderr, "ember_reference_logits: %s\n", s.message().c_str());
    return 1;
  }
  std::FILE* f = std::fopen(argv[3], "wb");
  if (f == nullptr ||
      std::fwrite(logits.data(), sizeof(float), logits.size(), f) != logits.size() ||
      std::fclose(f) != 0) {
    std::fprintf(stderr, "ember_reference_logits: cannot write %s\n", argv[3]);
    return 1;
  }
  return 0;
}
