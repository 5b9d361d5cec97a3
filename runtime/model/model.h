// A loaded model: hyper-parameters and weights (views into the mapped GGUF),
// plus its tokenizer. Read-only after loading, so one Model can serve many
// sessions on different threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ops/matmul.h"
#include "ops/rope.h"
#include "platform/status.h"
#include "runtime/gguf/gguf.h"
#include "runtime/text/tokenizer.h"

namespace ember {

struct Hparams {
  std::string arch;  // general.architecture
  std::string name;  // general.name
  int64_t n_vocab = 0;
  int64_t n_embd = 0;  // model width
  int64_t n_layer = 0;
  int64_t n_head = 0;     // query heads
  int64_t n_head_kv = 0;  // key/value heads (GQA: n_head % n_head_kv == 0)
  int64_t head_dim = 0;   // n_embd / n_head unless the file says otherwise
  int64_t n_ff = 0;       // feed-forward width
  int64_t n_ctx_train = 0;
  int n_rot = 0;  // rotated dims per head
  float rope_freq_base = 10000.0f;
  float rope_freq_scale = 1.0f;
  RopeMode rope_mode = RopeMode::kNormal;
  float rms_eps = 1e-5f;
  bool tied_output = false;  // the LM head reuses token_embd

  int64_t q_dim() const { return n_head * head_dim; }
  int64_t kv_dim() const { return n_head_kv * head_dim; }
};

struct LayerWeights {
  std::vector<float> attn_norm;  // [n_embd]
  WeightView wq;                 // [n_head * head_dim, n_embd]
  WeightView wk;                 // [n_head_kv * head_dim, n_embd]
  WeightView wv;                 // [n_head_kv * head_dim, n_embd]
  WeightView wo;                 // [n_embd, n_head * head_dim]
  std::vector<float> ffn_norm;   // [n_embd]
  WeightView w_gate;             // [n_ff, n_embd]
  WeightView w_up;               // [n_ff, n_embd]
  WeightView w_down;             // [n_embd, n_ff]
};

struct ModelWeights {
  WeightView token_embd;  // [n_vocab, n_embd]
  std::vector<LayerWeights> layers;
  std::vector<float> output_norm;  // [n_embd]
  WeightView output;               // [n_vocab, n_embd] (token_embd when tied)
  std::vector<float> rope_freqs;   // [n_rot / 2] or empty
};

// Whose arithmetic a model's sessions follow.
enum class Numerics {
  kEmber,  // ember's kernels (repacked weights): the fastest
  kGgml,   // llama.cpp's CPU arithmetic bit for bit (ops/ggml_numerics.h): the
           // same logits and greedy tokens as llama.cpp on x86-64 AVX-512
};

// Called with the fraction of the weights loaded, in [0, 1], non-decreasing,
// the last call with 1; returns false to cancel loading (Code::kCancelled).
using LoadProgressFn = std::function<bool(float progress)>;

class Model {
 public:
  // vocab_only: hyperparameters and the tokenizer, no weights (Session::Create
  // refuses such a model).
  static Status Load(const std::string& path, const LoadProgressFn& progress,
                     std::unique_ptr<Model>* out, bool vocab_only = false,
                     Numerics numerics = Numerics::kEmber);
  bool vocab_only() const { return vocab_only_; }
  Numerics numerics() const { return numerics_; }

  const Hparams& hparams() const { return hparams_; }
  const ModelWeights& weights() const { return weights_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const GgufFile& gguf() const { return *gguf_; }
  const std::string& path() const { return path_; }
  // Total bytes of the weight tensors in the file.
  uint64_t weight_bytes() const;
  // Bytes of the weights as loaded (native layouts + tensors used in place).
  uint64_t loaded_weight_bytes() const;
  // Identifies the file's contents: a hash of its header (metadata and tensor
  // infos), its size and the first bytes of every tensor. Saved session state
  // records it so that another model's state is refused.
  uint64_t fingerprint() const { return fingerprint_; }

 private:
  Status RepackWeights(const LoadProgressFn& progress);

  std::string path_;
  uint64_t fingerprint_ = 0;
  bool vocab_only_ = false;
  Numerics numerics_ = Numerics::kEmber;
  // Some weights are read from the file mapping (a native file, or an
  // embedding kept in its GGUF type): their pages stay after loading.
  bool maps_weights_ = false;
  std::unique_ptr<GgufFile> gguf_;
  Hparams hparams_;
  ModelWeights weights_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::vector<std::unique_ptr<PackedMatrix>> packed_;  // native layouts of repacked weights
};

}  // namespace ember
