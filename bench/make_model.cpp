// ember_make_model: writes a GGUF with the shape of a real model, random
// weights and a real vocabulary, for side-by-side benchmarks and validation
// with llama.cpp (bench/compare.sh, scripts/validate.sh). The weights are
// noise; the shapes, types and bytes per token are those of the real model,
// which is what speed depends on.
//
//   ember_make_model --shape tinyllama|smollm2|qwen3-0.6b|llama3.2-1b
//                    --type q4_0|q8_0|q4_k_m|f16 --vocab PATH.gguf -o OUT.gguf [--seed S]
//
// --vocab is any GGUF whose tokenizer.* keys are copied (a ggml-vocab-*.gguf or a
// real model); its token count becomes the vocabulary size. The file is written
// to OUT.gguf.tmp and renamed, so an interrupted run leaves no truncated OUT.gguf.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include <omp.h>

#include "support/model_builder.h"

namespace {

int Usage(FILE* f) {
  std::fprintf(
      f,
      "usage: ember_make_model --shape tinyllama|smollm2|qwen3-0.6b|llama3.2-1b "
      "--type q4_0|q8_0|q4_k_m|f16 --vocab PATH.gguf -o OUT.gguf [--seed S]\n\n"
      "  tinyllama    TinyLlama-1.1B shape: n_embd 2048, 22 layers, 32 heads, 4 KV heads,\n"
      "               n_ff 5632, separate output matrix (vocab: ggml-vocab-llama-spm.gguf)\n"
      "  smollm2      SmolLM2-135M shape: n_embd 576, 30 layers, 9 heads, 3 KV heads,\n"
      "               n_ff 1536, output tied to the embedding (vocab: the real model)\n"
      "  qwen3-0.6b   Qwen3-0.6B (qwen3): n_embd 1024, 28 layers, 16 heads, 8 KV heads,\n"
      "               head_dim 128, n_ff 3072, tied, rope base 1e6 (vocab: ggml-vocab-qwen2)\n"
      "  llama3.2-1b  Llama-3.2-1B (llama): n_embd 2048, 16 layers, 32 heads, 8 KV heads,\n"
      "               n_ff 8192, tied, rope base 5e5 with Llama 3's rope_freqs\n"
      "               (vocab: ggml-vocab-llama-bpe)\n"
      "Norms F32, matrices --type; q4_k_m: Q4_K, with Q6_K for attn_v and ffn_down of\n"
      "the first and last eighth of the layers and every third between (llama-quantize's\n"
      "choice) and for an untied output.\n");
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
  } else if (shape == "qwen3-0.6b") {
    spec.arch = "qwen3";
    spec.n_embd = 1024;
    spec.n_layer = 28;
    spec.n_head = 16;
    spec.n_head_kv = 8;
    spec.head_dim = 128;
    spec.n_ff = 3072;
    spec.tied_output = true;
    spec.rope_freq_base = 1000000.0f;
  } else if (shape == "llama3.2-1b") {
    spec.n_embd = 2048;
    spec.n_layer = 16;
    spec.n_head = 32;
    spec.n_head_kv = 8;
    spec.n_ff = 8192;
    spec.tied_output = true;
    spec.rope_freq_base = 500000.0f;
    spec.llama3_rope = true;
  } else {
    std::fprintf(stderr,
                 "ember_make_model: unknown --shape '%s' (tinyllama, smollm2, qwen3-0.6b, "
                 "llama3.2-1b)\n",
                 shape.c_str());
    return 2;
  }
  if (type == "q4_0") {
    spec.weight_type = ember::GgmlType::kQ4_0;
  } else if (type == "q8_0") {
    spec.weight_type = ember::GgmlType::kQ8_0;
  } else if (type == "f16") {
    spec.weight_type = ember::GgmlType::kF16;  // a source for llama-quantize
  } else if (type == "q4_k_m") {
    spec.weight_type = ember::GgmlType::kQ4_K;
    const int64_t n = spec.n_layer;
    for (int64_t l = 0; l < n; ++l) {
      // llama-quantize's use_more_bits(l, n).
      if (l < n / 8 || l >= 7 * n / 8 || (l - n / 8) % 3 == 2) {
        const std::string p = "blk." + std::to_string(l) + ".";
        spec.tensor_types[p + "attn_v.weight"] = ember::GgmlType::kQ6_K;
        spec.tensor_types[p + "ffn_down.weight"] = ember::GgmlType::kQ6_K;
      }
    }
    spec.tensor_types["output.weight"] = ember::GgmlType::kQ6_K;
  } else {
    std::fprintf(stderr, "ember_make_model: unknown --type '%s' (q4_0, q8_0, q4_k_m, f16)\n",
                 type.c_str());
    return 2;
  }
  if (shape == "qwen3-0.6b" || shape == "llama3.2-1b") {
    // Logits of a real model's spread (std ~3) through the tied head.
    spec.embd_std = 3.0f / std::sqrt(static_cast<float>(spec.n_embd));
  }
  spec.n_ctx_train = shape == "qwen3-0.6b" ? 40960 : shape == "llama3.2-1b" ? 131072 : 2048;
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
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "ember_make_model: wrote %s (%.1f MiB) in %.1f s with %d threads\n",
               out.c_str(), static_cast<double>(std::filesystem::file_size(out)) / (1 << 20), secs,
               omp_get_max_threads());
  return 0;
}
