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
  StoreHeads(layer, slot, k, false);
  StoreHeads(layer, slot, v, true);
}

void KvCache::StoreK(int64_t layer, int64_t slot, const float* k) {
  StoreHeads(layer, slot, k, false);
}

void KvCache::StoreHeads(int64_t layer, int64_t slot, const float* x, bool value) {
  for (int64_t h = 0; h < n_head_kv_; ++h) {
    const size_t r = At(layer, slot, h);
    const float* xh = x + h * head_dim_;
    if (type_ == KvType::kF16) {
      Active().fp32_to_fp16_row(xh, value ? &v16_[r] : &k16_[r], head_dim_);
    } else if (type_ == KvType::kF32) {
      std::memcpy(value ? &v32_[r] : &k32_[r], xh, static_cast<size_t>(head_dim_) * sizeof(float));
    } else {
      const size_t sr = ScaleAt(layer, slot, h);
      QuantizeGroupI8(xh, value ? &v8_[r] : &k8_[r], value ? &vs_[sr] : &ks_[sr], head_dim_);
    }
  }
}

void KvCache::LoadK(int64_t layer, int64_t slot, float* k) const {
  const size_t hd = static_cast<size_t>(head_dim_);
  for (int64_t h = 0; h < n_head_kv_; ++h) {
    const size_t r = At(layer, slot, h);
    float* kh = k + h * head_dim_;
    if (type_ == KvType::kF16) {
      for (size_t i = 0; i < hd; ++i) kh[i] = Fp16ToFp32(k16_[r + i]);
    } else if (type_ == KvType::kF32) {
      std::memcpy(kh, &k32_[r], hd * sizeof(float));
    } else {
      const float s = ks_[ScaleAt(layer, slot, h)];
      for (size_t i = 0; i < hd; ++i) kh[i] = s * static_cast<float>(k8_[r + i]);
    }
  }
}

KvSpan KvCache::SpanF16(int64_t layer, int64_t begin, int64_t n, int64_t h) const {
  const size_t o = At(layer, begin, h);
  return {k16_.data() + o, v16_.data() + o, n};
}

KvSpanF32 KvCache::SpanF32(int64_t layer, int64_t begin, int64_t n, int64_t h) const {
  const size_t o = At(layer, begin, h);
  return {k32_.data() + o, v32_.data() + o, n};
}

KvSpanQ8 KvCache::SpanQ8(int64_t layer, int64_t begin, int64_t n, int64_t h) const {
  const size_t o = At(layer, begin, h), so = ScaleAt(layer, begin, h);
  return {k8_.data() + o, v8_.data() + o, ks_.data() + so, vs_.data() + so, n};
}

size_t KvCache::RowBytes() const {
  if (type_ == KvType::kF16) return 2 * static_cast<size_t>(kv_dim_) * sizeof(uint16_t);
  if (type_ == KvType::kF32) return 2 * static_cast<size_t>(kv_dim_) * sizeof(float);
  return 2 * static_cast<size_t>(kv_dim_) + 2 * static_cast<size_t>(n_head_kv_) * sizeof(float);
}

const uint8_t* KvCache::PartBytes(int64_t layer, int64_t slot, int64_t h, bool value) const {
  const size_t r = At(layer, slot, h);
  if (type_ == KvType::kF16) {
    return reinterpret_cast<const uint8_t*>(value ? &v16_[r] : &k16_[r]);
  }
  if (type_ == KvType::kF32) {
    return reinterpret_cast<const uint8_t*>(value ? &v32_[r] : &k32_[r]);
  }
  return reinterpret_cast<const uint8_t*>(value ? &v8_[r] : &k8_[r]);
}

// The stored form: K of each head in head order, then V, then for q8 the K
// scales and the V scales, one float per head.
void KvCache::ReadRow(int64_t layer, int64_t slot, uint8_t* out) const {
  const size_t part = PartSize(), kv = static_cast<size_t>(n_head_kv_) * part;
  for (int64_t h = 0; h < n_head_kv_; ++h) {
    const size_t o = static_cast<size_t>(h) * part;
    std::memcpy(out + o, PartBytes(layer, slot, h, false), part);
    std::memcpy(out + kv + o, PartBytes(layer, slot, h, true), part);
    if (type_ == KvType::kQ8) {
      const size_t sr = ScaleAt(layer, slot, h), so = 2 * kv + static_cast<size_t>(h) * 4;
      std::memcpy(out + so, &ks_[sr], sizeof(float));
      std::memcpy(out + so + static_cast<size_t>(n_head_kv_) * 4, &vs_[sr], sizeof(float));
    }
  }
}

void KvCache::WriteRow(int64_t layer, int64_t slot, const uint8_t* in) {
  const size_t part = PartSize(), kv = static_cast<size_t>(n_head_kv_) * part;
  for (int64_t h = 0; h < n_head_kv_; ++h) {
    const size_t o = static_cast<size_t>(h) * part;
    std::memcpy(const_cast<uint8_t*>(PartBytes(layer, slot, h, false)), in + o, part);
    std::memcpy(const_cast<uint8_t*>(PartBytes(layer, slot, h, true)), in + kv + o, part);
    if (type_ == KvType::kQ8) {
      const size_t sr = ScaleAt(layer, slot, h), so = 2 * kv + static_cast<size_t>(h) * 4;
      std::memcpy(&ks_[sr], in + so, sizeof(float));
      std::memcpy(&vs_[sr], in + so + static_cast<size_t>(n_head_kv_) * 4, sizeof(float));
    }
  }
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
