#include "runtime/kv/kv_cache.h"

#include <algorithm>
#include <cstring>

#include "ops/kernels.h"
#include "quant/fp16.h"
#include "quant/quantize.h"

namespace ember {

const char* KvTypeName(KvType type) {
  switch (type) {
    case KvType::kQ8:
      return "q8";
    case KvType::kF32:
      return "f32";
    case KvType::kF16:
      break;
  }
  return "f16";
}

bool ParseKvType(const std::string& name, KvType* out) {
  if (name == "f16") {
    *out = KvType::kF16;
  } else if (name == "f32") {
    *out = KvType::kF32;
  } else if (name == "q8" || name == "q8_0") {
    *out = KvType::kQ8;
  } else {
    return false;
  }
  return true;
}

KvCache::KvCache(std::vector<int64_t> rows, int64_t n_head_kv, int64_t head_dim, KvType type)
    : type_(type),
      n_layer_(static_cast<int64_t>(rows.size())),
      n_head_kv_(n_head_kv),
      head_dim_(head_dim),
      kv_dim_(n_head_kv * head_dim),
      rows_(std::move(rows)) {
  int64_t total = 0;
  for (const int64_t r : rows_) {
    first_row_.push_back(total);
    total += r;
    max_rows_ = std::max(max_rows_, r);
  }
  const size_t elems = static_cast<size_t>(total * kv_dim_);
  if (type == KvType::kF16) {
    k16_.resize(elems);
    v16_.resize(elems);
  } else if (type == KvType::kF32) {
    k32_.resize(elems);
    v32_.resize(elems);
  } else {
    k8_.resize(elems);
    v8_.resize(elems);
    ks_.resize(static_cast<size_t>(total * n_head_kv));
    vs_.resize(ks_.size());
  }
}

size_t KvCache::bytes() const {
  return (k16_.size() + v16_.size()) * sizeof(uint16_t) +
         (k32_.size() + v32_.size()) * sizeof(float) + k8_.size() + v8_.size() +
         (ks_.size() + vs_.size()) * sizeof(float);
}

void KvCache::Store(int64_t layer, int64_t slot, const float* k, const float* v) {
  StoreK(layer, slot, k);
  const size_t r = Row(layer, slot);
  if (type_ == KvType::kF16) {
    Active().fp32_to_fp16_row(v, &v16_[r], kv_dim_);
  } else if (type_ == KvType::kF32) {
    std::memcpy(&v32_[r], v, static_cast<size_t>(kv_dim_) * sizeof(float));
  } else {
    const size_t sr = ScaleRow(layer, slot);
    for (int64_t h = 0; h < n_head_kv_; ++h) {
      QuantizeGroupI8(v + h * head_dim_, &v8_[r + h * head_dim_], &vs_[sr + h], head_dim_);
    }
  }
}

void KvCache::StoreK(int64_t layer, int64_t slot, const float* k) {
  const size_t r = Row(layer, slot);
  if (type_ == KvType::kF16) {
    Active().fp32_to_fp16_row(k, &k16_[r], kv_dim_);
  } else if (type_ == KvType::kF32) {
    std::memcpy(&k32_[r], k, static_cast<size_t>(kv_dim_) * sizeof(float));
  } else {
    const size_t sr = ScaleRow(layer, slot);
    for (int64_t h = 0; h < n_head_kv_; ++h) {
      QuantizeGroupI8(k + h * head_dim_, &k8_[r + h * head_dim_], &ks_[sr + h], head_dim_);
    }
  }
}

void KvCache::LoadK(int64_t layer, int64_t slot, float* k) const {
  const size_t r = Row(layer, slot);
  if (type_ == KvType::kF16) {
    for (int64_t i = 0; i < kv_dim_; ++i) k[i] = Fp16ToFp32(k16_[r + i]);
  } else if (type_ == KvType::kF32) {
    std::memcpy(k, &k32_[r], static_cast<size_t>(kv_dim_) * sizeof(float));
  } else {
    const size_t sr = ScaleRow(layer, slot);
    for (int64_t h = 0; h < n_head_kv_; ++h) {
      for (int64_t i = 0; i < head_dim_; ++i) {
        k[h * head_dim_ + i] = ks_[sr + h] * static_cast<float>(k8_[r + h * head_dim_ + i]);
      }
    }
  }
}

KvSpan KvCache::SpanF16(int64_t layer, int64_t begin, int64_t n, int64_t h) const {
  const size_t o = Row(layer, begin) + static_cast<size_t>(h * head_dim_);
  return {k16_.data() + o, v16_.data() + o, n};
}

KvSpanF32 KvCache::SpanF32(int64_t layer, int64_t begin, int64_t n, int64_t h) const {
  const size_t o = Row(layer, begin) + static_cast<size_t>(h * head_dim_);
  return {k32_.data() + o, v32_.data() + o, n};
}

KvSpanQ8 KvCache::SpanQ8(int64_t layer, int64_t begin, int64_t n, int64_t h) const {
  const size_t o = Row(layer, begin) + static_cast<size_t>(h * head_dim_);
  const size_t so = ScaleRow(layer, begin) + static_cast<size_t>(h);
  return {k8_.data() + o, v8_.data() + o, ks_.data() + so, vs_.data() + so, n};
}

size_t KvCache::RowBytes() const {
  if (type_ == KvType::kF16) return 2 * static_cast<size_t>(kv_dim_) * sizeof(uint16_t);
  if (type_ == KvType::kF32) return 2 * static_cast<size_t>(kv_dim_) * sizeof(float);
  return 2 * static_cast<size_t>(kv_dim_) + 2 * static_cast<size_t>(n_head_kv_) * sizeof(float);
}

void KvCache::ReadRow(int64_t layer, int64_t slot, uint8_t* out) const {
  const size_t r = Row(layer, slot), d = static_cast<size_t>(kv_dim_);
  if (type_ == KvType::kF16) {
    std::memcpy(out, &k16_[r], d * sizeof(uint16_t));
    std::memcpy(out + d * sizeof(uint16_t), &v16_[r], d * sizeof(uint16_t));
    return;
  }
  if (type_ == KvType::kF32) {
    std::memcpy(out, &k32_[r], d * sizeof(float));
    std::memcpy(out + d * sizeof(float), &v32_[r], d * sizeof(float));
    return;
  }
  const size_t sr = ScaleRow(layer, slot), hs = static_cast<size_t>(n_head_kv_) * sizeof(float);
  std::memcpy(out, &k8_[r], d);
  std::memcpy(out + d, &v8_[r], d);
  std::memcpy(out + 2 * d, &ks_[sr], hs);
  std::memcpy(out + 2 * d + hs, &vs_[sr], hs);
}

void KvCache::WriteRow(int64_t layer, int64_t slot, const uint8_t* in) {
  const size_t r = Row(layer, slot), d = static_cast<size_t>(kv_dim_);
  if (type_ == KvType::kF16) {
    std::memcpy(&k16_[r], in, d * sizeof(uint16_t));
    std::memcpy(&v16_[r], in + d * sizeof(uint16_t), d * sizeof(uint16_t));
    return;
  }
  if (type_ == KvType::kF32) {
    std::memcpy(&k32_[r], in, d * sizeof(float));
    std::memcpy(&v32_[r], in + d * sizeof(float), d * sizeof(float));
    return;
  }
  const size_t sr = ScaleRow(layer, slot), hs = static_cast<size_t>(n_head_kv_) * sizeof(float);
  std::memcpy(&k8_[r], in, d);
  std::memcpy(&v8_[r], in + d, d);
  std::memcpy(&ks_[sr], in + 2 * d, hs);
  std::memcpy(&vs_[sr], in + 2 * d + hs, hs);
}

void KvCache::CopyRuns(const std::vector<int64_t>& src, const std::vector<int64_t>& dst, int64_t n,
                       const std::vector<bool>& layer_mask) {
  if (n <= 0 || src.empty()) return;
  const size_t row = RowBytes();
  std::vector<uint8_t> tmp(row * static_cast<size_t>(n) * src.size());
  for (int64_t l = 0; l < n_layer_; ++l) {
    if (!layer_mask.empty() && !layer_mask[static_cast<size_t>(l)]) continue;
    uint8_t* p = tmp.data();
    for (size_t i = 0; i < src.size(); ++i) {
      for (int64_t j = 0; j < n; ++j, p += row) ReadRow(l, src[i] + j, p);
    }
    p = tmp.data();
    for (size_t i = 0; i < dst.size(); ++i) {
      for (int64_t j = 0; j < n; ++j, p += row) WriteRow(l, dst[i] + j, p);
    }
  }
}

}  // namespace ember
