// DetectTopology over fake sysfs trees: big.LITTLE by capacity and by max
// frequency, homogeneous, missing and garbage files, offline cpus, the
// affinity mask; and the cpu-list and cpuinfo parsers.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "fake_sysfs.h"
#include "platform/affinity.h"
#include "platform/topology.h"

using namespace ember;
using ember::test::FakeSysfs;

namespace {

std::vector<int> Range(int lo, int hi) {
  std::vector<int> v;
  for (int i = lo; i <= hi; ++i) v.push_back(i);
  return v;
}

// 4 little cores (0-3) and 4 big ones (4-7), as on an RK3588 or a Pi-class
// big.LITTLE board; capacity and/or max frequency as asked.
void LittleBig(const FakeSysfs& fs, bool capacity, bool freq) {
  fs.Write("online", "0-7");
  for (int i = 0; i < 8; ++i) {
    const bool big = i >= 4;
    fs.Cpu(i, capacity ? (big ? 1024 : 414) : 0, freq ? (big ? 2400000 : 1800000) : 0, big ? 1 : 0);
  }
}

}  // namespace

TEST_CASE("topology: 4 little + 4 big cores told apart by cpu_capacity", "[topology]") {
  FakeSysfs fs("cap");
  LittleBig(fs, true, true);
  const CpuTopology t = DetectTopology(fs.root(), {});
  CHECK(t.ids() == Range(0, 7));
  CHECK(t.big == Range(4, 7));
  CHECK(t.big_by == BigCoresBy::kCapacity);
  CHECK(t.heterogeneous());
  CHECK(t.cpus[0].capacity == 414);
  CHECK(t.cpus[5].max_freq_khz == 2400000);
  CHECK(t.cpus[0].cluster == 0);
  CHECK(t.cpus[7].cluster == 1);
  CHECK_FALSE(t.cpus[3].big);
  CHECK(t.cpus[4].big);
}

TEST_CASE("topology: without capacities the max frequency decides", "[topology]") {
  FakeSysfs fs("freq");
  LittleBig(fs, false, true);
  const CpuTopology t = DetectTopology(fs.root(), {});
  CHECK(t.big == Range(4, 7));
  CHECK(t.big_by == BigCoresBy::kMaxFrequency);

  SECTION("a capacity missing on one core: frequency decides") {
    FakeSysfs fs2("onecap");
    LittleBig(fs2, false, true);
    fs2.Write("cpu6/cpu_capacity", "1024");
    const CpuTopology t2 = DetectTopology(fs2.root(), {});
    CHECK(t2.big_by == BigCoresBy::kMaxFrequency);
    CHECK(t2.big == Range(4, 7));
  }
}

TEST_CASE("topology: cores a few percent apart are all big (favoured cores)", "[topology]") {
  // Intel hybrid: P-cores at 5.1 and 5.2 GHz ("turbo max" favoured), E-cores at 3.9.
  FakeSysfs fs("hybrid");
  fs.Write("online", "0-5");
  const long freq[6] = {5100000, 5200000, 5100000, 5200000, 3900000, 3900000};
  for (int i = 0; i < 6; ++i) fs.Cpu(i, 0, freq[i], 0);
  const CpuTopology t = DetectTopology(fs.root(), {});
  CHECK(t.big == Range(0, 3));
  CHECK(t.big_by == BigCoresBy::kMaxFrequency);
}

TEST_CASE("topology: a homogeneous machine has only big cores", "[topology]") {
  FakeSysfs fs("homog");
  fs.Write("online", "0-3");
  for (int i = 0; i < 4; ++i) fs.Cpu(i, 1024, 3000000, 0);
  const CpuTopology t = DetectTopology(fs.root(), {});
  CHECK(t.ids() == Range(0, 3));
  CHECK(t.big == Range(0, 3));
  CHECK(t.big_by == BigCoresBy::kNone);
  CHECK_FALSE(t.heterogeneous());
}

TEST_CASE("topology: missing and garbage files", "[topology][bad-input]") {
  SECTION("no capacity, no cpufreq, no topology: all cores big") {
    FakeSysfs fs("bare");
    fs.Write("online", "0-2");
    for (int i = 0; i < 3; ++i) fs.Cpu(i, 0, 0, -1);
    const CpuTopology t = DetectTopology(fs.root(), {});
    CHECK(t.big == Range(0, 2));
    CHECK(t.big_by == BigCoresBy::kNone);
    CHECK(t.cpus[1].cluster == -1);
  }
  SECTION("garbage values count as unknown") {
    FakeSysfs fs("garbage");
    LittleBig(fs, true, true);
    fs.Write("cpu2/cpu_capacity", "fast");
    fs.Write("cpu3/cpufreq/cpuinfo_max_freq", "-1800000");
    fs.Write("cpu1/topology/cluster_id", "65535");  // "none" on x86 VMs
    fs.Write("cpu1/topology/physical_package_id", "zz");
    const CpuTopology t = DetectTopology(fs.root(), {});
    // Capacity and frequency each miss a core: nothing tells big from little.
    CHECK(t.big_by == BigCoresBy::kNone);
    CHECK(t.big == Range(0, 7));
    CHECK(t.cpus[2].capacity == 0);
    CHECK(t.cpus[3].max_freq_khz == 0);
    CHECK(t.cpus[1].cluster == -1);
  }
  SECTION("empty and binary files") {
    FakeSysfs fs("empty");
    LittleBig(fs, true, false);
    fs.Write("cpu0/cpu_capacity", "");
    fs.Write("cpu5/cpu_capacity", std::string("\x01\x02\xff", 3));
    const CpuTopology t = DetectTopology(fs.root(), {});
    CHECK(t.big_by == BigCoresBy::kNone);
    CHECK(t.n_big() == 8);
  }
  SECTION("no online list: the cpuN folders") {
    FakeSysfs fs("noonline");
    LittleBig(fs, true, false);
    std::filesystem::remove(fs.root() + "/online");
    const CpuTopology t = DetectTopology(fs.root(), {});
    CHECK(t.ids() == Range(0, 7));
    CHECK(t.big == Range(4, 7));
  }
  SECTION("a garbage online list: the cpuN folders") {
    FakeSysfs fs("badonline");
    LittleBig(fs, true, false);
    for (const char* bad : {"", "seven", "3-1", "0-7,", "0-999999", "1,,2"}) {
      fs.Write("online", bad);
      INFO("online: '" << bad << "'");
      const CpuTopology t = DetectTopology(fs.root(), {});
      CHECK(t.ids() == Range(0, 7));
    }
  }
  SECTION("no sysfs at all: the allowed cpus, else hardware_concurrency") {
    const CpuTopology t = DetectTopology("/nonexistent/ember/sysfs", {2, 3});
    CHECK(t.ids() == std::vector<int>{2, 3});
    CHECK(t.big == std::vector<int>{2, 3});
    const CpuTopology u = DetectTopology("/nonexistent/ember/sysfs", {});
    CHECK(u.n_cpus() >= 1);
    CHECK(u.n_big() == u.n_cpus());
  }
}

TEST_CASE("topology: offline cpus are left out", "[topology]") {
  FakeSysfs fs("offline");
  LittleBig(fs, true, true);
  fs.Write("online", "0-1,4-5");  // cpus 2, 3, 6, 7 hot-unplugged
  const CpuTopology t = DetectTopology(fs.root(), {});
  CHECK(t.ids() == (std::vector<int>{0, 1, 4, 5}));
  CHECK(t.big == (std::vector<int>{4, 5}));
  // Only little cores online: they are the fastest there is.
  fs.Write("online", "0-3");
  const CpuTopology l = DetectTopology(fs.root(), {});
  CHECK(l.big == Range(0, 3));
  CHECK_FALSE(l.heterogeneous());
}

TEST_CASE("topology: the affinity mask limits the usable cpus", "[topology]") {
  FakeSysfs fs("mask");
  LittleBig(fs, true, true);
  // taskset -c 2-5: two little, two big.
  const CpuTopology t = DetectTopology(fs.root(), {2, 3, 4, 5});
  CHECK(t.ids() == Range(2, 5));
  CHECK(t.big == (std::vector<int>{4, 5}));
  // taskset -c 0-1: only little cores, so they are this process's big ones.
  const CpuTopology l = DetectTopology(fs.root(), {0, 1});
  CHECK(l.big == (std::vector<int>{0, 1}));
  // sysfs and the mask share nothing: the mask wins.
  const CpuTopology d = DetectTopology(fs.root(), {20, 21});
  CHECK(d.ids() == (std::vector<int>{20, 21}));
}

TEST_CASE("topology: this machine", "[topology]") {
  const CpuTopology t = DetectTopology();
  REQUIRE(t.n_cpus() >= 1);
  REQUIRE(t.n_big() >= 1);
  CHECK(t.n_big() <= t.n_cpus());
  const std::vector<int> allowed = AllowedCpus();
  for (int id : t.ids()) {
    if (!allowed.empty()) CHECK(std::count(allowed.begin(), allowed.end(), id) == 1);
  }
}

TEST_CASE("topology: cpu lists parse and format", "[topology][bad-input]") {
  std::vector<int> v;
  REQUIRE(ParseCpuList("0-3,6,8-9\n", &v));
  CHECK(v == (std::vector<int>{0, 1, 2, 3, 6, 8, 9}));
  CHECK(FormatCpuList(v) == "0-3,6,8-9");
  REQUIRE(ParseCpuList(" 5 ", &v));
  CHECK(v == std::vector<int>{5});
  REQUIRE(ParseCpuList("3,1-2,2", &v));
  CHECK(v == (std::vector<int>{1, 2, 3}));
  CHECK(FormatCpuList({}) == "");
  CHECK(FormatCpuList({0, 2, 4}) == "0,2,4");
  for (const char* bad : {"", " ", "a", "1-", "-1", "3-1", "1,,2", "1,", "0-70000", "1 2", "0x3"}) {
    INFO("'" << bad << "'");
    CHECK_FALSE(ParseCpuList(bad, &v));
  }
}

TEST_CASE("topology: the cpu name from cpuinfo", "[topology]") {
  FakeSysfs fs("cpuinfo");
  fs.Write("x86", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9654\n");
  CHECK(CpuModelName(fs.root() + "/x86") == "AMD EPYC 9654");
  fs.Write("arm64",
           "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd05\n\n"
           "processor\t: 4\nCPU implementer\t: 0x41\nCPU part\t: 0xd0b\n\n"
           "processor\t: 5\nCPU implementer\t: 0x41\nCPU part\t: 0xd0b\n");
  CHECK(CpuModelName(fs.root() + "/arm64") == "0x41/0xd05 0x41/0xd0b");
  CHECK(CpuModelName(fs.root() + "/missing") == "");
}
