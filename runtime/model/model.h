// A loaded model: hyper-parameters and weights (views into the mapped GGUF),
// plus its tokenizer. Read-only after loading, so one Model can serve many
// sessions on different threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ops/matmul.h"
#include "ops/rope.h"
#include "platform/status.h"
#include "platform/streamed_memory.h"
#include "runtime/constrain/grammar_cache.h"
#include "runtime/gguf/gguf.h"
#include "runtime/model/config.h"
#include "runtime/text/tokenizer.h"

namespace ember {

// One layer's weights. Matrices are [rows, cols] (cols contiguous); vectors
// are floats. The optional ones are empty unless the layer's config asks for
// them (LayerConfig).
struct LayerWeights {
  std::vector<float> attn_norm;       // [n_embd]
  WeightView wq;                      // [n_head * head_dim, n_embd]
  WeightView wk;                      // [n_head_kv * head_dim, n_embd]
  WeightView wv;                      // [n_head_kv * head_dim, n_embd]
  std::vector<float> bq, bk, bv;      // [q_dim], [kv_dim], [kv_dim]  (attn_bias)
  std::vector<float> q_norm, k_norm;  // [head_dim] each             (qk_norm)
  WeightView wo;                      // [n_embd, n_head * head_dim]
  std::vector<float> post_attn_norm;  // [n_embd]                    (post_attn_norm)
  std::vector<float> ffn_norm;        // [n_embd]
  WeightView w_gate;                  // [n_ff, n_embd]
  WeightView w_up;                    // [n_ff, n_embd]
  WeightView w_down;                  // [n_embd, n_ff]
  std::vector<float> post_ffn_norm;   // [n_embd]                    (post_ffn_norm)
};

struct ModelWeights {
  WeightView token_embd;  // [n_vocab, n_embd]
  std::vector<LayerWeights> layers;
  std::vector<float> output_norm;  // [n_embd]
  WeightView output;               // [n_vocab, n_embd] (token_embd when tied)
  std::vector<float> rope_freqs;   // [n_rot / 2] or empty (RopeConfig::freq_factors)
};

// Whose arithmetic a model's sessions follow.
enum class Numerics {
  kEmber,  // ember's kernels (repacked weights): the fastest
  kGgml,   // llama.cpp's CPU arithmetic bit for bit (ops/ggml_numerics.h): the
           // same logits and greedy tokens as llama.cpp on x86-64 AVX-512
};

// What F32, F16 and BF16 matrices become at load.
enum class FloatWeights {
  kFloat,  // used as stored, multiplied in f32 (ops/fgemm.h): no loss (the default)
  kInt8,   // requantized to int8 groups (Q8x16): half an F16 model's bytes, lossy
};

// Called with the fraction of the weights loaded, in [0, 1], non-decreasing,
// the last call with 1; returns false to cancel loading (Code::kCancelled).
using LoadProgressFn = std::function<bool(float progress)>;

struct LoadOptions {
  // The tokenizer and what the metadata says, no weights (Session::Create
  // refuses such a model). A vocab_only load also accepts an architecture
  // ember cannot run (runnable() says why not).
  bool vocab_only = false;
  Numerics numerics = Numerics::kEmber;
  FloatWeights float_weights = FloatWeights::kFloat;
  // Map the file or read it into memory (platform/mapped_file.h). A mapped
  // file is checked at the end of loading: if it shrank meanwhile, the load
  // fails rather than leaving pages that would SIGBUS when read.
  MapMode map_mode = MapMode::kAuto;
  // The most bytes the file, one tensor or one repacked matrix may take
  // (kAddressSpaceLimit; tests pass less to check the 32-bit path).
  uint64_t address_limit = kAddressSpaceLimit;
};

class Model {
 public:
  static Status Load(const std::string& path, const LoadOptions& options,
                     const LoadProgressFn& progress, std::unique_ptr<Model>* out);
  // The same with the other options at their defaults.
  static Status Load(const std::string& path, const LoadProgressFn& progress,
                     std::unique_ptr<Model>* out, bool vocab_only = false,
                     Numerics numerics = Numerics::kEmber,
                     FloatWeights float_weights = FloatWeights::kFloat);
  bool vocab_only() const { return vocab_only_; }
  Numerics numerics() const { return numerics_; }

  const ModelConfig& config() const { return config_; }
  // Ok when ember can run this model's architecture; otherwise (a vocab_only
  // load of another architecture) the reason.
  const Status& runnable() const { return runnable_; }
  const ModelWeights& weights() const { return weights_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  // Grammars compiled for this vocabulary, shared by every sampler chain on
  // the model (internally synchronized).
  GrammarCache& grammar_cache() const { return *grammar_cache_; }
  const GgufFile& gguf() const { return *gguf_; }
  const std::string& path() const { return path_; }
  // Total bytes of the weight tensors in the file.
  uint64_t weight_bytes() const;
  // Bytes of the matrices a decode step reads, as loaded (native layouts and
  // tensors used in place): the output and every layer's, each once; an
  // embedding of its own (only a row per token) is not counted.
  uint64_t loaded_weight_bytes() const { return loaded_weight_bytes_; }
  // Identifies the file's contents: a hash of its header (metadata and tensor
  // infos), its size and the first bytes of every tensor. Saved session state
  // records it so that another model's state is refused.
  uint64_t fingerprint() const { return fingerprint_; }

 private:
  Status RepackWeights(const LoadProgressFn& progress, uint64_t address_limit);
  uint64_t CountLoadedWeightBytes() const;
  // Moves the float matrices used as stored (`views`: not repacked, a tied
  // embedding with its output) into float_storage_ (tensor_at: the tensor
  // behind each view's data, whose file pages go after the copy), calling
  // advance(bytes) after each matrix; false when advance said stop (the
  // model is then discarded by Load).
  bool CopyFloatWeights(const std::vector<WeightView*>& views,
                        const std::unordered_map<const uint8_t*, const GgufTensorInfo*>& tensor_at,
                        uint64_t address_limit, const std::function<bool(uint64_t)>& advance);

  std::string path_;
  uint64_t fingerprint_ = 0;
  uint64_t loaded_weight_bytes_ = 0;
  bool vocab_only_ = false;
  Numerics numerics_ = Numerics::kEmber;
  FloatWeights float_weights_ = FloatWeights::kFloat;
  // Some weights are read from the file mapping (a native file, or an
  // embedding kept in its GGUF type): their pages stay after loading.
  bool maps_weights_ = false;
  std::unique_ptr<GgufFile> gguf_;
  ModelConfig config_;
  Status runnable_;
  ModelWeights weights_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<GrammarCache> grammar_cache_;
  StreamedBuffer float_storage_;                       // float matrices used as stored, copied
  uint64_t float_bytes_ = 0;                           // float_storage_'s size
  StreamedBuffer packed_storage_;                      // the repacked matrices' bytes
  std::vector<std::unique_ptr<PackedMatrix>> packed_;  // native layouts of repacked weights
};

}  // namespace ember
