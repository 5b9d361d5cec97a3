// Keys and values of every layer, one row per cached token (which row holds
// which token is KvRing's business). Per layer l: K [n_head_kv, n_rows(l),
// head_dim] and V alike: head-major, so that the rows one KV head's attention
// reads lie end to end (a span's stride is head_dim). With a token's heads
// side by side instead (K [n_rows, kv_dim]), one head's rows were 2 of every
// 6 cache lines for SmolLM2, and its decode attention at a 4096-token context
// ran at a little over half the speed (docs/PERFORMANCE.md, stop 44). Layers
// may have different row counts: a sliding-window layer's cache is a ring of
// about the window's size (runtime/kv/window_ring.h), the others hold the
// whole context.
//   f16 (default): 2 bytes per element.
//   f32 (--kv-type f32): 4 bytes per element, no rounding (to compare with
//       llama.cpp's most precise configuration, `--fa off -ctk f32 -ctv f32`).
//   q8  (--kv-type q8): int8 per element plus one f32 scale per (row, head) in
//       K-scales / V-scales [n_head_kv, n_rows] per layer — 1 + 4/head_dim
//       bytes per element, about half of f16 at head_dim 64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/attention.h"

namespace ember {

enum class KvType { kF16, kQ8, kF32 };

const char* KvTypeName(KvType type);                     // "f16", "q8", "f32"
bool ParseKvType(const std::string& name, KvType* out);  // false if unknown

class KvCache {
 public:
  // rows[l]: the rows of layer l.
  KvCache(std::vector<int64_t> rows, int64_t n_head_kv, int64_t head_dim, KvType type);
  // Every layer with n_ctx rows.
  KvCache(int64_t n_layer, int64_t n_ctx, int64_t n_head_kv, int64_t head_dim, KvType type)
      : KvCache(std::vector<int64_t>(static_cast<size_t>(n_layer), n_ctx), n_head_kv, head_dim,
                type) {}

  KvType type() const { return type_; }
  int64_t n_layer() const { return n_layer_; }
  int64_t n_rows(int64_t layer) const { return rows_[static_cast<size_t>(layer)]; }
  int64_t max_rows() const { return max_rows_; }
  int64_t kv_dim() const { return kv_dim_; }
  int64_t head_dim() const { return head_dim_; }
  int64_t n_head_kv() const { return n_head_kv_; }
  size_t bytes() const;

  // Writes one token's key and value ([kv_dim] f32 each) into row `slot`.
  void Store(int64_t layer, int64_t slot, const float* k, const float* v);
  // Reads / rewrites one row's key as f32 [kv_dim] (the context shift
  // re-rotates keys in place through these).
  void LoadK(int64_t layer, int64_t slot, float* k) const;
  void StoreK(int64_t layer, int64_t slot, const float* k);

  // Rows [begin, begin + n) of KV head h of a layer, for the attention kernels.
  KvSpan SpanF16(int64_t layer, int64_t begin, int64_t n, int64_t h) const;
  KvSpanQ8 SpanQ8(int64_t layer, int64_t begin, int64_t n, int64_t h) const;
  KvSpanF32 SpanF32(int64_t layer, int64_t begin, int64_t n, int64_t h) const;
  size_t row_stride() const { return static_cast<size_t>(head_dim_); }  // elements
  size_t scale_stride() const { return 1; }                             // floats

  // One row of a layer in its stored form (K data, V data, each [kv_dim] in
  // head order, then for q8 the K and V scales [n_head_kv]): what session
  // state files hold.
  size_t RowBytes() const;
  void ReadRow(int64_t layer, int64_t slot, uint8_t* out) const;
  void WriteRow(int64_t layer, int64_t slot, const uint8_t* in);

  // Moves runs of n rows: run i ends up at dst[i] holding what src[i] held
  // before the call, in every layer whose layer_mask entry is true (all when
  // the mask is empty), also when runs are permuted among themselves (all
  // sources are read before any destination is written).
  void CopyRuns(const std::vector<int64_t>& src, const std::vector<int64_t>& dst, int64_t n,
                const std::vector<bool>& layer_mask = {});

 private:
  // K (value false) or V of a row's heads from x [kv_dim].
  void StoreHeads(int64_t layer, int64_t slot, const float* x, bool value);
  // Head h's K or V part of a row: its first byte, and its size in bytes.
  const uint8_t* PartBytes(int64_t layer, int64_t slot, int64_t h, bool value) const;
  size_t PartSize() const {
    const size_t elem = type_ == KvType::kF16 ? 2 : type_ == KvType::kF32 ? 4 : 1;
    return static_cast<size_t>(head_dim_) * elem;
  }
  // Element offset of head h's part of a row.
  size_t At(int64_t layer, int64_t slot, int64_t h) const {
    const size_t l = static_cast<size_t>(layer);
    return static_cast<size_t>(first_row_[l] * kv_dim_ + (h * rows_[l] + slot) * head_dim_);
  }
  // Offset of head h's scale of a row (q8).
  size_t ScaleAt(int64_t layer, int64_t slot, int64_t h) const {
    const size_t l = static_cast<size_t>(layer);
    return static_cast<size_t>(first_row_[l] * n_head_kv_ + h * rows_[l] + slot);
  }

  KvType type_;
  int64_t n_layer_, n_head_kv_, head_dim_, kv_dim_;
  std::vector<int64_t> rows_;       // [n_layer] rows of each layer
  std::vector<int64_t> first_row_;  // [n_layer] running sum of rows_
  int64_t max_rows_ = 0;
  std::vector<uint16_t> k16_, v16_;  // f16
  std::vector<float> k32_, v32_;     // f32
  std::vector<int8_t> k8_, v8_;      // q8
  std::vector<float> ks_, vs_;       // q8 scales
};

}  // namespace ember
