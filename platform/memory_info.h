// How much more memory this process may take before the kernel's OOM killer
// (or its cgroup's) ends it: what sessions check their KV cache against before
// allocating it (runtime/session/session.h).
#pragma once

#include <cstdint>
#include <string>

namespace ember {

struct MemoryBudget {
  // Bytes this process may still allocate and touch; UINT64_MAX when nothing
  // is known (no /proc/meminfo: not Linux).
  uint64_t bytes = UINT64_MAX;
  // What set it, for messages: "MemAvailable in /proc/meminfo", or the cgroup
  // file whose limit is the tighter one with its numbers.
  std::string source;
};

// The smaller of:
//  - MemAvailable in /proc/meminfo (free memory plus the page cache and
//    slabs the kernel can reclaim, without swap);
//  - for each memory cgroup from this process's up to the root that has a
//    limit: the limit less the usage, not counting the inactive file pages
//    its memory.stat lists (page cache the kernel reclaims first).
//    cgroup v2: memory.max, memory.current, memory.stat inactive_file, under
//    /sys/fs/cgroup (or /sys/fs/cgroup/unified); v1: memory.limit_in_bytes,
//    memory.usage_in_bytes, memory.stat total_inactive_file, under
//    /sys/fs/cgroup/memory. The cgroup path comes from /proc/self/cgroup; a
//    path that is not there (a cgroup namespace) means the mount's root.
// `root` prefixes every path, for tests ("" for the real files). Unreadable
// or garbage files are ignored.
MemoryBudget AvailableMemory(const std::string& root = "");

// "512.0 MiB", "3.2 GiB", "700 bytes": binary units, one decimal.
std::string FormatBytes(uint64_t bytes);

}  // namespace ember
