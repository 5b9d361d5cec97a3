// GGUF writer (version 3): builds files for tests (synthetic models with
// random weights and a real vocab, hand-broken files) and for `ember quantize`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "platform/status.h"
#include "quant/ggml_type.h"
#include "runtime/gguf/gguf.h"

namespace ember {

class GgufWriter {
 public:
  void SetUint32(std::string_view key, uint32_t v);
  void SetInt32(std::string_view key, int32_t v);
  void SetUint64(std::string_view key, uint64_t v);
  void SetFloat32(std::string_view key, float v);
  void SetBool(std::string_view key, bool v);
  void SetString(std::string_view key, std::string_view v);
  void SetStringArray(std::string_view key, const std::vector<std::string>& v);
  void SetFloat32Array(std::string_view key, const std::vector<float>& v);
  void SetInt32Array(std::string_view key, const std::vector<int32_t>& v);
  // Copies one metadata pair from a parsed file, nested arrays included.
  void CopyKv(const GgufKv& kv);

  // Adds a tensor; `dims[0]` is the contiguous dimension; bytes are copied.
  // The byte count must match the type and dims.
  Status AddTensor(std::string_view name, GgmlType type, const std::vector<uint64_t>& dims,
                   const void* data, size_t n_bytes);

  // Adds a tensor without checking type or size: for writing broken files in tests.
  void AddRawTensor(std::string_view name, uint32_t raw_type, const std::vector<uint64_t>& dims,
                    std::vector<uint8_t> bytes);

  std::vector<uint8_t> Serialize() const;
  Status WriteFile(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    uint32_t type;  // GGML type id
    std::vector<uint64_t> dims;
    std::vector<uint8_t> data;
  };
  void Key(std::string_view key, GgufType type);
  void PutValue(const GgufValue& v);
  template <typename T>
  void Put(T v);
  void PutString(std::string_view s);

  std::vector<uint8_t> kv_bytes_;
  uint64_t n_kv_ = 0;
  uint32_t alignment_ = 32;
  std::vector<Tensor> tensors_;
};

}  // namespace ember
