#include "runtime/gguf/gguf.h"

#include <cstring>
#include <limits>
#include <unordered_set>
#include <utility>

namespace ember {
namespace {

constexpr uint32_t kMaxDims = 4;
constexpr int kMaxArrayDepth = 8;

std::string At(uint64_t offset) { return " at byte offset " + std::to_string(offset); }

// Bounds-checked little-endian reader over the file image.
class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return size_ - pos_; }

  template <typename T>
  Status Read(T* out, const char* what) {
    if (remaining() < sizeof(T)) return Truncated(what, sizeof(T));
    std::memcpy(out, data_ + pos_, sizeof(T));  // host is little-endian (checked in CMake)
    pos_ += sizeof(T);
    return Status::Ok();
  }

  Status ReadString(std::string_view* out, const char* what) {
    uint64_t start = pos_;
    uint64_t len = 0;
    EMBER_RETURN_IF_ERROR(Read(&len, what));
    if (len > remaining()) {
      return BadFormat(std::string("truncated GGUF: ") + what + " of length " +
                       std::to_string(len) + at_(start) + " runs past the end of the file (" +
                       std::to_string(size_) + " bytes)");
    }
    *out = std::string_view(reinterpret_cast<const char*>(data_ + pos_), len);
    pos_ += len;
    return Status::Ok();
  }

 private:
  static std::string at_(uint64_t o) { return At(o); }
  Status Truncated(const char* what, size_t need) const {
    return BadFormat(std::string("truncated GGUF: cannot read ") + what + " (" +
                     std::to_string(need) + " bytes)" + At(pos_) + ", file size " +
                     std::to_string(size_));
  }
  const uint8_t* data_;
  size_t size_;
  uint64_t pos_ = 0;
};

// Smallest encoded size of one value of `t`; used to reject array counts
// that cannot fit in the rest of the file before allocating for them.
uint64_t MinEncodedSize(GgufType t) {
  switch (t) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kBool:
      return 1;
    case GgufType::kUint16:
    case GgufType::kInt16:
      return 2;
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kFloat32:
      return 4;
    case GgufType::kString:
    case GgufType::kUint64:
    case GgufType::kInt64:
    case GgufType::kFloat64:
      return 8;
    case GgufType::kArray:
      return 12;
  }
  return 1;
}

bool KnownType(uint32_t t) { return t <= static_cast<uint32_t>(GgufType::kFloat64); }

Status ReadValue(Cursor& c, GgufType type, GgufValue* v, const std::string& key, int depth) {
  v->type = type;
  uint64_t start = c.pos();
  switch (type) {
    case GgufType::kUint8: {
      uint8_t x = 0;
      EMBER_RETURN_IF_ERROR(c.Read(&x, "uint8 value"));
      v->u = x;
      v->i = x;
      return Status::Ok();
    }
    case GgufType::kInt8: {
      int8_t x = 0;
      EMBER_RETURN_IF_ERROR(c.Read(&x, "int8 value"));
      v->i = x;
      return Status::Ok();
    }
    case GgufType::kUint16: {
      uint16_t x = 0;
      EMBER_RETURN_IF_ERROR(c.Read(&x, "uint16 value"));
      v->u = x;
      v->i = x;
      return Status::Ok();
    }
    case GgufType::kInt16: {
      int16_t x = 0;
      EMBER_RETURN_IF_ERROR(c.Read(&x, "int16 value"));
      v->i = x;
      return Status::Ok();
    }
    case GgufType::kUint32: {
      uint32_t x = 0;
      EMBER_RETURN_IF_ERROR(c.Read(&x, "uint32 value"));
      v->u = x;
      v->i = x;
      return Status::Ok();
    }
    case GgufType::kInt32: {
      int32_t x = 0;
      EMBER_RETURN_IF_ERROR(c.Read(&x, "int32 value"));
      v->i = x;
      return Status::Ok();
    }
    case GgufType::kUint64: {
      uint64_t x = 0;
      EMBER_RETURN_IF_ERROR(c.Read(&x, "uint64 value"));
      v->u = x;
      v->i = static_cast<int64_t>(x);
      return Status::Ok();
    }
    case GgufType::kInt64: {
      int64_t x = 0;
      EMBER_RETURN_IF_ERROR(c.Read(&x, "int64 value"));
      v->i = x;
      return Status::Ok();
    }
    case GgufType::kFloat32: {
      float x = 0;
      EMBER_RETURN_IF_ERROR(c.Read(&x, "float32 value"));
      v->f = x;
      return Status::Ok();
    }
    case GgufType::kFloat64: {
      double x = 0;
      EMBER_RETURN_IF_ERROR(c.Read(&x, "float64 value"));
      v->f = x;
      return Status::Ok();
    }
    case GgufType::kBool: {
      uint8_t x = 0;
      EMBER_RETURN_IF_ERROR(c.Read(&x, "bool value"));
      if (x > 1) {
        return BadFormat("GGUF key '" + key + "': bool value " + std::to_string(x) +
                         " is neither 0 nor 1" + At(start));
      }
      v->u = x;
      return Status::Ok();
    }
    case GgufType::kString:
      return c.ReadString(&v->str, "string value");
    case GgufType::kArray: {
      if (depth >= kMaxArrayDepth) {
        return BadFormat("GGUF key '" + key + "': arrays nested deeper than " +
                         std::to_string(kMaxArrayDepth) + At(start));
      }
      uint32_t et = 0;
      uint64_t n = 0;
      EMBER_RETURN_IF_ERROR(c.Read(&et, "array element type"));
      if (!KnownType(et)) {
        return BadFormat("GGUF key '" + key + "': unknown array element type " +
                         std::to_string(et) + At(start));
      }
      EMBER_RETURN_IF_ERROR(c.Read(&n, "array length"));
      v->elem_type = static_cast<GgufType>(et);
      if (n > c.remaining() / MinEncodedSize(v->elem_type)) {
        return BadFormat("GGUF key '" + key + "': array of " + std::to_string(n) + " elements" +
                         At(start) + " cannot fit in the rest of the file");
      }
      v->items.resize(n);
      for (uint64_t k = 0; k < n; ++k) {
        EMBER_RETURN_IF_ERROR(ReadValue(c, v->elem_type, &v->items[k], key, depth + 1));
      }
      return Status::Ok();
    }
  }
  return BadFormat("GGUF key '" + key + "': unknown value type" + At(start));
}

bool CheckedMul(uint64_t a, uint64_t b, uint64_t* out) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) return false;
  *out = a * b;
  return true;
}

}  // namespace

const char* GgufTypeName(GgufType t) {
  static const char* kNames[] = {"uint8",  "int8",    "uint16", "int16",  "uint32",
                                 "int32",  "float32", "bool",   "string", "array",
                                 "uint64", "int64",   "float64"};
  auto i = static_cast<uint32_t>(t);
  return i < 13 ? kNames[i] : "unknown";
}

bool IsGgufIntegerType(GgufType t) {
  switch (t) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kUint16:
    case GgufType::kInt16:
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kUint64:
    case GgufType::kInt64:
      return true;
    default:
      return false;
  }
}

bool GgufValue::is_integer() const { return IsGgufIntegerType(type); }

void GgufFile::ReleaseLargeArrays(size_t max_items) {
  for (GgufKv& kv : kvs_) {
    if (kv.value.type == GgufType::kArray && kv.value.items.size() > max_items) {
      std::vector<GgufValue>().swap(kv.value.items);
    }
  }
}

Status GgufFile::Open(const std::string& path, std::unique_ptr<GgufFile>* out, MapMode mode,
                      uint64_t address_limit) {
  MappedFile map;
  EMBER_RETURN_IF_ERROR(MappedFile::Open(path, &map, mode, address_limit));
  std::unique_ptr<GgufFile> f;
  Status s = Parse(map.data(), map.size(), &f, address_limit);
  if (!s.ok()) return Status(s.code(), path + ": " + s.message());
  f->map_ = std::move(map);
  *out = std::move(f);
  return Status::Ok();
}

Status GgufFile::Parse(const uint8_t* bytes, size_t size, std::unique_ptr<GgufFile>* out,
                       uint64_t address_limit) {
  auto f = std::make_unique<GgufFile>();
  f->bytes_ = bytes;
  f->size_ = size;
  Cursor c(bytes, size);

  if (size < 4 || std::memcmp(bytes, "GGUF", 4) != 0) {
    return BadFormat("not a GGUF file (the first 4 bytes are not \"GGUF\")");
  }
  uint32_t magic;
  EMBER_RETURN_IF_ERROR(c.Read(&magic, "magic"));
  EMBER_RETURN_IF_ERROR(c.Read(&f->version_, "version"));
  if (f->version_ != 2 && f->version_ != 3) {
    return Unsupported("unsupported GGUF version " + std::to_string(f->version_) +
                       " at byte offset 4 (supported: 2, 3)");
  }
  uint64_t n_tensors = 0, n_kv = 0;
  EMBER_RETURN_IF_ERROR(c.Read(&n_tensors, "tensor count"));
  EMBER_RETURN_IF_ERROR(c.Read(&n_kv, "metadata count"));
  // Each kv takes at least 8 (key len) + 4 (type) + 1 bytes; each tensor info at least 8+4+4+8.
  if (n_kv > c.remaining() / 13) {
    return BadFormat("truncated GGUF: metadata count " + std::to_string(n_kv) +
                     " at byte offset 16 cannot fit in the file (" + std::to_string(size) +
                     " bytes)");
  }
  if (n_tensors > c.remaining() / 24) {
    return BadFormat("truncated GGUF: tensor count " + std::to_string(n_tensors) +
                     " at byte offset 8 cannot fit in the file (" + std::to_string(size) +
                     " bytes)");
  }

  std::unordered_set<std::string_view> keys;
  f->kvs_.resize(n_kv);
  for (uint64_t k = 0; k < n_kv; ++k) {
    GgufKv& kv = f->kvs_[k];
    kv.offset = c.pos();
    std::string_view key;
    EMBER_RETURN_IF_ERROR(c.ReadString(&key, "metadata key"));
    kv.key.assign(key);
    if (!keys.insert(key).second) {
      return BadFormat("duplicate GGUF metadata key '" + kv.key + "'" + At(kv.offset));
    }
    uint32_t type = 0;
    uint64_t type_pos = c.pos();
    EMBER_RETURN_IF_ERROR(c.Read(&type, "metadata value type"));
    if (!KnownType(type)) {
      return BadFormat("GGUF key '" + kv.key + "': unknown value type " + std::to_string(type) +
                       At(type_pos));
    }
    EMBER_RETURN_IF_ERROR(ReadValue(c, static_cast<GgufType>(type), &kv.value, kv.key, 0));
  }

  if (const GgufValue* a = f->Find("general.alignment")) {
    if (!a->is_integer() || a->u == 0 || (a->u & (a->u - 1)) != 0 || a->u > 65536) {
      return BadFormat("GGUF key 'general.alignment' must be a power of two between 1 and 65536");
    }
    f->alignment_ = a->u;
  }

  std::unordered_set<std::string_view> names;
  f->tensors_.resize(n_tensors);
  std::vector<uint64_t> info_offsets(n_tensors);
  for (uint64_t k = 0; k < n_tensors; ++k) {
    GgufTensorInfo& t = f->tensors_[k];
    info_offsets[k] = c.pos();
    std::string_view name;
    EMBER_RETURN_IF_ERROR(c.ReadString(&name, "tensor name"));
    t.name.assign(name);
    const std::string where = "tensor '" + t.name + "' (info" + At(info_offsets[k]) + ")";
    if (!names.insert(name).second) return BadFormat("duplicate " + where);
    EMBER_RETURN_IF_ERROR(c.Read(&t.n_dims, "tensor dimension count"));
    if (t.n_dims == 0 || t.n_dims > kMaxDims) {
      return BadFormat(where + ": " + std::to_string(t.n_dims) + " dimensions (1 to 4 allowed)");
    }
    uint64_t n = 1;
    for (uint32_t d = 0; d < t.n_dims; ++d) {
      EMBER_RETURN_IF_ERROR(c.Read(&t.ne[d], "tensor dimension"));
      if (t.ne[d] == 0) return BadFormat(where + ": dimension " + std::to_string(d) + " is 0");
      if (!CheckedMul(n, t.ne[d], &n) || n > (uint64_t{1} << 60)) {
        return BadFormat(where + ": dimensions overflow");
      }
    }
    uint32_t type = 0;
    EMBER_RETURN_IF_ERROR(c.Read(&type, "tensor type"));
    const GgmlTypeTraits* tr = FindGgmlType(type);
    if (tr == nullptr) {
      return Unsupported(where + ": unknown tensor type " + std::to_string(type));
    }
    t.type = tr->type;
    if (t.ne[0] % tr->block_elems != 0) {
      return BadFormat(where + ": first dimension " + std::to_string(t.ne[0]) +
                       " is not a multiple of the " + tr->name + " block size " +
                       std::to_string(tr->block_elems));
    }
    // n <= 2^60 and a block holds at most 8 bytes per element: no overflow.
    t.n_bytes = n / tr->block_elems * tr->block_bytes;
    if (t.n_bytes > address_limit) {
      std::string dims;
      for (uint32_t d = 0; d < t.n_dims; ++d) dims += (d ? ", " : "") + std::to_string(t.ne[d]);
      return Unsupported(where + ": its " + std::to_string(t.n_bytes) + " bytes ([" + dims + "] " +
                         tr->name + ") do not fit in this process's address space (" +
                         std::to_string(address_limit) + " bytes" +
                         (address_limit == 0xFFFFFFFFu ? ": size_t is 32 bits" : "") + ")");
    }
    EMBER_RETURN_IF_ERROR(c.Read(&t.offset, "tensor data offset"));
    if (t.offset % f->alignment_ != 0) {
      return BadFormat(where + ": data offset " + std::to_string(t.offset) +
                       " is not a multiple of the alignment " + std::to_string(f->alignment_));
    }
  }

  uint64_t end_of_infos = c.pos();
  f->data_offset_ = (end_of_infos + f->alignment_ - 1) / f->alignment_ * f->alignment_;
  if (n_tensors > 0 && f->data_offset_ > size) {
    return BadFormat("truncated GGUF: the data section would start at byte offset " +
                     std::to_string(f->data_offset_) + ", past the end of the file (" +
                     std::to_string(size) + " bytes)");
  }
  const uint64_t data_size = size > f->data_offset_ ? size - f->data_offset_ : 0;
  for (uint64_t k = 0; k < n_tensors; ++k) {
    GgufTensorInfo& t = f->tensors_[k];
    if (t.offset > data_size || t.n_bytes > data_size - t.offset) {
      return BadFormat("tensor '" + t.name + "' (info" + At(info_offsets[k]) + "): data [" +
                       std::to_string(f->data_offset_ + t.offset) + ", " +
                       std::to_string(f->data_offset_ + t.offset + t.n_bytes) +
                       ") lies past the end of the file (" + std::to_string(size) + " bytes)");
    }
    t.data = bytes + f->data_offset_ + t.offset;
  }
  *out = std::move(f);
  return Status::Ok();
}

const GgufValue* GgufFile::Find(std::string_view key) const {
  for (const GgufKv& kv : kvs_) {
    if (kv.key == key) return &kv.value;
  }
  return nullptr;
}

const GgufTensorInfo* GgufFile::FindTensor(std::string_view name) const {
  for (const GgufTensorInfo& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

Status GgufFile::GetString(std::string_view key, std::string* out) const {
  const GgufValue* v = Find(key);
  if (v == nullptr) return BadFormat("GGUF key '" + std::string(key) + "' is missing");
  if (v->type != GgufType::kString) {
    return BadFormat("GGUF key '" + std::string(key) + "' is a " + GgufTypeName(v->type) +
                     ", expected a string");
  }
  out->assign(v->str);
  return Status::Ok();
}

Status GgufFile::GetUint(std::string_view key, uint64_t* out) const {
  const GgufValue* v = Find(key);
  if (v == nullptr) return BadFormat("GGUF key '" + std::string(key) + "' is missing");
  if (!v->is_integer() || (v->type != GgufType::kUint64 && v->i < 0)) {
    return BadFormat("GGUF key '" + std::string(key) + "' is a " + GgufTypeName(v->type) +
                     ", expected a non-negative integer");
  }
  *out = v->type == GgufType::kUint64 ? v->u : static_cast<uint64_t>(v->i);
  return Status::Ok();
}

Status GgufFile::GetFloat(std::string_view key, double* out) const {
  const GgufValue* v = Find(key);
  if (v == nullptr) return BadFormat("GGUF key '" + std::string(key) + "' is missing");
  if (v->is_float()) {
    *out = v->f;
  } else if (v->is_integer()) {
    *out = static_cast<double>(v->i);
  } else {
    return BadFormat("GGUF key '" + std::string(key) + "' is a " + GgufTypeName(v->type) +
                     ", expected a number");
  }
  return Status::Ok();
}

uint64_t GgufFile::GetUintOr(std::string_view key, uint64_t fallback) const {
  uint64_t v = fallback;
  return Find(key) && GetUint(key, &v).ok() ? v : fallback;
}

double GgufFile::GetFloatOr(std::string_view key, double fallback) const {
  double v = fallback;
  return Find(key) && GetFloat(key, &v).ok() ? v : fallback;
}

bool GgufFile::GetBoolOr(std::string_view key, bool fallback) const {
  const GgufValue* v = Find(key);
  if (v == nullptr || v->type != GgufType::kBool) return fallback;
  return v->u != 0;
}

std::string GgufFile::GetStringOr(std::string_view key, std::string fallback) const {
  std::string v;
  return Find(key) && GetString(key, &v).ok() ? v : fallback;
}

}  // namespace ember
