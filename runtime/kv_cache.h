// Keys and values of every layer for the positions decoded so far, in f16.
// Layout per layer: K [n_ctx, kv_dim], V [n_ctx, kv_dim] (kv_dim = n_head_kv * head_dim,
// heads contiguous within a row). Position p lives in row p: a plain linear
// cache of fixed capacity; the ring of DESIGN.md §6 replaces it later.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace ember {

class KvCache {
 public:
  KvCache(int64_t n_layer, int64_t n_ctx, int64_t kv_dim)
      : n_ctx_(n_ctx),
        kv_dim_(kv_dim),
        k_(static_cast<size_t>(n_layer * n_ctx * kv_dim)),
        v_(static_cast<size_t>(n_layer * n_ctx * kv_dim)) {}

  int64_t n_ctx() const { return n_ctx_; }
  int64_t kv_dim() const { return kv_dim_; }
  uint16_t* k(int64_t layer, int64_t pos) { return k_.data() + Offset(layer, pos); }
  uint16_t* v(int64_t layer, int64_t pos) { return v_.data() + Offset(layer, pos); }
  // Moves runs of n rows: run i ends up at dst[i] holding what src[i] held
  // before the call, in every layer, also when runs are permuted among
  // themselves (all sources are read before any destination is written).
  void CopyRuns(const std::vector<int64_t>& src, const std::vector<int64_t>& dst, int64_t n) {
    if (n <= 0 || src.empty()) return;
    const size_t run = static_cast<size_t>(n * kv_dim_);
    const int64_t n_layer = static_cast<int64_t>(k_.size()) / (n_ctx_ * kv_dim_);
    std::vector<uint16_t> tmp(2 * run * src.size());
    for (int64_t l = 0; l < n_layer; ++l) {
      for (size_t i = 0; i < src.size(); ++i) {
        std::memcpy(&tmp[2 * i * run], k(l, src[i]), run * sizeof(uint16_t));
        std::memcpy(&tmp[(2 * i + 1) * run], v(l, src[i]), run * sizeof(uint16_t));
      }
      for (size_t i = 0; i < dst.size(); ++i) {
        std::memcpy(k(l, dst[i]), &tmp[2 * i * run], run * sizeof(uint16_t));
        std::memcpy(v(l, dst[i]), &tmp[(2 * i + 1) * run], run * sizeof(uint16_t));
      }
    }
  }
  size_t bytes() const { return (k_.size() + v_.size()) * sizeof(uint16_t); }

 private:
  size_t Offset(int64_t layer, int64_t pos) const {
    return static_cast<size_t>((layer * n_ctx_ + pos) * kv_dim_);
  }
  int64_t n_ctx_;
  int64_t kv_dim_;
  std::vector<uint16_t> k_;
  std::vector<uint16_t> v_;
};

}  // namespace ember
