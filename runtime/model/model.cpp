#include "runtime/model/model.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "ops/fgemm.h"
#include "ops/kernels.h"
#include "ops/vec_dot.h"
#include "platform/hash.h"
#include "quant/quantize.h"
#include "runtime/arch/architecture.h"

namespace ember {
namespace {

std::string Dims(const GgufTensorInfo& t) {
  std::string s = "[";
  for (uint32_t d = 0; d < t.n_dims; ++d) s += (d ? ", " : "") + std::to_string(t.ne[d]);
  return s + "]";
}

std::string Dims(std::initializer_list<int64_t> ne) {
  std::string s = "[";
  bool first = true;
  for (int64_t d : ne) {
    s += (first ? "" : ", ") + std::to_string(d);
    first = false;
  }
  return s + "]";
}

class WeightLoader {
 public:
  WeightLoader(const GgufFile& f, Numerics numerics) : f_(f), numerics_(numerics) {}

  Status Find(const std::string& name, const GgufTensorInfo** out) const {
    *out = f_.FindTensor(name);
    if (*out == nullptr) return BadFormat("tensor '" + name + "' is missing");
    return Status::Ok();
  }

  Status CheckShape(const GgufTensorInfo& t, std::initializer_list<int64_t> ne) const {
    bool ok = t.n_dims == ne.size();
    size_t d = 0;
    for (int64_t x : ne) ok = ok && t.ne[d++] == static_cast<uint64_t>(x);
    if (!ok) {
      return BadFormat("tensor '" + t.name + "' has shape " + Dims(t) + ", expected " + Dims(ne) +
                       " for this architecture");
    }
    return Status::Ok();
  }

  // A matrix [rows, cols] in GGUF order ne = {cols, rows}.
  Status Matrix(const std::string& name, int64_t rows, int64_t cols, WeightView* out) const {
    const GgufTensorInfo* t;
    EMBER_RETURN_IF_ERROR(Find(name, &t));
    return MatrixFrom(*t, rows, cols, out);
  }

  Status MatrixFrom(const GgufTensorInfo& t, int64_t rows, int64_t cols, WeightView* out) const {
    EMBER_RETURN_IF_ERROR(CheckShape(t, {cols, rows}));
    if (numerics_ == Numerics::kGgml) {
      // llama.cpp's arithmetic is reproduced for the types whose CPU path it
      // follows here (ops/ggml_numerics.h); the rows are used as stored.
      // llama.cpp repacks Q4_0 matrices of 8k rows at load on x86 into
      // kernels of their own arithmetic; a tied output is a repacked copy of
      // the embedding (the lookups read the embedding as stored).
      const bool repacked = rows % 8 == 0;
      out->ggml_dot = FindGgmlVecDot(t.type, repacked);
      if (out->ggml_dot == nullptr) {
        return Unsupported("tensor '" + t.name + "' has type " + GgmlTypeName(t.type) +
                           ", whose llama.cpp arithmetic --numerics ggml does not reproduce "
                           "(it does Q4_0, Q4_1 and Q8_0)");
      }
    } else if (const GgmlTypeTraits* traits = FindGgmlType(static_cast<uint32_t>(t.type));
               traits != nullptr && traits->retired != nullptr) {
      return Unsupported("tensor '" + t.name + "' has type " + traits->name +
                         ", a native layout this ember no longer reads (" + traits->retired +
                         "): run `ember quantize --type native` again on the source GGUF");
    } else if (!CanRepack(t.type) && FindVecDot(t.type) == nullptr && !IsNativeType(t.type)) {
      return Unsupported("tensor '" + t.name + "' has type " + GgmlTypeName(t.type) +
                         ", which ember cannot multiply yet (supported: F32, F16, BF16, Q8_0, "
                         "Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, "
                         "IQ4_XS, and ember's own EMBER_* layouts)");
    }
    out->type = t.type;
    out->data = t.data;
    out->n_rows = rows;
    out->n_cols = cols;
    out->row_bytes = GgmlRowBytes(t.type, static_cast<uint64_t>(cols));
    return Status::Ok();
  }

  // A vector of n floats (F32, or any type we can dequantize).
  Status Vector(const std::string& name, int64_t n, std::vector<float>* out) const {
    const GgufTensorInfo* t;
    EMBER_RETURN_IF_ERROR(Find(name, &t));
    EMBER_RETURN_IF_ERROR(CheckShape(*t, {n}));
    if (!CanDequantize(t->type)) {
      return Unsupported("tensor '" + name + "' has type " + GgmlTypeName(t->type) +
                         ", which ember cannot read yet");
    }
    out->resize(static_cast<size_t>(n));
    DequantizeRow(t->type, t->data, out->data(), n);
    return Status::Ok();
  }

 private:
  const GgufFile& f_;
  Numerics numerics_;
};

// Reads the architecture's config. Fills *runnable with why ember cannot run
// it (an unknown architecture, keys it cannot follow); a vocab_only load goes
// on then, with what the common keys say.
Status ReadConfig(const GgufFile& f, ModelConfig* c, Status* runnable) {
  EMBER_RETURN_IF_ERROR(f.GetString("general.architecture", &c->arch));
  c->name = f.GetStringOr("general.name", "");
  const ArchKeys keys(f, c->arch);
  const Architecture* arch = FindArchitecture(c->arch);
  if (arch == nullptr) {
    *runnable = Unsupported("unsupported architecture '" + c->arch +
                            "' (supported: " + SupportedArchitectures() + ")");
    ModelConfig guess = *c;  // best effort, for `ember info`
    if (ReadDecoderKeys(keys, RopeMode::kNormal, &guess).ok()) *c = std::move(guess);
    return Status::Ok();
  }
  *runnable = arch->configure(keys, c);
  // One window size for all windowed layers: their caches share one ring.
  for (const LayerConfig& L : c->layers) {
    if (runnable->ok() && L.window != 0 && L.window != c->max_window()) {
      *runnable = Unsupported("layers with different sliding windows are not supported");
    }
  }
  return Status::Ok();
}

// Loads the weights each layer's config asks for, under GGUF's tensor names.
Status LoadWeights(const GgufFile& f, const WeightLoader& w, ModelConfig* c, ModelWeights* mw) {
  const int64_t E = c->n_embd, V = c->n_vocab;
  const GgufTensorInfo* embd;
  EMBER_RETURN_IF_ERROR(w.Find("token_embd.weight", &embd));
  EMBER_RETURN_IF_ERROR(w.CheckShape(*embd, {E, V}));
  if (!CanDequantize(embd->type) && !IsNativeType(embd->type)) {
    return Unsupported("tensor 'token_embd.weight' has type " +
                       std::string(GgmlTypeName(embd->type)) + ", which ember cannot read yet");
  }
  mw->token_embd = {embd->type, embd->data, V, E,
                    GgmlRowBytes(embd->type, static_cast<uint64_t>(E))};
  EMBER_RETURN_IF_ERROR(w.Vector("output_norm.weight", E, &mw->output_norm));
  if (const GgufTensorInfo* out_t = f.FindTensor("output.weight")) {
    EMBER_RETURN_IF_ERROR(w.MatrixFrom(*out_t, V, E, &mw->output));
  } else {
    c->tied_output = true;
    EMBER_RETURN_IF_ERROR(w.MatrixFrom(*embd, V, E, &mw->output));
  }
  for (const RopeConfig& r : c->ropes) {
    if (r.freq_factors && mw->rope_freqs.empty()) {
      EMBER_RETURN_IF_ERROR(w.Vector("rope_freqs.weight", r.n_rot / 2, &mw->rope_freqs));
    }
  }
  const int64_t Q = c->q_dim(), KV = c->kv_dim(), F = c->n_ff, hd = c->head_dim;
  mw->layers.resize(static_cast<size_t>(c->n_layer));
  for (int64_t l = 0; l < c->n_layer; ++l) {
    const LayerConfig& cfg = c->layer(l);
    LayerWeights& L = mw->layers[static_cast<size_t>(l)];
    const std::string p = "blk." + std::to_string(l) + ".";
    EMBER_RETURN_IF_ERROR(w.Vector(p + "attn_norm.weight", E, &L.attn_norm));
    EMBER_RETURN_IF_ERROR(w.Matrix(p + "attn_q.weight", Q, E, &L.wq));
    EMBER_RETURN_IF_ERROR(w.Matrix(p + "attn_k.weight", KV, E, &L.wk));
    EMBER_RETURN_IF_ERROR(w.Matrix(p + "attn_v.weight", KV, E, &L.wv));
    if (cfg.attn_bias) {
      EMBER_RETURN_IF_ERROR(w.Vector(p + "attn_q.bias", Q, &L.bq));
      EMBER_RETURN_IF_ERROR(w.Vector(p + "attn_k.bias", KV, &L.bk));
      EMBER_RETURN_IF_ERROR(w.Vector(p + "attn_v.bias", KV, &L.bv));
    }
    if (cfg.qk_norm) {
      EMBER_RETURN_IF_ERROR(w.Vector(p + "attn_q_norm.weight", hd, &L.q_norm));
      EMBER_RETURN_IF_ERROR(w.Vector(p + "attn_k_norm.weight", hd, &L.k_norm));
    }
    EMBER_RETURN_IF_ERROR(w.Matrix(p + "attn_output.weight", E, Q, &L.wo));
    if (cfg.post_attn_norm) {
      EMBER_RETURN_IF_ERROR(w.Vector(p + "post_attention_norm.weight", E, &L.post_attn_norm));
    }
    EMBER_RETURN_IF_ERROR(w.Vector(p + "ffn_norm.weight", E, &L.ffn_norm));
    EMBER_RETURN_IF_ERROR(w.Matrix(p + "ffn_gate.weight", F, E, &L.w_gate));
    EMBER_RETURN_IF_ERROR(w.Matrix(p + "ffn_up.weight", F, E, &L.w_up));
    EMBER_RETURN_IF_ERROR(w.Matrix(p + "ffn_down.weight", E, F, &L.w_down));
    if (cfg.post_ffn_norm) {
      EMBER_RETURN_IF_ERROR(w.Vector(p + "post_ffw_norm.weight", E, &L.post_ffn_norm));
    }
  }
  return Status::Ok();
}

}  // namespace

Status Model::Load(const std::string& path, const LoadProgressFn& progress,
                   std::unique_ptr<Model>* out, bool vocab_only, Numerics numerics,
                   FloatWeights float_weights) {
  LoadOptions o;
  o.vocab_only = vocab_only;
  o.numerics = numerics;
  o.float_weights = float_weights;
  return Load(path, o, progress, out);
}

Status Model::Load(const std::string& path, const LoadOptions& options,
                   const LoadProgressFn& progress, std::unique_ptr<Model>* out) {
  const bool vocab_only = options.vocab_only;
  const Numerics numerics = options.numerics;
  auto m = std::unique_ptr<Model>(new Model());
  m->path_ = path;
  m->numerics_ = numerics;
  m->float_weights_ = options.float_weights;
  EMBER_RETURN_IF_ERROR(GgufFile::Open(path, &m->gguf_, options.map_mode, options.address_limit));
  const GgufFile& f = *m->gguf_;
  {
    Fnv1a64 h;
    h.Update(f.file_data(), static_cast<size_t>(f.data_offset()));
    h.UpdateValue(static_cast<uint64_t>(f.file_size()));
    for (const GgufTensorInfo& t : f.tensors()) {
      h.Update(t.data, static_cast<size_t>(std::min<uint64_t>(t.n_bytes, 64)));
    }
    m->fingerprint_ = h.digest();
  }
  auto with_path = [&path](const Status& s) { return Status(s.code(), path + ": " + s.message()); };

  ModelConfig& c = m->config_;
  if (Status s = ReadConfig(f, &c, &m->runnable_); !s.ok()) return with_path(s);
  if (!m->runnable_.ok() && !vocab_only) return with_path(m->runnable_);
  if (numerics == Numerics::kGgml && c.arch != "llama") {
    return with_path(
        Unsupported("--numerics ggml reproduces llama.cpp's arithmetic for the llama "
                    "architecture only, not '" +
                    c.arch + "'"));
  }

  VocabData vocab;
  if (Status s = LoadVocab(f, &vocab); !s.ok()) return with_path(s);
  if (Status s = Tokenizer::Create(std::move(vocab), &m->tokenizer_); !s.ok()) return with_path(s);
  c.n_vocab = m->tokenizer_->n_vocab();
  m->grammar_cache_ = std::make_unique<GrammarCache>(*m->tokenizer_);
  // Nothing reads the vocabulary arrays after this (the tokenizer has its own
  // tables); free them before the weights are repacked, the peak of loading.
  m->gguf_->ReleaseLargeArrays(1024);
  if (vocab_only) {
    m->vocab_only_ = true;
    c.tied_output = f.FindTensor("output.weight") == nullptr;
    m->gguf_->ReleaseAllPages();
    EMBER_RETURN_IF_ERROR(f.CheckSize());
    if (progress && !progress(1.0f)) return Status(Code::kCancelled, "model loading was cancelled");
    *out = std::move(m);
    return Status::Ok();
  }

  WeightLoader w(f, numerics);
  if (Status s = LoadWeights(f, w, &c, &m->weights_); !s.ok()) return with_path(s);
  if (numerics == Numerics::kGgml) {
    m->maps_weights_ = true;  // every matrix is read where it lies in the file
  } else if (Status s = m->RepackWeights(progress, options.address_limit); !s.ok()) {
    return s.code() == Code::kCancelled ? s : with_path(s);
  }
  // The tokenizer and the packed weights hold what they need of the file now.
  // Left resident so far: the header (SmolLM2: 2.8 MiB of vocabulary and
  // merges) and the pages two tensors share, which per-tensor releases keep
  // (1 MiB). Weights read in place (a native file, an embedding kept in its
  // GGUF type) keep their pages: only the header goes then.
  if (m->maps_weights_) {
    m->gguf_->ReleaseHeaderPages();
  } else {
    m->gguf_->ReleaseAllPages();
  }
  m->loaded_weight_bytes_ = m->CountLoadedWeightBytes();
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
  // A mapped file truncated while it loaded: the weights read so far may be
  // wrong (a page past the new end reads as zeros up to the end of its page)
  // and later reads of mapped pages would be a SIGBUS. Refuse the model.
  EMBER_RETURN_IF_ERROR(f.CheckSize());
  if (progress && !progress(1.0f)) return Status(Code::kCancelled, "model loading was cancelled");
  *out = std::move(m);
  return Status::Ok();
}

Status Model::RepackWeights(const LoadProgressFn& progress, uint64_t address_limit) {
  // Every matrix whose GGUF type has a native layout is repacked once (tied
  // output and embedding share one), and the file's pages of it are released
  // as its rows are read (Repack's `consumed`, every MiB): the weights live in
  // memory once, and the peak during loading is the packed weights plus about
  // a MiB of the file.
  //
  // The embedding is only read row by row, and lookups stay exact: it is
  // repacked (and then shared with a tied output) only when the packed copy is
  // exact. Otherwise lookups read its GGUF rows, which the mapping pages back
  // in on demand after a tied output's repacking released them.
  std::vector<WeightView*> views = {&weights_.token_embd, &weights_.output};
  for (LayerWeights& L : weights_.layers) {
    for (WeightView* v : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) {
      views.push_back(v);
    }
  }
  // An embedding of its own (not tied to the output) is only read a row per
  // token: its GGUF rows stay where they are mapped (the pages a prompt touches
  // come in on demand) rather than a repacked copy in memory. A tied one is
  // repacked with the output when that keeps every weight exact.
  const bool tied = weights_.token_embd.data == weights_.output.data;
  // F32, F16 and BF16 matrices are multiplied as stored unless asked for int8.
  auto repacked = [&](const WeightView* v) {
    if (IsFloatWeight(v->type) && float_weights_ == FloatWeights::kFloat) return false;
    return CanRepack(v->type) && (v != &weights_.token_embd || (tied && RepackIsExact(v->type)));
  };
  // The tensor behind each view's data, and the packed matrix made from it
  // (a tied output and embedding share one tensor).
  std::unordered_map<const uint8_t*, const GgufTensorInfo*> tensor_at;
  for (const GgufTensorInfo& t : gguf_->tensors()) tensor_at.emplace(t.data, &t);
  // Tensors whose bytes overlap at different addresses would read each
  // other's bytes, and once one is repacked and its pages released (a copied
  // file) the other would read zeros: no writer makes such a file.
  {
    std::vector<const GgufTensorInfo*> by_start;
    for (const GgufTensorInfo& t : gguf_->tensors()) {
      if (t.n_bytes > 0) by_start.push_back(&t);
    }
    std::sort(by_start.begin(), by_start.end(),
              [](const GgufTensorInfo* a, const GgufTensorInfo* b) { return a->data < b->data; });
    // The tensor reaching furthest among those that start earlier.
    const GgufTensorInfo* reach = nullptr;
    for (const GgufTensorInfo* b : by_start) {
      if (reach != nullptr && reach->data != b->data &&
          static_cast<uint64_t>(b->data - reach->data) < reach->n_bytes) {
        return BadFormat("the data of tensors '" + reach->name + "' and '" + b->name +
                         "' overlap in the file");
      }
      if (reach == nullptr || b->data + b->n_bytes > reach->data + reach->n_bytes) reach = b;
    }
  }
  // Views of one tensor (a tied output and its embedding) share one packed
  // matrix, found by the data's address, so tensors that a file places at
  // one address must agree in type and shape. (A fuzzed file put ffn_down at
  // ffn_gate's address: ffn_down got the gate's packed matrix, with more rows
  // than its output holds, and decode wrote past that buffer.)
  {
    std::unordered_map<const uint8_t*, const WeightView*> first_view;
    for (const WeightView* v : views) {
      if (v->data == nullptr) continue;
      const auto [it, added] = first_view.emplace(v->data, v);
      const WeightView* u = it->second;
      if (!added && (u->type != v->type || u->n_rows != v->n_rows || u->n_cols != v->n_cols)) {
        const auto t = tensor_at.find(v->data);
        return BadFormat("two tensors share the data of '" +
                         (t != tensor_at.end() ? t->second->name : std::string("?")) +
                         "' in the file with different types or shapes (" + GgmlTypeName(u->type) +
                         " " + std::to_string(u->n_rows) + " x " + std::to_string(u->n_cols) +
                         " and " + GgmlTypeName(v->type) + " " + std::to_string(v->n_rows) + " x " +
                         std::to_string(v->n_cols) + ")");
      }
    }
  }
  std::unordered_map<const uint8_t*, const PackedMatrix*> done;
  // Tensors already in a native layout (`ember quantize --type native`) are
  // used where they are mapped: no copy, and their pages stay.
  for (WeightView* v : views) {
    if (!IsNativeType(v->type)) continue;
    if (auto it = done.find(v->data); it != done.end()) {
      v->packed = it->second;
      continue;
    }
    const auto found = tensor_at.find(v->data);
    const GgufTensorInfo* t = found == tensor_at.end() ? nullptr : found->second;
    auto p = std::make_unique<PackedMatrix>();
    Status s = PackedView(v->type, v->data, t ? t->n_bytes : 0, v->n_rows, v->n_cols, p.get());
    if (!s.ok()) return Status(s.code(), "tensor '" + (t ? t->name : "?") + "': " + s.message());
    v->packed = p.get();
    done.emplace(v->data, p.get());
    packed_.push_back(std::move(p));
  }
  // Float matrices used as stored are copied out of the file after the
  // repacking (CopyFloatWeights): the views that are not repacked, once per
  // tensor (a tied embedding is its output's).
  std::vector<WeightView*> float_views;
  for (WeightView* v : views) {
    if (!repacked(v) && v->data != nullptr && IsFloatWeight(v->type) &&
        (v != &weights_.token_embd || v->data == weights_.output.data)) {
      float_views.push_back(v);
    }
  }
  // Progress is the fraction of the bytes to repack or copy done (they are
  // most of the loading time; an F16 model's is all copying); Load reports
  // the final 1.
  uint64_t total = 0, finished = 0;
  auto advance = [&](uint64_t bytes) {
    finished += bytes;
    return !progress || finished >= total ||
           progress(static_cast<float>(static_cast<double>(finished) / static_cast<double>(total)));
  };
  {
    std::unordered_set<const uint8_t*> seen;
    for (const WeightView* v : float_views) {
      if (seen.insert(v->data).second) total += v->row_bytes * static_cast<uint64_t>(v->n_rows);
    }
  }
  // All packed matrices share one allocation, in huge pages where the system
  // gives them (platform/streamed_memory.h): 64-byte aligned slots in the
  // order they are repacked. Sizes in 64 bits, checked against the address
  // space before anything is allocated (32-bit targets).
  uint64_t arena_bytes = 0;
  {
    std::unordered_set<const uint8_t*> seen;
    for (const WeightView* v : views) {
      if (repacked(v) && seen.insert(v->data).second) {
        total += v->row_bytes * static_cast<uint64_t>(v->n_rows);
        // RepackedBytes is UINT64_MAX when the size overflows, which a
        // 64-bit limit of UINT64_MAX lets through: the slot's sum catches it.
        const uint64_t bytes = RepackedBytes(v->type, v->n_rows, v->n_cols);
        uint64_t slot = 0;
        if (bytes > address_limit || __builtin_add_overflow(bytes, uint64_t{63}, &slot)) {
          const auto t = tensor_at.find(v->data);
          return Unsupported("tensor '" + (t != tensor_at.end() ? t->second->name : "?") +
                             "': repacked to ember's layout it takes " + std::to_string(bytes) +
                             " bytes, more than this process can address (" +
                             std::to_string(address_limit) + " bytes)");
        }
        if (__builtin_add_overflow(arena_bytes, slot / 64 * 64, &arena_bytes)) {
          arena_bytes = UINT64_MAX;
        }
      }
    }
  }
  if (arena_bytes > address_limit || arena_bytes == UINT64_MAX) {
    return Unsupported("the repacked weights take " + std::to_string(arena_bytes) +
                       " bytes, more than this process can address (" +
                       std::to_string(address_limit) + " bytes)");
  }
  if (arena_bytes > 0) packed_storage_ = AllocStreamed(static_cast<size_t>(arena_bytes));
  uint64_t arena_used = 0;
  // A copied file's released pages are gone (a mapping's page back in): keep
  // those of an embedding that lookups read as stored after its tied output
  // was repacked.
  const uint8_t* read_later =
      gguf_->copied() && !repacked(&weights_.token_embd) ? weights_.token_embd.data : nullptr;
  for (WeightView* v : views) {
    if (!repacked(v)) continue;
    const auto it = done.find(v->data);
    const PackedMatrix* packed = it == done.end() ? nullptr : it->second;
    if (packed == nullptr) {
      // The file's pages of the rows repacked so far go while the rest
      // repacks: the peak is the packed weights plus about a MiB of source.
      const auto t = tensor_at.find(v->data);
      const GgufTensorInfo* release =
          t != tensor_at.end() && v->data != read_later ? t->second : nullptr;
      RepackConsumedFn consumed;
      if (release != nullptr) {
        consumed = [this, release, row_bytes = v->row_bytes](int64_t rows) {
          gguf_->ReleaseTensorPrefix(*release, row_bytes * static_cast<uint64_t>(rows));
        };
      }
      auto p = std::make_unique<PackedMatrix>();
      uint8_t* slot = packed_storage_.get() + arena_used;
      arena_used += (RepackedBytes(v->type, v->n_rows, v->n_cols) + 63) / 64 * 64;
      if (Status s = Repack(v->type, v->data, v->n_rows, v->n_cols, p.get(), consumed, slot);
          !s.ok()) {
        return Status(s.code(), "tensor '" + (t != tensor_at.end() ? t->second->name : "?") +
                                    "': " + s.message());
      }
      packed = p.get();
      done.emplace(v->data, packed);
      packed_.push_back(std::move(p));
      if (release != nullptr) gguf_->ReleaseTensorData(*release);
      if (!advance(v->row_bytes * static_cast<uint64_t>(v->n_rows))) {
        return Status(Code::kCancelled, "model loading was cancelled");
      }
    }
    v->packed = packed;
  }
  if (!CopyFloatWeights(float_views, tensor_at, address_limit, advance)) {
    return Status(Code::kCancelled, "model loading was cancelled");
  }
  const uint8_t* const copies = float_storage_.get();
  for (WeightView* v : views) {
    if (IsNativeType(v->type)) maps_weights_ = true;
    if (v->packed != nullptr) v->data = nullptr;  // released: only the packed copy remains
    const bool copied = copies != nullptr && v->data >= copies && v->data < copies + float_bytes_;
    if (v->data != nullptr && !copied) maps_weights_ = true;
  }
  return Status::Ok();
}

bool Model::CopyFloatWeights(
    const std::vector<WeightView*>& views,
    const std::unordered_map<const uint8_t*, const GgufTensorInfo*>& tensor_at,
    uint64_t address_limit, const std::function<bool(uint64_t)>& advance) {
  // Float matrices multiplied as stored (not repacked: docs/FLOAT.md) are
  // copied out of the file into memory in huge pages (platform/
  // streamed_memory.h), as the packed ones live, and the file's pages of each
  // go once it is copied. Read from the mapping, an F16 decode took a TLB
  // miss per 4 KiB (one 2048-column row) and the hardware prefetchers stop at
  // every page: TinyLlama-shape F16 decode ran 6.46 -> 7.05 tok/s at 1 thread
  // and 11.11 -> 11.90 at 2 on the AVX2-only host with the copy (docs/FLOAT.md).
  // A tied embedding (in `views` before its output) is copied once and its
  // lookups read the copy; an embedding of its own stays mapped (a row per
  // token). The file stays mapped beside the copy: where both would not fit
  // the address space (a 32-bit process), nothing is copied.
  uint64_t bytes = 0;
  std::unordered_set<const uint8_t*> seen;
  for (const WeightView* v : views) {
    if (seen.insert(v->data).second) {
      bytes += (v->row_bytes * static_cast<uint64_t>(v->n_rows) + 63) / 64 * 64;
    }
  }
  if (bytes == 0 || bytes > address_limit || gguf_->file_size() > address_limit - bytes) {
    return true;
  }
  float_storage_ = AllocStreamed(static_cast<size_t>(bytes));
  float_bytes_ = bytes;
  // F16 and BF16 rows go in the active kernels' row groups (ops/fgemm.h):
  // the decode block then reads one stream instead of a stream per row
  // (docs/FLOAT.md). F32 stays in GGUF's order, which the libraries' prefill
  // reads in place.
  const int64_t group = Active().float_group;
  std::unordered_map<const uint8_t*, std::pair<uint8_t*, int64_t>> copy_of;
  uint64_t used = 0;
  for (WeightView* v : views) {
    auto it = copy_of.find(v->data);
    if (it == copy_of.end()) {
      const uint64_t n = v->row_bytes * static_cast<uint64_t>(v->n_rows);
      uint8_t* slot = float_storage_.get() + used;
      used += (n + 63) / 64 * 64;
      const FloatMatrix plain{FloatWeightOf(v->type), v->data, v->n_rows, v->n_cols};
      const int64_t g = plain.type == FloatWeight::kF32 ? 1 : group;
      GroupFloatRows(plain, g, slot);
      if (const auto t = tensor_at.find(v->data); t != tensor_at.end()) {
        gguf_->ReleaseTensorData(*t->second);
      }
      it = copy_of.emplace(v->data, std::make_pair(slot, g)).first;
      if (!advance(n)) return false;
    }
    v->data = it->second.first;
    v->float_group = it->second.second;
  }
  return true;
}

uint64_t Model::CountLoadedWeightBytes() const {
  // The matrices a decode step streams: the output and every layer's, each
  // once (a tied embedding is the output); an embedding of its own is only
  // read a row per token.
  uint64_t n = 0;
  std::vector<const void*> seen;
  auto add = [&](const WeightView& v) {
    const void* key = v.packed != nullptr ? static_cast<const void*>(v.packed) : v.data;
    if (key == nullptr || std::find(seen.begin(), seen.end(), key) != seen.end()) return;
    seen.push_back(key);
    n += v.packed != nullptr ? v.packed->bytes() : v.row_bytes * static_cast<uint64_t>(v.n_rows);
  };
  add(weights_.output);
  for (const LayerWeights& L : weights_.layers) {
    for (const WeightView* v : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) add(*v);
  }
  return n;
}

uint64_t Model::weight_bytes() const {
  uint64_t n = 0;
  for (const GgufTensorInfo& t : gguf_->tensors()) n += t.n_bytes;
  return n;
}

}  // namespace ember
