// The bandwidth profile's cache: measured once, read back after; a missing,
// stale (another machine key, another core count) or corrupt file is measured
// again and rewritten; an unwritable directory still gives a profile. The
// measurement is a fake that counts its calls. No timing is asserted.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "platform/bandwidth_cache.h"
#include "platform/topology.h"

using namespace ember;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  TempDir() {
    static int counter = 0;
    path = (fs::temp_directory_path() /
            ("ember-bwcache-" + std::to_string(getpid()) + "-" + std::to_string(counter++)))
               .string();
    fs::remove_all(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path, ec);
  }
  std::string path;
};

std::string Read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct FakeMeasure {
  int calls = 0;
  std::vector<double> operator()(int n) {
    ++calls;
    std::vector<double> v;
    for (int i = 1; i <= n; ++i) v.push_back(10.0 * i);
    return v;
  }
};

const char* kKey = "Fake CPU | cpus 8 | big 4-7";

}  // namespace

TEST_CASE("bandwidth cache: measured once, then read back", "[bandwidth]") {
  TempDir dir;
  const std::string path = dir.path + "/sub/bandwidth-v4.txt";  // folders are created
  FakeMeasure m;
  auto measure = [&](int n) { return m(n); };
  CHECK(LoadOrMeasureBandwidth(path, kKey, 4, measure) == (std::vector<double>{10, 20, 30, 40}));
  CHECK(m.calls == 1);
  CHECK(Read(path) ==
        "ember read bandwidth v4\nkey Fake CPU | cpus 8 | big 4-7\n"
        "1 10.000\n2 20.000\n3 30.000\n4 40.000\n");
  CHECK(LoadOrMeasureBandwidth(path, kKey, 4, measure) == (std::vector<double>{10, 20, 30, 40}));
  CHECK(m.calls == 1);
  // No temporary files left behind.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path + "/sub")) files += e.is_regular_file();
  CHECK(files == 1);
}

TEST_CASE("bandwidth cache: stale or corrupt files are measured again", "[bandwidth][bad-input]") {
  TempDir dir;
  const std::string path = dir.path + "/bandwidth-v4.txt";
  FakeMeasure m;
  auto measure = [&](int n) { return m(n); };
  const std::string good = FormatBandwidthCache(kKey, {10, 20, 30, 40});
  const std::vector<std::string> bad = {
      "",
      "garbage",
      std::string("\0\1\2\3", 4),
      FormatBandwidthCache("Other CPU | cpus 8 | big 4-7", {10, 20, 30, 40}),  // another machine
      FormatBandwidthCache(kKey, {10, 20, 30}),                                // fewer big cores
      FormatBandwidthCache(kKey, {10, 20, 30, 40, 50}),                        // more
      "ember read bandwidth v0\nkey Fake CPU | cpus 8 | big 4-7\n1 1\n2 2\n3 3\n4 4\n",
      // The scalar probe's figures (too low for the wide-load probe's roof).
      "ember read bandwidth v1\nkey Fake CPU | cpus 8 | big 4-7\n1 10\n2 20\n3 30\n4 40\n",
      good.substr(0, good.size() - 7),                // truncated
      FormatBandwidthCache(kKey, {10, 20, -30, 40}),  // negative
      FormatBandwidthCache(kKey, {10, 20, 0, 40}),    // zero
      "ember read bandwidth v4\nkey Fake CPU | cpus 8 | big 4-7\n1 10\n3 20\n2 30\n4 40\n",
      "ember read bandwidth v4\nkey Fake CPU | cpus 8 | big 4-7\n1 10\n2 nan\n3 30\n4 40\n",
      "ember read bandwidth v4\nkey Fake CPU | cpus 8 | big 4-7\n1 10\n2 2e400\n3 30\n4 40\n",
      "ember read bandwidth v4\nkey Fake CPU | cpus 8 | big 4-7\n1 10\n2 20x\n3 30\n4 40\n",
      good + "5 50.000\n",
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    INFO("bad file #" << i);
    std::vector<double> parsed;
    CHECK_FALSE(ParseBandwidthCache(bad[i], kKey, 4, &parsed));
    std::ofstream(path, std::ios::binary) << bad[i];
    const int before = m.calls;
    CHECK(LoadOrMeasureBandwidth(path, kKey, 4, measure) == (std::vector<double>{10, 20, 30, 40}));
    CHECK(m.calls == before + 1);
    CHECK(Read(path) == good);  // rewritten whole
  }
  std::vector<double> parsed;
  CHECK(ParseBandwidthCache(good, kKey, 4, &parsed));
  CHECK(ParseBandwidthCache(good + "\n\n", kKey, 4, &parsed));
}

TEST_CASE("bandwidth cache: an unwritable place still gives a profile", "[bandwidth][bad-input]") {
  TempDir dir;
  FakeMeasure m;
  auto measure = [&](int n) { return m(n); };
  SECTION("the cache path is under a regular file") {
    fs::create_directories(dir.path);
    std::ofstream(dir.path + "/file") << "x";
    const std::string path = dir.path + "/file/bandwidth-v4.txt";
    CHECK(LoadOrMeasureBandwidth(path, kKey, 2, measure) == (std::vector<double>{10, 20}));
    CHECK(LoadOrMeasureBandwidth(path, kKey, 2, measure) == (std::vector<double>{10, 20}));
    CHECK(m.calls == 2);
  }
  SECTION("a read-only folder") {
    fs::create_directories(dir.path);
    fs::permissions(dir.path, fs::perms::owner_read | fs::perms::owner_exec);
    CHECK(LoadOrMeasureBandwidth(dir.path + "/bandwidth-v4.txt", kKey, 2, measure) ==
          (std::vector<double>{10, 20}));
    CHECK(m.calls == 1);
  }
  SECTION("no cache path at all") {
    CHECK(LoadOrMeasureBandwidth("", kKey, 3, measure).size() == 3);
    CHECK(m.calls == 1);
  }
  SECTION("a failed measurement is used but not kept") {
    const std::string path = dir.path + "/bandwidth-v4.txt";
    auto broken = [](int n) { return std::vector<double>(static_cast<size_t>(n), 0.0); };
    CHECK(LoadOrMeasureBandwidth(path, kKey, 2, broken) == (std::vector<double>{0, 0}));
    CHECK_FALSE(fs::exists(path));
  }
}

TEST_CASE("bandwidth cache: a measurement on a busy machine is not kept", "[bandwidth]") {
  TempDir dir;
  const std::string path = dir.path + "/bandwidth-v4.txt";
  FakeMeasure m;
  auto measure = [&](int n) { return m(n); };
  CHECK(LoadOrMeasureBandwidth(path, kKey, 2, measure, [] { return false; }) ==
        (std::vector<double>{10, 20}));
  CHECK_FALSE(fs::exists(path));
  CHECK(LoadOrMeasureBandwidth(path, kKey, 2, measure, [] { return true; }).size() == 2);
  CHECK(fs::exists(path));
  CHECK(m.calls == 2);

  fs::create_directories(dir.path);
  const std::string la = dir.path + "/loadavg";
  std::ofstream(la) << "0.42 0.30 0.20 3/123 4567\n";
  MachineLoad load = ReadMachineLoad(la);
  CHECK(load.load1 == 0.42);
  CHECK(load.runnable == 3);
  struct Case {
    const char* text;
    double load1;
    int runnable;
  };
  for (const Case& c : {Case{"busy\n", -1, -1}, Case{"", -1, -1}, Case{"-1 0 0 1/2 3\n", -1, 1},
                        Case{"0.1 0.1 0.1 x/2 3\n", 0.1, -1}, Case{"0.1\n", 0.1, -1}}) {
    INFO("'" << c.text << "'");
    std::ofstream(la) << c.text;
    load = ReadMachineLoad(la);
    CHECK(load.load1 == c.load1);
    CHECK(load.runnable == c.runnable);
  }
  CHECK(ReadMachineLoad(dir.path + "/missing").load1 == -1);

  auto quiet = [](double load1, int runnable, int n_cpus) {
    MachineLoad l;
    l.load1 = load1;
    l.runnable = runnable;
    return QuietEnoughToCache(l, n_cpus, 1);
  };
  CHECK(quiet(-1, -1, 2));  // unknown
  CHECK(quiet(0.3, 1, 2));  // only the measuring thread runs
  CHECK(quiet(1.0, 1, 2));  // the limit: 0.5 + 0.25 per cpu
  CHECK_FALSE(quiet(1.1, 1, 2));
  CHECK_FALSE(quiet(0.2, 2, 2));  // a build has just started: the load average lags
  CHECK(quiet(2.4, 3, 8));        // 8 cpus: 2 others running is fine
  CHECK_FALSE(quiet(2.4, 4, 8));
  CHECK_FALSE(quiet(6.0, 1, 8));
}

TEST_CASE("bandwidth cache: where the file goes and the machine key", "[bandwidth]") {
  const char* old_dir = std::getenv("EMBER_CACHE_DIR");
  const std::string saved = old_dir ? old_dir : "";
  REQUIRE(setenv("EMBER_CACHE_DIR", "/tmp/ember-x", 1) == 0);
  CHECK(BandwidthCachePath() == "/tmp/ember-x/bandwidth-v4.txt");
  REQUIRE(unsetenv("EMBER_CACHE_DIR") == 0);
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') {
    CHECK(BandwidthCachePath() == std::string(home) + "/.cache/ember/bandwidth-v4.txt");
  }
  if (!saved.empty()) REQUIRE(setenv("EMBER_CACHE_DIR", saved.c_str(), 1) == 0);

  CpuTopology t;
  for (int i = 0; i < 8; ++i) {
    CpuCore c;
    c.id = i;
    c.big = i >= 4;
    t.cpus.push_back(c);
    if (c.big) t.big.push_back(i);
  }
  CHECK(BandwidthKey("Fake CPU", t) == kKey);
  CHECK(BandwidthKey("Bad\nname\t", t) == "Bad name  | cpus 8 | big 4-7");
  CHECK(BandwidthKey("", t) == "unknown cpu | cpus 8 | big 4-7");
}
