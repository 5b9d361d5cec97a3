#include "platform/topology.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "platform/affinity.h"

namespace ember {
namespace {

constexpr int kMaxCpuId = 65535;

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// The first line of a small sysfs file; false when it cannot be read.
bool ReadSmallFile(const std::string& path, std::string* out) {
  std::ifstream f(path);
  if (!f) return false;
  std::string line;
  std::getline(f, line);
  if (f.bad()) return false;
  *out = Trim(line);
  return true;
}

// A whole decimal number in [0, max]; false for anything else.
bool ParseInt(const std::string& s, int64_t max, int64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  errno = 0;
  const long long v = std::strtoll(s.c_str(), nullptr, 10);
  if (errno != 0 || v > max) return false;
  *out = v;
  return true;
}

// A positive number from a sysfs file, or 0 when missing or garbage.
int64_t ReadPositive(const std::string& path) {
  std::string text;
  int64_t v = 0;
  if (!ReadSmallFile(path, &text) || !ParseInt(text, int64_t{1} << 40, &v)) return 0;
  return v;
}

// cluster_id is -1 or 65535 where the firmware gives none (x86 VMs): unknown.
int ReadId(const std::string& path) {
  std::string text;
  int64_t v = 0;
  if (!ReadSmallFile(path, &text) || !ParseInt(text, kMaxCpuId - 1, &v)) return -1;
  return static_cast<int>(v);
}

// cpuN folders under root, for when `online` is missing.
std::vector<int> ListCpuDirs(const std::string& root) {
  std::vector<int> ids;
  std::error_code ec;
  std::filesystem::directory_iterator it(root, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    int64_t id = 0;
    if (name.size() > 3 && name.compare(0, 3, "cpu") == 0 &&
        ParseInt(name.substr(3), kMaxCpuId, &id)) {
      ids.push_back(static_cast<int>(id));
    }
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// Marks as big the cores whose value is at least kBigCoreShare of the largest.
// False (nothing marked) unless every core has a value and they differ.
bool MarkBig(std::vector<CpuCore>* cpus, int64_t CpuCore::*field) {
  int64_t lo = 0, hi = 0;
  for (const CpuCore& c : *cpus) {
    const int64_t v = c.*field;
    if (v <= 0) return false;
    lo = lo == 0 ? v : std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo == hi) return false;
  for (CpuCore& c : *cpus) {
    c.big = static_cast<double>(c.*field) >= kBigCoreShare * static_cast<double>(hi);
  }
  return true;
}

}  // namespace

std::vector<int> CpuTopology::ids() const {
  std::vector<int> out;
  for (const CpuCore& c : cpus) out.push_back(c.id);
  return out;
}

bool ParseCpuList(const std::string& text, std::vector<int>* out) {
  std::vector<int> ids;
  const std::string s = Trim(text);
  if (s.empty()) return false;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const size_t dash = part.find('-');
    int64_t lo = 0, hi = 0;
    if (dash == std::string::npos) {
      if (!ParseInt(part, kMaxCpuId, &lo)) return false;
      hi = lo;
    } else if (!ParseInt(part.substr(0, dash), kMaxCpuId, &lo) ||
               !ParseInt(part.substr(dash + 1), kMaxCpuId, &hi) || hi < lo) {
      return false;
    }
    for (int64_t i = lo; i <= hi; ++i) ids.push_back(static_cast<int>(i));
  }
  if (s.back() == ',') return false;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  *out = std::move(ids);
  return true;
}

std::string FormatCpuList(const std::vector<int>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ids[i]);
    if (j > i) out += '-' + std::to_string(ids[j]);
    i = j + 1;
  }
  return out;
}

CpuTopology DetectTopology(const std::string& root, const std::vector<int>& allowed) {
  std::vector<int> online;
  std::string text;
  if (!ReadSmallFile(root + "/online", &text) || !ParseCpuList(text, &online)) {
    online = ListCpuDirs(root);
  }
  std::vector<int> usable;
  if (allowed.empty()) {
    usable = online;
  } else {
    std::set_intersection(online.begin(), online.end(), allowed.begin(), allowed.end(),
                          std::back_inserter(usable));
    if (usable.empty()) usable = allowed;
  }
  if (usable.empty()) {
    const int n = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    for (int i = 0; i < n; ++i) usable.push_back(i);
  }

  CpuTopology topo;
  for (int id : usable) {
    const std::string dir = root + "/cpu" + std::to_string(id);
    CpuCore c;
    c.id = id;
    c.capacity = ReadPositive(dir + "/cpu_capacity");
    c.max_freq_khz = ReadPositive(dir + "/cpufreq/cpuinfo_max_freq");
    c.cluster = ReadId(dir + "/topology/cluster_id");
    if (c.cluster < 0) c.cluster = ReadId(dir + "/topology/physical_package_id");
    topo.cpus.push_back(c);
  }
  if (MarkBig(&topo.cpus, &CpuCore::capacity)) {
    topo.big_by = BigCoresBy::kCapacity;
  } else if (MarkBig(&topo.cpus, &CpuCore::max_freq_khz)) {
    topo.big_by = BigCoresBy::kMaxFrequency;
  } else {
    topo.big_by = BigCoresBy::kNone;
    for (CpuCore& c : topo.cpus) c.big = true;
  }
  for (const CpuCore& c : topo.cpus) {
    if (c.big) topo.big.push_back(c.id);
  }
  return topo;
}

CpuTopology DetectTopology(const std::string& sysfs_cpu_root) {
  return DetectTopology(sysfs_cpu_root, AllowedCpus());
}

std::string CpuModelName(const std::string& cpuinfo_path) {
  std::ifstream f(cpuinfo_path);
  std::string line, hardware, implementer;
  std::vector<std::string> parts;  // distinct "implementer/part" pairs, in order
  while (std::getline(f, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = Trim(line.substr(0, colon)), value = Trim(line.substr(colon + 1));
    if (value.empty()) continue;
    if (key == "model name") return value;
    if (key == "Hardware" && hardware.empty()) hardware = value;
    // ARM lists an implementer and a part per core; the distinct pairs name the mix.
    if (key == "CPU implementer") implementer = value;
    if (key == "CPU part") {
      const std::string pair = implementer + "/" + value;
      if (std::find(parts.begin(), parts.end(), pair) == parts.end()) parts.push_back(pair);
    }
  }
  std::string out = hardware;
  for (const std::string& p : parts) out += (out.empty() ? "" : " ") + p;
  return out;
}

}  // namespace ember
