// A read-only image of a whole file: a memory map, or a copy read into
// memory. The only place that knows mmap and statfs.
//
// A mapped file that another process truncates makes every later read of a
// page past the new end a SIGBUS, which kills the process. Files on network
// and user-space file systems (NFS, SMB/CIFS, 9p, FUSE, ...) change under a
// reader more easily and fail pages in transit, so MapMode::kAuto copies them
// instead; a copy is immune to what happens to the file afterwards
// (docs/RELIABILITY.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "platform/status.h"

namespace ember {

enum class MapMode {
  kAuto,  // map, but copy files on network and user-space file systems
  kMap,   // always map
  kCopy,  // always copy (--no-mmap)
};

// The most bytes one object of this process can span: SIZE_MAX (4 GiB - 1 on
// 32-bit targets such as armhf). Sizes read from files are checked against it
// in 64-bit arithmetic before they become size_t.
constexpr uint64_t kAddressSpaceLimit = std::numeric_limits<size_t>::max();

// Whether a statfs f_type is a file system where MapMode::kAuto copies: one
// over a network or served by a user-space process. *name (may be null) gets
// its name ("nfs", "fuse", ...) when it is one.
bool IsRemoteFileSystem(uint64_t f_type, const char** name = nullptr);

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;

  // Maps or copies `path` as `mode` says. An empty file gives size() == 0 and
  // data() == nullptr. A file of more than address_limit bytes is refused
  // before anything is mapped (a parameter so that tests can check the 32-bit
  // path on a 64-bit host). A copy that reads fewer bytes than the file had
  // when it was opened (it shrank meanwhile) is an error.
  static Status Open(const std::string& path, MappedFile* out, MapMode mode = MapMode::kAuto,
                     uint64_t address_limit = kAddressSpaceLimit);

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // True when the bytes are a copy in memory rather than a mapping of the file.
  bool copied() const { return copied_; }
  // Why the file was copied ("--no-mmap", "on nfs"), "" when mapped.
  const std::string& copy_reason() const { return copy_reason_; }

  // Tells the OS the whole pages inside [p, p + n) are no longer needed: they
  // leave the resident set. A mapping reads them again from the file if they
  // are touched; a copy's pages then read as zeros, so with a copy call it
  // only for bytes nothing reads again.
  void Release(const uint8_t* p, size_t n) const;

  // For a mapping: an error when the file is now shorter than it was when it
  // was mapped (another process truncated it: reading the pages past its new
  // end would be a SIGBUS). Ok for a copy, which no longer depends on the file.
  Status CheckSize() const;

 private:
  void Reset();
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_bytes_ = 0;  // what munmap releases (a copy: rounded up to pages)
  bool copied_ = false;
  int fd_ = -1;  // a mapping keeps its file open for CheckSize
  std::string path_;
  std::string copy_reason_;
};

}  // namespace ember
