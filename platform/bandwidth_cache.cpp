#include "platform/bandwidth_cache.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace ember {
namespace {

constexpr const char* kHeader = "ember read bandwidth v4";
constexpr const char* kFileName = "bandwidth-v4.txt";

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

bool ReadWholeFile(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return !f.bad();
}

}  // namespace

std::string BandwidthKey(const std::string& cpu_model, const CpuTopology& topo) {
  std::string key = (cpu_model.empty() ? std::string("unknown cpu") : cpu_model) + " | cpus " +
                    std::to_string(topo.n_cpus()) + " | big " + FormatCpuList(topo.big);
  for (char& c : key) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return key;
}

std::string BandwidthCachePath() {
  const std::string dir = Env("EMBER_CACHE_DIR");
  if (!dir.empty()) return dir + "/" + kFileName;
  const std::string home = Env("HOME");
  if (!home.empty()) return home + "/.cache/ember/" + kFileName;
  return "";
}

std::string FormatBandwidthCache(const std::string& key, const std::vector<double>& gbps) {
  std::string out = std::string(kHeader) + "\nkey " + key + "\n";
  for (size_t i = 0; i < gbps.size(); ++i) {
    char line[64];
    std::snprintf(line, sizeof(line), "%zu %.3f\n", i + 1, gbps[i]);
    out += line;
  }
  return out;
}

bool ParseBandwidthCache(const std::string& text, const std::string& key, int n_threads,
                         std::vector<double>* gbps) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) lines.push_back(line);
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (n_threads < 1 || lines.size() != static_cast<size_t>(n_threads) + 2) return false;
  if (lines[0] != kHeader || lines[1] != "key " + key) return false;
  std::vector<double> out;
  for (int t = 1; t <= n_threads; ++t) {
    const std::string& l = lines[static_cast<size_t>(t) + 1];
    const std::string prefix = std::to_string(t) + " ";
    if (l.compare(0, prefix.size(), prefix) != 0) return false;
    const char* begin = l.c_str() + prefix.size();
    char* end = nullptr;
    const double v = std::strtod(begin, &end);
    if (end == begin || *end != '\0' || !std::isfinite(v) || v <= 0 || v > 1e6) return false;
    out.push_back(v);
  }
  *gbps = std::move(out);
  return true;
}

bool WriteFileAtomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  // Unique per process and call, so concurrent writers never share a file.
  static std::atomic<int> counter{0};
  const std::string tmp = path + ".tmp." + std::to_string(static_cast<long>(getpid())) + "." +
                          std::to_string(counter++);
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return false;
    f << text;
    f.flush();
    if (!f) {
      f.close();
      fs::remove(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

std::vector<double> LoadOrMeasureBandwidth(const std::string& path, const std::string& key,
                                           int n_threads,
                                           const std::function<std::vector<double>(int)>& measure,
                                           const std::function<bool()>& quiet) {
  std::vector<double> gbps;
  std::string text;
  if (!path.empty() && ReadWholeFile(path, &text) &&
      ParseBandwidthCache(text, key, n_threads, &gbps)) {
    return gbps;
  }
  gbps = measure(n_threads);
  if (!path.empty() && (!quiet || quiet())) {
    std::vector<double> check;
    const std::string out = FormatBandwidthCache(key, gbps);
    // Only a profile that reads back is worth keeping (a failed measurement
    // is measured again next time).
    if (ParseBandwidthCache(out, key, n_threads, &check)) WriteFileAtomically(path, out);
  }
  return gbps;
}

MachineLoad ReadMachineLoad(const std::string& loadavg_path) {
  MachineLoad load;
  std::string text;
  if (!ReadWholeFile(loadavg_path, &text)) return load;
  std::stringstream ss(text);
  std::string load1, load5, load15, tasks;
  if (!(ss >> load1)) return load;
  char* end = nullptr;
  const double v = std::strtod(load1.c_str(), &end);
  if (end != load1.c_str() && *end == '\0' && std::isfinite(v) && v >= 0) load.load1 = v;
  if (!(ss >> load5 >> load15 >> tasks)) return load;
  const size_t slash = tasks.find('/');
  if (slash == std::string::npos || slash == 0 || slash > 9) return load;
  for (size_t i = 0; i < slash; ++i) {
    if (tasks[i] < '0' || tasks[i] > '9') return load;
  }
  load.runnable = std::atoi(tasks.substr(0, slash).c_str());
  return load;
}

bool QuietEnoughToCache(const MachineLoad& load, int n_cpus, int own) {
  const bool load_ok = load.load1 < 0 || load.load1 <= 0.5 + 0.25 * n_cpus;
  const bool now_ok = load.runnable < 0 || load.runnable - own <= n_cpus / 4;
  return load_ok && now_ok;
}

}  // namespace ember
