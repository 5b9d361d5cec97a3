// Builds small GGUF models of the architectures ember runs (llama, qwen2,
// qwen3, gemma3) with random weights and a real vocabulary (from
// ../shared/vocab), using ember's own GGUF writer. The tensors and keys are
// the ones each architecture's real files have (biases for qwen2, q/k norms
// for qwen3 and gemma3, Gemma's extra norms and sliding window, ...).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "platform/status.h"
#include "quant/ggml_type.h"

namespace ember::test {

struct TinyModelSpec {
  std::string arch = "llama";
  std::string name = "ember tiny test model";        // general.name
  std::string vocab_file = "ggml-vocab-gpt-2.gguf";  // in SharedDir()/vocab
  // An absolute path to any GGUF whose tokenizer.* keys to copy (a vocab file
  // or a real model); when set it overrides vocab_file.
  std::string vocab_path;
  int64_t n_embd = 64;
  int64_t n_layer = 2;
  int64_t n_head = 4;
  int64_t n_head_kv = 2;
  int64_t n_ff = 96;
  int64_t n_ctx_train = 256;
  int64_t head_dim = 0;  // 0: n_embd / n_head (written as attention.key_length when set)
  float rope_freq_base = 10000.0f;
  // gemma3: attention.sliding_window (0: not written, every layer global).
  int64_t sliding_window = 0;
  // llama: write a rope_freqs tensor with Llama 3's frequency factors
  // (factor 32, low 1, high 4, original context 8192, as Llama 3.2).
  bool llama3_rope = false;
  // llama: a rope_freqs tensor with these factors instead (n_rot / 2 of them).
  std::vector<float> rope_freqs;
  GgmlType weight_type = GgmlType::kQ8_0;  // matrices; norms stay F32
  // Per-matrix types instead of weight_type ("blk.0.ffn_down.weight" -> Q6_K).
  // The values drawn do not depend on the types: only their quantization does.
  std::map<std::string, GgmlType> tensor_types;
  bool tied_output = true;
  // Standard deviation of the embedding values. With a tied LM head the
  // logits spread by embd_std * sqrt(n_embd): 1 makes nearly one-hot
  // distributions at real widths, ~3 / sqrt(n_embd) a real model's spread.
  float embd_std = 1.0f;
  uint64_t seed = 1;
  // Fill weights with a counter-based generator, rows in parallel (OpenMP):
  // for big synthetic models (bench/make_model.cpp). Values are near-normal
  // (sum of 4 uniforms) and differ from the default sequential mt19937 stream,
  // which the tests keep using.
  bool parallel_fill = false;
  // Test hooks: replace a tensor's dims or type ("blk.0.attn_q.weight" -> ...).
  std::map<std::string, std::vector<uint64_t>> dims_override;
  std::map<std::string, uint32_t> type_override;  // raw GGML type ids
  // Test hook: multiply a tensor's drawn values ("blk.0.attn_norm.weight" ->
  // INFINITY makes that layer's activations infinite). Not with parallel_fill (an error).
  std::map<std::string, float> value_scale;
  // Test hooks for bad metadata: keys and tensors left out, integer and string
  // keys written with another value (or added).
  std::set<std::string> omit;
  std::map<std::string, uint32_t> uint_keys;
  std::map<std::string, std::string> string_keys;
};

// Writes the model to `path`.
Status BuildTinyModel(const TinyModelSpec& spec, const std::string& path);

// A path to a cached tiny model built from the default spec (built once per run).
std::string DefaultTinyModel();

// The tests' tiny model of an architecture, with the real vocabulary of its
// family: "llama", "llama3" (Llama 3's RoPE factors, llama-bpe vocab),
// "llama-factors" (strong RoPE factors), "qwen2", "qwen3" (head_dim 32, so
// q_dim 128 != n_embd 64), "gemma3" (6 layers: 5 with a window of 8, 1 global).
// Untied LM heads scaled to logits of about unit spread.
TinyModelSpec ArchSpec(const std::string& which);
// Builds ArchSpec(which) under the temp dir (once per run) and returns its path,
// or "" on failure.
std::string BuildArchModel(const std::string& which);

}  // namespace ember::test
