#include "runtime/gguf/gguf_writer.h"

#include <cstdio>
#include <cstring>

namespace ember {

template <typename T>
void GgufWriter::Put(T v) {
  uint8_t b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  kv_bytes_.insert(kv_bytes_.end(), b, b + sizeof(T));
}

void GgufWriter::PutString(std::string_view s) {
  Put<uint64_t>(s.size());
  kv_bytes_.insert(kv_bytes_.end(), s.begin(), s.end());
}

void GgufWriter::Key(std::string_view key, GgufType type) {
  PutString(key);
  Put<uint32_t>(static_cast<uint32_t>(type));
  ++n_kv_;
}

void GgufWriter::SetUint32(std::string_view key, uint32_t v) {
  Key(key, GgufType::kUint32);
  Put(v);
  if (key == "general.alignment") alignment_ = v;
}
void GgufWriter::SetInt32(std::string_view key, int32_t v) {
  Key(key, GgufType::kInt32);
  Put(v);
}
void GgufWriter::SetUint64(std::string_view key, uint64_t v) {
  Key(key, GgufType::kUint64);
  Put(v);
}
void GgufWriter::SetFloat32(std::string_view key, float v) {
  Key(key, GgufType::kFloat32);
  Put(v);
}
void GgufWriter::SetBool(std::string_view key, bool v) {
  Key(key, GgufType::kBool);
  Put<uint8_t>(v ? 1 : 0);
}
void GgufWriter::SetString(std::string_view key, std::string_view v) {
  Key(key, GgufType::kString);
  PutString(v);
}
void GgufWriter::SetStringArray(std::string_view key, const std::vector<std::string>& v) {
  Key(key, GgufType::kArray);
  Put<uint32_t>(static_cast<uint32_t>(GgufType::kString));
  Put<uint64_t>(v.size());
  for (const auto& s : v) PutString(s);
}
void GgufWriter::SetFloat32Array(std::string_view key, const std::vector<float>& v) {
  Key(key, GgufType::kArray);
  Put<uint32_t>(static_cast<uint32_t>(GgufType::kFloat32));
  Put<uint64_t>(v.size());
  for (float x : v) Put(x);
}
void GgufWriter::SetInt32Array(std::string_view key, const std::vector<int32_t>& v) {
  Key(key, GgufType::kArray);
  Put<uint32_t>(static_cast<uint32_t>(GgufType::kInt32));
  Put<uint64_t>(v.size());
  for (int32_t x : v) Put(x);
}

void GgufWriter::PutValue(const GgufValue& v) {
  switch (v.type) {
    case GgufType::kUint8:
      Put<uint8_t>(static_cast<uint8_t>(v.u));
      break;
    case GgufType::kInt8:
      Put<int8_t>(static_cast<int8_t>(v.i));
      break;
    case GgufType::kUint16:
      Put<uint16_t>(static_cast<uint16_t>(v.u));
      break;
    case GgufType::kInt16:
      Put<int16_t>(static_cast<int16_t>(v.i));
      break;
    case GgufType::kUint32:
      Put<uint32_t>(static_cast<uint32_t>(v.u));
      break;
    case GgufType::kInt32:
      Put<int32_t>(static_cast<int32_t>(v.i));
      break;
    case GgufType::kUint64:
      Put<uint64_t>(v.u);
      break;
    case GgufType::kInt64:
      Put<int64_t>(v.i);
      break;
    case GgufType::kFloat32:
      Put<float>(static_cast<float>(v.f));
      break;
    case GgufType::kFloat64:
      Put<double>(v.f);
      break;
    case GgufType::kBool:
      Put<uint8_t>(v.u ? 1 : 0);
      break;
    case GgufType::kString:
      PutString(v.str);
      break;
    case GgufType::kArray:
      Put<uint32_t>(static_cast<uint32_t>(v.elem_type));
      Put<uint64_t>(v.items.size());
      for (const GgufValue& item : v.items) PutValue(item);
      break;
  }
}

void GgufWriter::CopyKv(const GgufKv& kv) {
  Key(kv.key, kv.value.type);
  PutValue(kv.value);
  if (kv.key == "general.alignment") alignment_ = static_cast<uint32_t>(kv.value.u);
}

Status GgufWriter::AddTensor(std::string_view name, GgmlType type,
                             const std::vector<uint64_t>& dims, const void* data, size_t n_bytes) {
  const GgmlTypeTraits* tr = FindGgmlType(static_cast<uint32_t>(type));
  if (tr == nullptr) return InvalidArgument("unknown tensor type");
  if (dims.empty() || dims.size() > 4) return InvalidArgument("tensor needs 1 to 4 dims");
  uint64_t n = 1;
  for (uint64_t d : dims) n *= d;
  if (dims[0] % tr->block_elems != 0 || n / tr->block_elems * tr->block_bytes != n_bytes) {
    return InvalidArgument("tensor '" + std::string(name) + "': byte count does not match " +
                           tr->name + " and its dims");
  }
  Tensor t{std::string(name), static_cast<uint32_t>(type), dims, {}};
  t.data.assign(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + n_bytes);
  tensors_.push_back(std::move(t));
  return Status::Ok();
}

void GgufWriter::AddRawTensor(std::string_view name, uint32_t raw_type,
                              const std::vector<uint64_t>& dims, std::vector<uint8_t> bytes) {
  tensors_.push_back(Tensor{std::string(name), raw_type, dims, std::move(bytes)});
}

std::vector<uint8_t> GgufWriter::Serialize() const {
  std::vector<uint8_t> out;
  auto put = [&out](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  };
  auto put_u32 = [&put](uint32_t v) { put(&v, 4); };
  auto put_u64 = [&put](uint64_t v) { put(&v, 8); };
  auto align = [&out, this]() {
    while (out.size() % alignment_ != 0) out.push_back(0);
  };

  put("GGUF", 4);
  put_u32(3);
  put_u64(tensors_.size());
  put_u64(n_kv_);
  put(kv_bytes_.data(), kv_bytes_.size());
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    put_u64(t.name.size());
    put(t.name.data(), t.name.size());
    put_u32(static_cast<uint32_t>(t.dims.size()));
    for (uint64_t d : t.dims) put_u64(d);
    put_u32(t.type);
    put_u64(offset);
    offset += (t.data.size() + alignment_ - 1) / alignment_ * alignment_;
  }
  align();
  for (const Tensor& t : tensors_) {
    put(t.data.data(), t.data.size());
    align();
  }
  return out;
}

Status GgufWriter::WriteFile(const std::string& path) const {
  std::vector<uint8_t> bytes = Serialize();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return IoError("cannot create '" + path + "'");
  size_t written = std::fwrite(bytes.data(), 1, bytes.size(), f);
  if (std::fclose(f) != 0 || written != bytes.size()) {
    return IoError("cannot write '" + path + "'");
  }
  return Status::Ok();
}

}  // namespace ember
