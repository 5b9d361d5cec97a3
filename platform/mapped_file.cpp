#include "platform/mapped_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace ember {
namespace {

// statfs f_type values (linux/magic.h and the file systems' own headers; not
// every libc's headers have them all).
struct RemoteFs {
  uint64_t magic;
  const char* name;
};
constexpr RemoteFs kRemoteFileSystems[] = {
    {0x6969, "nfs"},       {0x517B, "smb"},          {0xFF534D42, "cifs"},  {0xFE534D42, "smb2"},
    {0x65735546, "fuse"},  {0x01021997, "9p"},       {0x00C36400, "ceph"},  {0x5346414F, "afs"},
    {0x6B414653, "kafs"},  {0x73757245, "coda"},     {0x564C, "ncp"},       {0x0BD00BD0, "lustre"},
    {0x01161970, "gfs2"},  {0x7461636F, "ocfs2"},    {0x47504653, "gpfs"},  {0x13661366, "beegfs"},
    {0x19830326, "fhgfs"}, {0x52654973, "orangefs"}, {0xAAD7AAEA, "panfs"}, {0x786F4256, "vboxsf"},
};

std::string Errno(int e) { return std::strerror(e); }

// Reads the whole file into anonymous memory (page-aligned, as a mapping
// would be, which the native weight layouts need).
Status Copy(int fd, const std::string& path, size_t size, uint8_t** data, size_t* mapped) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t bytes = (size + page - 1) / page * page;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    return Status(Code::kOutOfMemory, "cannot allocate " + std::to_string(size) +
                                          " bytes to read '" + path + "' into: " + Errno(errno));
  }
  uint8_t* dst = static_cast<uint8_t*>(p);
  size_t done = 0;
  while (done < size) {
    const size_t chunk = std::min<size_t>(size - done, size_t{1} << 26);
    const ssize_t n = pread(fd, dst + done, chunk, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      munmap(p, bytes);
      if (n == 0) {
        return IoError("'" + path + "' shrank while it was being read: " + std::to_string(done) +
                       " of its " + std::to_string(size) + " bytes were there");
      }
      return IoError("cannot read '" + path + "' at byte offset " + std::to_string(done) + ": " +
                     Errno(e));
    }
    done += static_cast<size_t>(n);
  }
  mprotect(p, bytes, PROT_READ);
  *data = dst;
  *mapped = bytes;
  return Status::Ok();
}

}  // namespace

bool IsRemoteFileSystem(uint64_t f_type, const char** name) {
  for (const RemoteFs& fs : kRemoteFileSystems) {
    if (fs.magic == (f_type & 0xFFFFFFFFu)) {
      if (name != nullptr) *name = fs.name;
      return true;
    }
  }
  return false;
}

MappedFile::~MappedFile() { Reset(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_bytes_(std::exchange(other.mapped_bytes_, 0)),
      copied_(std::exchange(other.copied_, false)),
      fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      copy_reason_(std::move(other.copy_reason_)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    Reset();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
    copied_ = std::exchange(other.copied_, false);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    copy_reason_ = std::move(other.copy_reason_);
  }
  return *this;
}

void MappedFile::Reset() {
  if (data_ != nullptr) munmap(data_, mapped_bytes_);
  if (fd_ >= 0) close(fd_);
  data_ = nullptr;
  size_ = 0;
  mapped_bytes_ = 0;
  copied_ = false;
  fd_ = -1;
}

void MappedFile::Release(const uint8_t* p, size_t n) const {
  if (data_ == nullptr || p < data_ || n > size_ || static_cast<size_t>(p - data_) > size_ - n) {
    return;
  }
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

Status MappedFile::CheckSize() const {
  if (copied_ || fd_ < 0) return Status::Ok();
  struct stat st {};
  if (fstat(fd_, &st) != 0) return IoError("cannot stat '" + path_ + "': " + Errno(errno));
  if (static_cast<uint64_t>(st.st_size) < size_) {
    return IoError("'" + path_ + "' shrank from " + std::to_string(size_) + " to " +
                   std::to_string(st.st_size) +
                   " bytes while it was mapped (another process truncated or rewrote it in "
                   "place); load it again once it is complete, or with --no-mmap (a copy)");
  }
  return Status::Ok();
}

Status MappedFile::Open(const std::string& path, MappedFile* out, MapMode mode,
                        uint64_t address_limit) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open '" + path + "': " + Errno(errno));
  auto fail = [fd](Status s) {
    close(fd);
    return s;
  };
  struct stat st {};
  if (fstat(fd, &st) != 0) return fail(IoError("cannot stat '" + path + "': " + Errno(errno)));
  if (!S_ISREG(st.st_mode)) return fail(IoError("'" + path + "' is not a regular file"));
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  if (file_size > address_limit) {
    return fail(Status(Code::kUnsupported,
                       "'" + path + "' is " + std::to_string(file_size) +
                           " bytes, more than this process can address (" +
                           std::to_string(address_limit) + " bytes" +
                           (address_limit == 0xFFFFFFFFu ? ": a 32-bit size_t" : "") + ")"));
  }
  MappedFile f;
  f.path_ = path;
  f.size_ = static_cast<size_t>(file_size);
  if (mode == MapMode::kCopy) {
    f.copied_ = true;
    f.copy_reason_ = "--no-mmap";
  } else if (mode == MapMode::kAuto) {
    struct statfs fs {};
    const char* name = nullptr;
    if (fstatfs(fd, &fs) == 0 && IsRemoteFileSystem(static_cast<uint64_t>(fs.f_type), &name)) {
      f.copied_ = true;
      f.copy_reason_ = std::string("on ") + name;
    }
  }
  if (f.size_ > 0) {
    if (f.copied_) {
      Status s = Copy(fd, path, f.size_, &f.data_, &f.mapped_bytes_);
      if (!s.ok()) return fail(s);
    } else {
      void* p = mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) return fail(IoError("cannot mmap '" + path + "': " + Errno(errno)));
      f.data_ = static_cast<uint8_t*>(p);
      f.mapped_bytes_ = f.size_;
    }
  }
  if (f.copied_) {
    close(fd);
  } else {
    f.fd_ = fd;  // for CheckSize
  }
  *out = std::move(f);
  return Status::Ok();
}

}  // namespace ember
