// Fake /sys/devices/system/cpu trees in a temporary folder, for topology tests.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace ember::test {

class FakeSysfs {
 public:
  explicit FakeSysfs(const std::string& name) {
    static int counter = 0;
    root_ =
        std::filesystem::temp_directory_path() /
        ("ember-sysfs-" + name + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  ~FakeSysfs() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  FakeSysfs(const FakeSysfs&) = delete;
  FakeSysfs& operator=(const FakeSysfs&) = delete;

  std::string root() const { return root_.string(); }

  // Writes root/<rel> (creating folders) with `text` and a newline, as sysfs does.
  void Write(const std::string& rel, const std::string& text) const {
    const std::filesystem::path p = root_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
  }

  // A cpu folder with the given files; a value <= 0 leaves that file out.
  void Cpu(int id, long capacity, long max_freq_khz, int cluster) const {
    const std::string dir = "cpu" + std::to_string(id);
    std::filesystem::create_directories(root_ / dir / "topology");
    if (capacity > 0) Write(dir + "/cpu_capacity", std::to_string(capacity));
    if (max_freq_khz > 0) Write(dir + "/cpufreq/cpuinfo_max_freq", std::to_string(max_freq_khz));
    if (cluster >= 0) {
      Write(dir + "/topology/cluster_id", std::to_string(cluster));
      Write(dir + "/topology/physical_package_id", "0");
    }
  }

 private:
  std::filesystem::path root_;
};

}  // namespace ember::test
