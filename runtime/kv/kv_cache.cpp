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
  const size_t hd = static_cast<size_t>(head_dim_);
  for (int64_t h = 0; h < n_head_kv_; ++h) {
    const size_t r = At(layer, slot, h);
    const float* vh = v + h * head_dim_;
    if (type_ == KvType::kF16) {
      Active().fp32_to_fp16_row(vh, &v16_[r], head_dim_);
    } else if (type_ == KvType::kF32) {
      std::memcpy(&v32_[r], vh, hd * sizeof(float));
    } else {
      QuantizeGroupI8(vh, &v8_[r], &vs_[ScaleAt(layer, slot, h)], head_dim_);
    }
  }
}

void KvCache::StoreK(int64_t layer, int64_t slot, const float* k) {
  const size_t hd = static_cast<size_t>(head_dim_);
  for (int64_t h = 0; h < n_head_kv_; ++h) {
    const size_t r = At(layer, slot, h);
    const float* kh = k + h * head_dim_;
    if (type_ == KvType::kF16) {
      Active().fp32_to_fp16_row(kh, &k16_[r], head_dim_);
    } else if (type_ == KvType::kF32) {
      std::memcpy(&k32_[r], kh, hd * sizeof(float));
    } else {
      QuantizeGroupI8(kh, &k8_[r], &ks_[ScaleAt(layer, slot, h)], head_dim_);
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

namespace {

// The bytes of a stored row in its serialized order: `part(h, offset)` for
// K then V of each head (head_bytes each), then for q8 `scale(h, offset)`
// for the K scales, then the V scales (a float each). `offset` counts from
// the start of the serialized row.
template <class Part, class Scale>
void ForRowParts(int64_t n_head_kv, size_t head_bytes, bool q8, Part&& part, Scale&& scale) {
  const size_t kv = static_cast<size_t>(n_head_kv) * head_bytes;
  for (int64_t h = 0; h < n_head_kv; ++h) {
    part(h, static_cast<size_t>(h) * head_bytes, static_cast<size_t>(h) * head_bytes + kv);
  }
  if (!q8) return;
  const size_t hs = static_cast<size_t>(n_head_kv) * sizeof(float);
  for (int64_t h = 0; h < n_head_kv; ++h) {
    scale(h, 2 * kv + static_cast<size_t>(h) * sizeof(float),
          2 * kv + hs + static_cast<size_t>(h) * sizeof(float));
  }
}

}  // namespace

void KvCache::ReadRow(int64_t layer, int64_t slot, uint8_t* out) const {
  const size_t hd = static_cast<size_t>(head_dim_);
  const size_t elem = type_ == KvType::kF16 ? 2 : type_ == KvType::kF32 ? 4 : 1;
  ForRowParts(
      n_head_kv_, hd * elem, type_ == KvType::kQ8,
      [&](int64_t h, size_t ko, size_t vo) {
        const size_t r = At(layer, slot, h);
        if (type_ == KvType::kF16) {
          std::memcpy(out + ko, &k16_[r], hd * elem);
          std::memcpy(out + vo, &v16_[r], hd * elem);
        } else if (type_ == KvType::kF32) {
          std::memcpy(out + ko, &k32_[r], hd * elem);
          std::memcpy(out + vo, &v32_[r], hd * elem);
        } else {
          std::memcpy(out + ko, &k8_[r], hd);
          std::memcpy(out + vo, &v8_[r], hd);
        }
      },
      [&](int64_t h, size_t ko, size_t vo) {
        const size_t sr = ScaleAt(layer, slot, h);
        std::memcpy(out + ko, &ks_[sr], sizeof(float));
        std::memcpy(out + vo, &vs_[sr], sizeof(float));
      });
}

void KvCache::WriteRow(int64_t layer, int64_t slot, const uint8_t* in) {
  const size_t hd = static_cast<size_t>(head_dim_);
  const size_t elem = type_ == KvType::kF16 ? 2 : type_ == KvType::kF32 ? 4 : 1;
  ForRowParts(
      n_head_kv_, hd * elem, type_ == KvType::kQ8,
      [&](int64_t h, size_t ko, size_t vo) {
        const size_t r = At(layer, slot, h);
        if (type_ == KvType::kF16) {
          std::memcpy(&k16_[r], in + ko, hd * elem);
          std::memcpy(&v16_[r], in + vo, hd * elem);
        } else if (type_ == KvType::kF32) {
          std::memcpy(&k32_[r], in + ko, hd * elem);
          std::memcpy(&v32_[r], in + vo, hd * elem);
        } else {
          std::memcpy(&k8_[r], in + ko, hd);
          std::memcpy(&v8_[r], in + vo, hd);
        }
      },
      [&](int64_t h, size_t ko, size_t vo) {
        const size_t sr = ScaleAt(layer, slot, h);
        std::memcpy(&ks_[sr], in + ko, sizeof(float));
        std::memcpy(&vs_[sr], in + vo, sizeof(float));
      });
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
