// The cpus this process can use and which of them are big cores, read from
// sysfs (docs/DESIGN.md §8). On big.LITTLE (and Intel hybrid) chips the
// little cores are slower and a step waits for its slowest thread, so compute
// threads belong on the big cores only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ember {

struct CpuCore {
  int id = 0;                // logical cpu number: <root>/cpu<id>
  int64_t capacity = 0;      // cpu_capacity (ARM, recent x86 kernels); 0: unknown
  int64_t max_freq_khz = 0;  // cpufreq/cpuinfo_max_freq; 0: unknown
  int cluster = -1;          // topology/cluster_id, else physical_package_id; -1: unknown
  bool big = false;
};

// What told big cores from little ones.
enum class BigCoresBy {
  kCapacity,      // cpu_capacity differs between cores
  kMaxFrequency,  // no usable capacities; cpuinfo_max_freq differs
  kNone,          // neither differs (or is known for every core): all cores are big
};

struct CpuTopology {
  std::vector<CpuCore> cpus;  // online cpus this process may use, ascending id; never empty
  std::vector<int> big;       // ids of the big cores among them, ascending; never empty
  BigCoresBy big_by = BigCoresBy::kNone;

  int n_cpus() const { return static_cast<int>(cpus.size()); }
  int n_big() const { return static_cast<int>(big.size()); }
  bool heterogeneous() const { return big.size() < cpus.size(); }
  std::vector<int> ids() const;
};

// A core is big when its capacity (or, without capacities, its max frequency)
// is at least this share of the largest. Not "equal to the largest": Intel
// turbo-max "favoured" cores and some phone prime cores are a few percent
// faster than their siblings, while little cores are 25-60% slower.
constexpr double kBigCoreShare = 0.9;

// Reads the topology under sysfs_cpu_root (the layout of /sys/devices/system/cpu:
// `online`, cpuN/cpu_capacity, cpuN/cpufreq/cpuinfo_max_freq, cpuN/topology/
// {cluster_id,physical_package_id}), keeping only the cpus in `allowed` (empty:
// no restriction). Missing, unreadable or garbage files count as unknown; a
// signal (capacity, frequency) is used only when every usable core has it. With
// no readable `online` list the cpuN folders are used; with none of those,
// `allowed`, else cpus 0..hardware_concurrency-1. If `allowed` and sysfs share
// no cpu, `allowed` wins (sysfs is wrong about this process).
CpuTopology DetectTopology(const std::string& sysfs_cpu_root, const std::vector<int>& allowed);

// The same with this process's affinity mask (AllowedCpus()) as `allowed`.
CpuTopology DetectTopology(const std::string& sysfs_cpu_root = "/sys/devices/system/cpu");

// Parses a sysfs cpu list ("0-3,6,8-9", whitespace around it ignored) into
// ascending unique ids. False for anything else, or ids beyond 65535.
bool ParseCpuList(const std::string& text, std::vector<int>* out);

// The reverse: ascending ids -> "0-3,6,8-9".
std::string FormatCpuList(const std::vector<int>& ids);

// The CPU's name from /proc/cpuinfo, for telling machines apart: "model name"
// (x86, armhf), else "Hardware" followed by the distinct ARM "CPU implementer/
// CPU part" pairs (aarch64), else "".
std::string CpuModelName(const std::string& cpuinfo_path = "/proc/cpuinfo");

}  // namespace ember
