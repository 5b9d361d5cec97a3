// ember_make_model: writes a llama-architecture GGUF with the shape of a real
// model, random weights and a real vocabulary, for side-by-side benchmarks
// with llama.cpp (bench/compare.sh). The weights are noise; the shapes, types
// and bytes per token are those of the real model, which is what speed depends on.
//
//   ember_make_model --shape tinyllama|smollm2 --type q4_0|q8_0 --vocab PATH.gguf
//                    -o OUT.gguf [--seed S]
//
// --vocab is any GGUF whose tokenizer.* keys are copied (a ggml-vocab-*.gguf or a
// real model); its token count becomes the vocabulary size. The file is written
// to OUT.gguf.tmp and renamed, so an interrupted run leaves no truncated OUT.gguf.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include <omp.h>

#include "support/model_builder.h"

namespace {

int Usage(FILE* f) {
  std::fprintf(f,
               "usage: ember_make_model --shape tinyllama|smollm2 --type q4_0|q8_0 "
               "--vocab PATH.gguf -o OUT.gguf [--seed S]\n\n"
               "  tinyllama  TinyLlama-1.1B shape: n_embd 2048, 22 layers, 32 heads, 4 KV heads,\n"
               "             n_ff 5632, separate output matrix (vocab: ggml-vocab-llama-spm.gguf)\n"
               "  smollm2    SmolLM2-135M shape: n_embd 576, 30 layers, 9 heads, 3 KV heads,\n"
               "             n_ff 1536, output tied to the embedding (vocab: the real model)\n"
               "Both: context_length 2048, rope.freq_base 10000, norms F32, all matrices --type.\n");
  return f == stdout ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string shape, type, vocab, out;
  uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ember_make_model: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--shape") {
      shape = value();
    } else if (a == "--type") {
      type = value();
    } else if (a == "--vocab") {
      vocab = value();
    } else if (a == "-o" || a == "--output") {
      out = value();
    } else if (a == "--seed") {
      const std::string v = value();
      char* end = nullptr;
      seed = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0') {
        std::fprintf(stderr, "ember_make_model: --seed expects an integer, got '%s'\n", v.c_str());
        return 2;
      }
    } else if (a == "-h" || a == "--help") {
      return Usage(stdout);
    } else {
      std::fprintf(stderr, "ember_make_model: unknown argument '%s'\n", a.c_str());
      return Usage(stderr);
    }
  }
  if (shape.empty() || type.empty() || vocab.empty() || out.empty()) return Usage(stderr);

  ember::test::TinyModelSpec spec;
  if (shape == "tinyllama") {
    spec.n_embd = 2048;
    spec.n_layer = 22;
    spec.n_head = 32;
    spec.n_head_kv = 4;
    spec.n_ff = 5632;
    spec.tied_output = false;
  } else if (shape == "smollm2") {
    spec.n_embd = 576;
    spec.n_layer = 30;
    spec.n_head = 9;
    spec.n_head_kv = 3;
    spec.n_ff = 1536;
    spec.tied_output = true;
  } else {
    std::fprintf(stderr, "ember_make_model: unknown --shape '%s' (tinyllama, smollm2)\n",
                 shape.c_str());
    return 2;
  }
  if (type == "q4_0") {
    spec.weight_type = ember::GgmlType::kQ4_0;
  } else if (type == "q8_0") {
    spec.weight_type = ember::GgmlType::kQ8_0;
  } else {
    std::fprintf(stderr, "ember_make_model: unknown --type '%s' (q4_0, q8_0)\n", type.c_str());
    return 2;
  }
  spec.n_ctx_train = 2048;
  spec.seed = seed;
  spec.vocab_path = std::filesystem::absolute(vocab).string();
  spec.name = "ember synthetic " + shape + "-shape " + type;
  spec.parallel_fill = true;

  const auto t0 = std::chrono::steady_clock::now();
  const std::string tmp = out + ".tmp";
  ember::Status s = ember::test::BuildTinyModel(spec, tmp);
  if (!s.ok()) {
    std::remove(tmp.c_str());
    std::fprintf(stderr, "ember_make_model: %s\n", s.message().c_str());
    return 1;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, out, ec);
  if (ec) {
    std::fprintf(stderr, "ember_make_model: cannot rename '%s' to '%s': %s\n", tmp.c_str(),
                 out.c_str(), ec.message().c_str());
    return 1;
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "ember_make_model: wrote %s (%.1f MiB) in %.1f s with %d threads\n",
               out.c_str(), static_cast<double>(std::filesystem::file_size(out)) / (1 << 20),
               secs, omp_get_max_threads());
  return 0;
}
