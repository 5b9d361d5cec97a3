// ember_forward_trace: writes every intermediate activation of one forward
// pass over a prompt, to compare ember's arithmetic with llama.cpp's operation
// by operation (peer_tool logits --dump DIR writes llama.cpp's side).
//
//   ember_forward_trace MODEL PROMPT OUT_DIR [ember|ggml] [THREADS]
//
// OUT_DIR/index.txt lists "file name layer n_tokens width", one line per
// activation, in the order computed; each file holds n_tokens * width f32
// (little-endian, token-major).
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "runtime/model/model.h"
#include "runtime/session/session.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: ember_forward_trace MODEL PROMPT OUT_DIR [ember|ggml] [THREADS]\n");
    return 2;
  }
  const std::string numerics = argc > 4 ? argv[4] : "ggml";
  const ember::Numerics num =
      numerics == "ember" ? ember::Numerics::kEmber : ember::Numerics::kGgml;
  std::unique_ptr<ember::Model> model;
  if (ember::Status s = ember::Model::Load(argv[1], nullptr, &model, false, num); !s.ok()) {
    std::fprintf(stderr, "ember_forward_trace: %s\n", s.message().c_str());
    return 1;
  }
  const std::vector<int32_t> ids = model->tokenizer().Encode(argv[2], true, true);
  ember::SessionParams sp;
  sp.n_ctx = 2048;
  sp.n_threads = sp.n_threads_batch = argc > 5 ? std::atoi(argv[5]) : 2;
  sp.n_batch = 512;
  std::unique_ptr<ember::Session> session;
  if (ember::Status s = ember::Session::Create(*model, sp, &session); !s.ok()) {
    std::fprintf(stderr, "ember_forward_trace: %s\n", s.message().c_str());
    return 1;
  }
  const std::string dir = argv[3];
  std::FILE* index = std::fopen((dir + "/index.txt").c_str(), "w");
  if (index == nullptr) {
    std::fprintf(stderr, "ember_forward_trace: cannot write %s/index.txt\n", dir.c_str());
    return 1;
  }
  int counter = 0;
  session->SetTrace(
      [&](const char* name, int64_t layer, const float* data, int64_t n_tokens, int64_t width) {
        char file[64];
        std::snprintf(file, sizeof(file), "%04d.f32", counter++);
        if (std::FILE* f = std::fopen((dir + "/" + file).c_str(), "wb")) {
          std::fwrite(data, sizeof(float), static_cast<size_t>(n_tokens * width), f);
          std::fclose(f);
        }
        std::fprintf(index, "%s %s %lld %lld %lld\n", file, name, static_cast<long long>(layer),
                     static_cast<long long>(n_tokens), static_cast<long long>(width));
      });
  if (ember::Status s = session->Decode(ids); !s.ok()) {
    std::fprintf(stderr, "ember_forward_trace: %s\n", s.message().c_str());
    return 1;
  }
  std::fclose(index);
  std::fprintf(stderr, "ember_forward_trace: %d activations of %zu tokens in %s\n", counter,
               ids.size(), dir.c_str());
  return 0;
}
