// AvailableMemory over fake /proc and cgroup trees (fake_sysfs.h's folder).
#include "platform/memory_info.h"

#include <catch2/catch.hpp>

#include "platform/fake_sysfs.h"

using ember::AvailableMemory;
using ember::FormatBytes;
using ember::MemoryBudget;
using ember::test::FakeSysfs;

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

void MemInfo(const FakeSysfs& fs, uint64_t available_kib) {
  fs.Write("proc/meminfo",
           "MemTotal:       24684052 kB\nMemFree:        21562948 kB\n"
           "MemAvailable:   " +
               std::to_string(available_kib) + " kB\nBuffers:          123 kB");
}

}  // namespace

TEST_CASE("memory info: MemAvailable alone", "[platform][memory]") {
  FakeSysfs fs("meminfo");
  MemInfo(fs, 2048 * 1024);
  const MemoryBudget b = AvailableMemory(fs.root());
  CHECK(b.bytes == 2048 * kMiB);
  CHECK(b.source == "MemAvailable in /proc/meminfo");
}

TEST_CASE("memory info: nothing readable means no limit", "[platform][memory]") {
  FakeSysfs fs("nothing");
  const MemoryBudget b = AvailableMemory(fs.root());
  CHECK(b.bytes == UINT64_MAX);
  FakeSysfs garbage("garbage");
  garbage.Write("proc/meminfo", "MemAvailable: lots");
  garbage.Write("proc/self/cgroup", "nonsense\n0::");
  CHECK(AvailableMemory(garbage.root()).bytes == UINT64_MAX);
}

TEST_CASE("memory info: a cgroup v2 limit below MemAvailable wins", "[platform][memory]") {
  FakeSysfs fs("v2");
  MemInfo(fs, 8192 * 1024);
  fs.Write("proc/self/cgroup", "0::/user.slice/app.scope");
  // The parent's limit is the tighter one; inactive file pages do not count.
  fs.Write("sys/fs/cgroup/user.slice/memory.max", std::to_string(1024 * kMiB));
  fs.Write("sys/fs/cgroup/user.slice/memory.current", std::to_string(700 * kMiB));
  fs.Write("sys/fs/cgroup/user.slice/memory.stat",
           "anon 123\nfile 456\ninactive_file " + std::to_string(200 * kMiB) + "\nactive_file 1");
  fs.Write("sys/fs/cgroup/user.slice/app.scope/memory.max", "max");
  fs.Write("sys/fs/cgroup/user.slice/app.scope/memory.current", std::to_string(300 * kMiB));
  const MemoryBudget b = AvailableMemory(fs.root());
  CHECK(b.bytes == 524 * kMiB);  // 1024 - (700 - 200)
  CHECK(b.source ==
        "the cgroup limit /sys/fs/cgroup/user.slice/memory.max of 1.0 GiB, 500.0 MiB of it in use");
}

TEST_CASE("memory info: a cgroup v1 memory controller", "[platform][memory]") {
  FakeSysfs fs("v1");
  MemInfo(fs, 8192 * 1024);
  fs.Write("proc/self/cgroup", "9:name=systemd:/\n4:cpu,memory:/docker/abc\n1:cpuset:/");
  fs.Write("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712");  // none
  fs.Write("sys/fs/cgroup/memory/memory.usage_in_bytes", "1");
  fs.Write("sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", std::to_string(512 * kMiB));
  fs.Write("sys/fs/cgroup/memory/docker/abc/memory.usage_in_bytes", std::to_string(600 * kMiB));
  const MemoryBudget b = AvailableMemory(fs.root());
  CHECK(b.bytes == 0);  // over its limit already
  CHECK(b.source.find("/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes") !=
        std::string::npos);
}

TEST_CASE("memory info: a cgroup namespace (the path is not there) reads the mount's root",
          "[platform][memory]") {
  FakeSysfs fs("namespace");
  MemInfo(fs, 8192 * 1024);
  fs.Write("proc/self/cgroup", "0::/kubepods/pod1/container2");
  fs.Write("sys/fs/cgroup/memory.max", std::to_string(256 * kMiB));
  fs.Write("sys/fs/cgroup/memory.current", std::to_string(56 * kMiB));
  CHECK(AvailableMemory(fs.root()).bytes == 200 * kMiB);
}

TEST_CASE("memory info: FormatBytes", "[platform][memory]") {
  CHECK(FormatBytes(700) == "700 bytes");
  CHECK(FormatBytes(1536) == "1.5 KiB");
  CHECK(FormatBytes(512 * kMiB) == "512.0 MiB");
  CHECK(FormatBytes(uint64_t{3} << 30) == "3.0 GiB");
  CHECK(FormatBytes(UINT64_MAX) == "16.0 EiB");
}

TEST_CASE("memory info: this machine gives a number", "[platform][memory]") {
  const MemoryBudget b = AvailableMemory();
  INFO(b.source);
  if (b.source.empty()) {
    CHECK(b.bytes == UINT64_MAX);  // no /proc/meminfo
  } else {
    CHECK(b.bytes > 0);
  }
}
