// ember_reference_logits: the next-token logits of every position of a token
// sequence from the plain-float reference forward (tests/support/
// reference_forward.h: doubles, exact RoPE and GELU, no KV cache, no
// activation quantization), to tell which engine is nearer exact math where
// ember's and llama.cpp's logits part (scripts/validate.sh).
//
//   ember_reference_logits MODEL IDS OUT [--int8-acts] [--f16-gelu] [--ggml-acts]
//                                            IDS: comma-separated ids
//
// --int8-acts rounds every matrix input as ember's and ggml's int8 activation
// groups do, to see how much of an engine's distance to exact math is that;
// --f16-gelu computes GELU as ggml does (through an f16 table); --ggml-acts
// rounds them as llama.cpp's dot products do (Q8_K blocks of 256 for K-quants).
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
  ember::test::ReferenceOptions options;
  for (int i = 4; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--int8-acts") {
      options.int8_acts = true;
    } else if (a == "--f16-gelu") {
      options.f16_gelu = true;
    } else if (a == "--ggml-acts") {
      options.ggml_acts = true;
    } else {
      argc = 0;  // usage
    }
  }
  if (argc < 4) {
    std::fprintf(
        stderr,
        "usage: ember_reference_logits MODEL IDS OUT [--int8-acts] [--f16-gelu] [--ggml-acts]\n");
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
  if (ember::Status s = ember::test::ReferenceForward(*model, ids, &logits, options); !s.ok()) {
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
