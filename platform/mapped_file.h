// A read-only memory map of a whole file. The only place that knows mmap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "platform/status.h"

namespace ember {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;

  // Maps `path` read-only. An empty file maps to size() == 0 and data() == nullptr.
  static Status Open(const std::string& path, MappedFile* out);

  const uint8_t* data() const { return data_; }
  // Tells the OS the whole pages inside [p, p + n) are no longer needed: they
  // leave the resident set (and are read again from the file if touched).
  void Release(const uint8_t* p, size_t n) const;
  size_t size() const { return size_; }

 private:
  void Reset();
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace ember
