// GGUF reader (versions 2 and 3).
//
// The file format, as this reader checks it (all integers little-endian):
//  1. magic "GGUF", uint32 version (2 or 3), uint64 tensor_count, uint64 kv_count.
//  2. kv_count metadata pairs: key (string), uint32 value type, value.
//     A string is uint64 length + bytes (no terminator). An array is uint32
//     element type + uint64 count + elements; arrays may nest.
//  3. tensor_count tensor infos: name (string), uint32 n_dims (<= 4),
//     uint64 dims[n_dims] (dims[0] is the contiguous one), uint32 ggml type,
//     uint64 offset relative to the start of the data section.
//  4. padding to `general.alignment` (default 32), then the data section.
// Everything is validated before use: every read is bounds-checked, sizes
// are computed in checked 64-bit arithmetic and must fit this process's
// address space (size_t: 32 bits on armhf), tensors lie inside the file, are
// aligned, do not repeat. Errors name the field (the tensor) and its byte offset.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "platform/mapped_file.h"
#include "platform/status.h"
#include "quant/ggml_type.h"

namespace ember {

enum class GgufType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

const char* GgufTypeName(GgufType t);
bool IsGgufIntegerType(GgufType t);

// One metadata value. Scalars live in the union-like fields; strings point
// into the mapped file (valid while the GgufFile lives); arrays hold items.
struct GgufValue {
  GgufType type = GgufType::kUint8;
  uint64_t u = 0;  // unsigned integers and bool
  int64_t i = 0;   // signed integers
  double f = 0;    // floats
  std::string_view str;
  GgufType elem_type = GgufType::kUint8;  // arrays only
  std::vector<GgufValue> items;           // arrays only

  bool is_integer() const;
  bool is_float() const { return type == GgufType::kFloat32 || type == GgufType::kFloat64; }
};

struct GgufKv {
  std::string key;
  GgufValue value;
  uint64_t offset = 0;  // byte offset of the key in the file
};

struct GgufTensorInfo {
  std::string name;
  GgmlType type = GgmlType::kF32;
  uint32_t n_dims = 0;
  uint64_t ne[4] = {1, 1, 1, 1};  // ne[0] is the contiguous dimension
  uint64_t offset = 0;            // relative to the data section
  uint64_t n_bytes = 0;
  const uint8_t* data = nullptr;  // into the mapped file

  uint64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

class GgufFile {
 public:
  // Maps (or copies, as `mode` says: platform/mapped_file.h) and parses
  // `path`. On error nothing is kept.
  static Status Open(const std::string& path, std::unique_ptr<GgufFile>* out,
                     MapMode mode = MapMode::kAuto, uint64_t address_limit = kAddressSpaceLimit);
  // Parses an in-memory image (for tests and fuzzing); `bytes` must outlive
  // the result. A tensor of more than address_limit bytes is refused, naming
  // it (a parameter so that tests check the 32-bit limit on 64-bit hosts).
  static Status Parse(const uint8_t* bytes, size_t size, std::unique_ptr<GgufFile>* out,
                      uint64_t address_limit = kAddressSpaceLimit);

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  size_t file_size() const { return size_; }
  const uint8_t* file_data() const { return bytes_; }

  const std::vector<GgufKv>& kvs() const { return kvs_; }
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }

  const GgufValue* Find(std::string_view key) const;
  // True when the file was read into memory rather than mapped.
  bool copied() const { return map_.copied(); }
  // An error when the mapped file has shrunk since it was opened (see
  // MappedFile::CheckSize); Ok for a copy.
  Status CheckSize() const { return map_.CheckSize(); }
  // Drops a tensor's pages from memory once its data has been copied
  // (repacked). A mapping pages them back in from the file if they are read
  // again; a copy loses them: with a copy, call it only for tensors nothing
  // reads again.
  void ReleaseTensorData(const GgufTensorInfo& t) const { map_.Release(t.data, t.n_bytes); }
  // The same for the first `bytes` of a tensor's data (the rows repacked so
  // far; pages it shares with the rest stay).
  void ReleaseTensorPrefix(const GgufTensorInfo& t, uint64_t bytes) const {
    map_.Release(t.data, static_cast<size_t>(std::min(bytes, t.n_bytes)));
  }
  // For a model that reads no tensor data after loading: drops the resident
  // pages of the file. A mapping drops them all (the mapping is read-only, so
  // this loses nothing: whatever is read again pages back in from the file);
  // a copy keeps its header (metadata strings are read from it) and frees
  // the tensor data.
  void ReleaseAllPages() const {
    if (copied()) {
      if (data_offset_ < size_) {
        map_.Release(bytes_ + data_offset_, size_ - static_cast<size_t>(data_offset_));
      }
    } else {
      map_.Release(bytes_, size_);
    }
  }
  // The header only (metadata and tensor infos), of a mapping.
  void ReleaseHeaderPages() const {
    if (!copied()) map_.Release(bytes_, static_cast<size_t>(data_offset_));
  }
  const GgufTensorInfo* FindTensor(std::string_view name) const;
  // Frees the parsed items of arrays longer than max_items once they have been
  // read (the vocabulary: ~150k values of 80 bytes, 12 MB for a 49k vocab,
  // otherwise held for the model's lifetime). Such values keep their type and
  // elem_type; their items are empty afterwards.
  void ReleaseLargeArrays(size_t max_items);

  // Typed getters: return an error naming the key when it is missing or has the
  // wrong type; the *Or variants return `fallback` when the key is missing.
  Status GetString(std::string_view key, std::string* out) const;
  Status GetUint(std::string_view key, uint64_t* out) const;
  Status GetFloat(std::string_view key, double* out) const;
  uint64_t GetUintOr(std::string_view key, uint64_t fallback) const;
  double GetFloatOr(std::string_view key, double fallback) const;
  bool GetBoolOr(std::string_view key, bool fallback) const;
  std::string GetStringOr(std::string_view key, std::string fallback) const;

 private:
  MappedFile map_;
  const uint8_t* bytes_ = nullptr;
  size_t size_ = 0;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<GgufKv> kvs_;
  std::vector<GgufTensorInfo> tensors_;
};

}  // namespace ember
