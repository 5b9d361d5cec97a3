// MappedFile: mapping or copying, the address-space limit, and a file that
// shrinks under a mapping (checked, not read: reading such a page is SIGBUS).
#include "platform/mapped_file.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "platform/fake_sysfs.h"

using ember::MapMode;
using ember::MappedFile;
using ember::Status;

namespace {

std::vector<uint8_t> Pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 7 + 3);
  return v;
}

std::string WriteFile(const ember::test::FakeSysfs& dir, const std::vector<uint8_t>& bytes) {
  const std::string path = dir.root() + "/file.bin";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  if (!bytes.empty()) REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  std::fclose(f);
  return path;
}

}  // namespace

TEST_CASE("mapped file: mapped and copied images hold the file's bytes", "[platform][mmap]") {
  ember::test::FakeSysfs dir("mapped");
  const std::vector<uint8_t> bytes = Pattern(100000);
  const std::string path = WriteFile(dir, bytes);
  for (MapMode mode : {MapMode::kAuto, MapMode::kMap, MapMode::kCopy}) {
    MappedFile f;
    const Status s = MappedFile::Open(path, &f, mode);
    INFO(s.message());
    REQUIRE(s.ok());
    REQUIRE(f.size() == bytes.size());
    CHECK(std::memcmp(f.data(), bytes.data(), bytes.size()) == 0);
    CHECK(reinterpret_cast<uintptr_t>(f.data()) % 4096 == 0);  // page-aligned either way
    if (mode != MapMode::kAuto) {  // kAuto copies when the temp folder is on NFS, FUSE...
      CHECK(f.copied() == (mode == MapMode::kCopy));
      CHECK(f.copy_reason() == (mode == MapMode::kCopy ? "--no-mmap" : ""));
    }
    CHECK(f.CheckSize().ok());
    // Moving keeps the image.
    MappedFile g = std::move(f);
    CHECK(g.data()[12345] == bytes[12345]);
    CHECK(f.data() == nullptr);
  }
}

TEST_CASE("mapped file: a copy does not depend on the file, a mapping notices it shrank",
          "[platform][mmap]") {
  ember::test::FakeSysfs dir("shrink");
  const std::vector<uint8_t> bytes = Pattern(3 * 4096 + 100);
  const std::string path = WriteFile(dir, bytes);
  MappedFile copy, map;
  REQUIRE(MappedFile::Open(path, &copy, MapMode::kCopy).ok());
  REQUIRE(MappedFile::Open(path, &map, MapMode::kMap).ok());
  REQUIRE(truncate(path.c_str(), 4096) == 0);
  // The copy reads as before, everywhere, and has nothing to check.
  CHECK(std::memcmp(copy.data(), bytes.data(), bytes.size()) == 0);
  CHECK(copy.CheckSize().ok());
  // The mapping must not be read past the new end (SIGBUS): CheckSize says so.
  const Status s = map.CheckSize();
  CHECK(s.code() == ember::Code::kIoError);
  CHECK(s.message() == "'" + path + "' shrank from 12388 to 4096 bytes while it was mapped " +
                           "(another process truncated or rewrote it in place); load it again " +
                           "once it is complete, or with --no-mmap (a copy)");
}

TEST_CASE("mapped file: a file larger than the address space is refused before mapping",
          "[platform][mmap]") {
  ember::test::FakeSysfs dir("limit");
  const std::string path = WriteFile(dir, Pattern(5000));
  MappedFile f;
  // The 32-bit path checked on any host: the limit is a parameter.
  Status s = MappedFile::Open(path, &f, MapMode::kMap, 4096);
  CHECK(s.code() == ember::Code::kUnsupported);
  CHECK(s.message() ==
        "'" + path + "' is 5000 bytes, more than this process can address " + "(4096 bytes)");
  CHECK(f.data() == nullptr);
  s = MappedFile::Open(path, &f, MapMode::kCopy, 4999);
  CHECK(s.code() == ember::Code::kUnsupported);
  CHECK(MappedFile::Open(path, &f, MapMode::kCopy, 5000).ok());
  CHECK(ember::kAddressSpaceLimit == SIZE_MAX);
}

TEST_CASE("mapped file: empty files, folders and missing files", "[platform][mmap]") {
  ember::test::FakeSysfs dir("empty");
  const std::string path = WriteFile(dir, {});
  for (MapMode mode : {MapMode::kMap, MapMode::kCopy}) {
    MappedFile f;
    REQUIRE(MappedFile::Open(path, &f, mode).ok());
    CHECK(f.size() == 0);
    CHECK(f.data() == nullptr);
  }
  MappedFile f;
  CHECK(MappedFile::Open(dir.root(), &f).message() == "'" + dir.root() + "' is not a regular file");
  CHECK(MappedFile::Open(dir.root() + "/nope", &f).code() == ember::Code::kIoError);
}

TEST_CASE("mapped file: network and user-space file systems are told apart", "[platform][mmap]") {
  const char* name = nullptr;
  CHECK(ember::IsRemoteFileSystem(0x6969, &name));  // NFS_SUPER_MAGIC
  CHECK(std::string(name) == "nfs");
  CHECK(ember::IsRemoteFileSystem(0xFF534D42, &name));
  CHECK(std::string(name) == "cifs");
  CHECK(ember::IsRemoteFileSystem(0x65735546, &name));
  CHECK(std::string(name) == "fuse");
  CHECK(ember::IsRemoteFileSystem(0x01021997, &name));
  CHECK(std::string(name) == "9p");
  // f_type is a signed long on some targets: a sign-extended magic still matches.
  CHECK(ember::IsRemoteFileSystem(0xFFFFFFFFFF534D42ull));
  CHECK_FALSE(ember::IsRemoteFileSystem(0xEF53));      // ext4
  CHECK_FALSE(ember::IsRemoteFileSystem(0x01021994));  // tmpfs
  CHECK_FALSE(ember::IsRemoteFileSystem(0x58465342));  // xfs
  CHECK_FALSE(ember::IsRemoteFileSystem(0x9123683E));  // btrfs
}
