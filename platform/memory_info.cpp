#include "platform/memory_info.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include <sys/stat.h>

namespace ember {
namespace {

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream f(path);
  if (!f) return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

bool IsDir(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// A file holding one unsigned number (or "max": no limit -> false).
bool ReadNumber(const std::string& path, uint64_t* out) {
  std::string text;
  if (!ReadFile(path, &text)) return false;
  size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  if (i == text.size() || text[i] < '0' || text[i] > '9') return false;
  uint64_t v = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    const uint64_t d = static_cast<uint64_t>(text[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

// "key value" lines (memory.stat, /proc/meminfo's "Key:   value kB").
bool FindField(const std::string& text, const std::string& key, uint64_t* out) {
  size_t at = 0;
  while (at < text.size()) {
    const size_t eol = text.find('\n', at);
    const std::string line =
        text.substr(at, eol == std::string::npos ? std::string::npos : eol - at);
    at = eol == std::string::npos ? text.size() : eol + 1;
    if (line.compare(0, key.size(), key) != 0 || line.size() == key.size()) continue;
    const char c = line[key.size()];
    if (c != ' ' && c != ':' && c != '\t') continue;
    unsigned long long v = 0;
    if (std::sscanf(line.c_str() + key.size() + (c == ':' ? 1 : 0), "%llu", &v) != 1) continue;
    *out = v;
    return true;
  }
  return false;
}

// Limits above this are "no limit" (cgroup v1 writes 2^63 rounded down to a page).
constexpr uint64_t kNoLimit = uint64_t{1} << 60;

struct CgroupFiles {
  const char* limit;
  const char* usage;
  const char* inactive_file;  // the memory.stat field
};
constexpr CgroupFiles kV2 = {"memory.max", "memory.current", "inactive_file"};
constexpr CgroupFiles kV1 = {"memory.limit_in_bytes", "memory.usage_in_bytes",
                             "total_inactive_file"};

// Walks from mount + path up to the mount's root, keeping the tightest limit.
void CheckCgroup(const std::string& root, const std::string& mount, std::string path,
                 const CgroupFiles& files, MemoryBudget* budget) {
  if (!IsDir(mount)) return;
  if (path.empty() || path[0] != '/') path = "/" + path;
  if (!IsDir(mount + path)) path = "/";  // a cgroup namespace: the mount is our cgroup
  while (true) {
    const std::string dir = mount + (path == "/" ? "" : path);
    uint64_t limit = 0, usage = 0;
    if (ReadNumber(dir + "/" + files.limit, &limit) && limit < kNoLimit &&
        ReadNumber(dir + "/" + files.usage, &usage)) {
      std::string stat;
      uint64_t inactive = 0;
      if (ReadFile(dir + "/memory.stat", &stat) &&
          FindField(stat, files.inactive_file, &inactive)) {
        usage = usage > inactive ? usage - inactive : 0;
      }
      const uint64_t left = limit > usage ? limit - usage : 0;
      if (left < budget->bytes) {
        budget->bytes = left;
        budget->source = "the cgroup limit " + dir.substr(root.size()) + "/" + files.limit +
                         " of " + FormatBytes(limit) + ", " + FormatBytes(usage) + " of it in use";
      }
    }
    if (path == "/") break;
    const size_t slash = path.find_last_of('/');
    path = slash == 0 ? "/" : path.substr(0, slash);
  }
}

}  // namespace

MemoryBudget AvailableMemory(const std::string& root) {
  MemoryBudget budget;
  std::string meminfo;
  uint64_t kib = 0;
  if (ReadFile(root + "/proc/meminfo", &meminfo) && FindField(meminfo, "MemAvailable", &kib) &&
      kib < (UINT64_MAX >> 10)) {
    budget.bytes = kib << 10;
    budget.source = "MemAvailable in /proc/meminfo";
  }
  std::string cgroups;
  if (!ReadFile(root + "/proc/self/cgroup", &cgroups)) return budget;
  // Lines "id:controllers:path": "0::/x" is cgroup v2; "4:memory:/x" v1.
  std::istringstream lines(cgroups);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t a = line.find(':');
    const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    if (controllers.empty()) {
      const std::string unified = root + "/sys/fs/cgroup/unified";
      CheckCgroup(root, IsDir(unified) ? unified : root + "/sys/fs/cgroup", path, kV2, &budget);
    } else {
      std::istringstream names(controllers);
      std::string name;
      while (std::getline(names, name, ',')) {
        if (name == "memory") CheckCgroup(root, root + "/sys/fs/cgroup/memory", path, kV1, &budget);
      }
    }
  }
  return budget;
}

std::string FormatBytes(uint64_t bytes) {
  static const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double v = static_cast<double>(bytes);
  int unit = -1;
  while (v >= 1024 && unit < 5) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
  return buf;
}

}  // namespace ember
