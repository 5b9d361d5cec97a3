// The thread policy over fake topologies and fake bandwidth profiles: decode on
// the fewest big cores reaching 95% of the peak, prefill on all big cores,
// little cores never; explicit counts override. Then this machine's plan.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <unistd.h>

#include "platform/bandwidth_cache.h"
#include "platform/scheduler.h"
#include "platform/topology.h"

using namespace ember;

namespace {

// n_little little cores (ids 0..) then n_big big ones, as DetectTopology gives them.
CpuTopology Fake(int n_little, int n_big) {
  CpuTopology t;
  for (int i = 0; i < n_little + n_big; ++i) {
    CpuCore c;
    c.id = i;
    c.big = i >= n_little;
    c.capacity = c.big ? 1024 : 446;
    t.cpus.push_back(c);
    if (c.big) t.big.push_back(i);
  }
  t.big_by = n_little > 0 ? BigCoresBy::kCapacity : BigCoresBy::kNone;
  return t;
}

}  // namespace

TEST_CASE("scheduler: big.LITTLE, bandwidth saturating at 2 of 4 big cores", "[scheduler]") {
  const CpuTopology topo = Fake(4, 4);
  const ThreadPlan p = PlanThreads(topo, {10.0, 19.0, 19.5, 19.6});
  CHECK(p.n_threads == 2);  // 19.0 >= 0.95 * 19.6
  CHECK(p.n_threads_batch == 4);
  CHECK(p.cpus == (std::vector<int>{4, 5, 6, 7}));
  CHECK(p.restrict_cpus);
  CHECK(p.n_cpus == 8);
  CHECK(p.decode_gbps == 19.0);
  CHECK(p.peak_gbps == 19.6);
}

TEST_CASE("scheduler: homogeneous machines", "[scheduler]") {
  SECTION("bandwidth grows with every core: decode uses them all") {
    const ThreadPlan p = PlanThreads(Fake(0, 4), {10, 20, 30, 40});
    CHECK(p.n_threads == 4);
    CHECK(p.n_threads_batch == 4);
    CHECK_FALSE(p.restrict_cpus);
    CHECK(p.cpus == (std::vector<int>{0, 1, 2, 3}));
  }
  SECTION("one thread saturates memory (a Pi-class board)") {
    const ThreadPlan p = PlanThreads(Fake(0, 4), {4.0, 3.9, 3.8, 3.7});
    CHECK(p.n_threads == 1);
    CHECK(p.n_threads_batch == 4);
  }
  SECTION("2 cores, as the machine docs/PERFORMANCE.md was measured on") {
    const ThreadPlan p = PlanThreads(Fake(0, 2), {13.2, 22.4});
    CHECK(p.n_threads == 2);
    CHECK(p.n_threads_batch == 2);
  }
  SECTION("one core") {
    const ThreadPlan p = PlanThreads(Fake(0, 1), {9.0});
    CHECK(p.n_threads == 1);
    CHECK(p.n_threads_batch == 1);
  }
  SECTION("exactly 95% of the peak is enough") {
    CHECK(PlanThreads(Fake(0, 2), {95.0, 100.0}).n_threads == 1);
    CHECK(PlanThreads(Fake(0, 2), {94.9, 100.0}).n_threads == 2);
  }
}

TEST_CASE("scheduler: odd profiles", "[scheduler][bad-input]") {
  SECTION("no profile: decode on all big cores") {
    const ThreadPlan p = PlanThreads(Fake(2, 6), {});
    CHECK(p.n_threads == 6);
    CHECK(p.n_threads_batch == 6);
    CHECK(p.peak_gbps == 0);
    CHECK(p.decode_gbps == 0);
  }
  SECTION("entries beyond the big cores are ignored") {
    CHECK(PlanThreads(Fake(2, 2), {10, 20, 50, 60}).n_threads == 2);
  }
  SECTION("a shorter profile: only measured counts are candidates") {
    const ThreadPlan p = PlanThreads(Fake(0, 8), {10, 30});
    CHECK(p.n_threads == 2);
    CHECK(p.n_threads_batch == 8);
  }
  SECTION("zero, negative, NaN and infinite entries count as not measured") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const ThreadPlan p = PlanThreads(Fake(0, 4), {nan, -1.0, 20.0, inf});
    CHECK(p.n_threads == 3);
    CHECK(p.peak_gbps == 20.0);
    CHECK(PlanThreads(Fake(0, 3), {0.0, nan, -inf}).n_threads == 3);
  }
  SECTION("an empty topology still gives one thread") {
    const ThreadPlan p = PlanThreads(CpuTopology{}, {5.0});
    CHECK(p.n_threads == 1);
    CHECK(p.n_threads_batch == 1);
    CHECK(p.cpus == std::vector<int>{0});
    CHECK_FALSE(p.restrict_cpus);
  }
}

TEST_CASE("scheduler: explicit counts override auto", "[scheduler]") {
  const ThreadPlan plan = PlanThreads(Fake(4, 4), {10.0, 19.0, 19.5, 19.6});
  SECTION("auto for both") {
    const ThreadChoice c = ResolveThreads(plan, 0, 0);
    CHECK(c.n_threads == 2);
    CHECK(c.n_threads_batch == 4);
    CHECK(c.restrict_cpus);
  }
  SECTION("-t N sets both, as llama.cpp's -t") {
    const ThreadChoice c = ResolveThreads(plan, 3, 0);
    CHECK(c.n_threads == 3);
    CHECK(c.n_threads_batch == 3);
    CHECK(c.restrict_cpus);
  }
  SECTION("--threads-batch alone keeps decode auto") {
    const ThreadChoice c = ResolveThreads(plan, 0, 1);
    CHECK(c.n_threads == 2);
    CHECK(c.n_threads_batch == 1);
  }
  SECTION("more threads than big cores: the little cores are needed too") {
    CHECK_FALSE(ResolveThreads(plan, 8, 0).restrict_cpus);
    CHECK_FALSE(ResolveThreads(plan, 0, 5).restrict_cpus);
    CHECK(ResolveThreads(plan, 4, 4).restrict_cpus);
  }
  SECTION("a homogeneous machine never restricts") {
    const ThreadPlan h = PlanThreads(Fake(0, 4), {10, 20, 30, 40});
    CHECK_FALSE(ResolveThreads(h, 0, 0).restrict_cpus);
    CHECK_FALSE(ResolveThreads(h, 2, 0).restrict_cpus);
  }
}

TEST_CASE("scheduler: this machine's plan comes from its cached profile", "[scheduler]") {
  // A cached profile for this machine in which one thread already reaches the
  // peak: the plan must follow it (and nothing is measured, which keeps this
  // test quick under qemu). Measuring for real is tested through the C API.
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("ember-sched-" + std::to_string(getpid())))
          .string();
  std::filesystem::remove_all(dir);
  REQUIRE(setenv("EMBER_CACHE_DIR", dir.c_str(), 1) == 0);
  const CpuTopology& topo = HostTopology();
  const std::vector<double> flat(static_cast<size_t>(topo.n_big()), 12.5);
  REQUIRE(WriteFileAtomically(BandwidthCachePath(),
                              FormatBandwidthCache(BandwidthKey(CpuModelName(), topo), flat)));
  const ThreadPlan& p = HostThreadPlan();
  CHECK(p.n_threads == 1);
  CHECK(p.n_threads_batch == topo.n_big());
  CHECK(p.peak_gbps == 12.5);
  CHECK(p.decode_gbps == 12.5);
  CHECK(p.restrict_cpus == topo.heterogeneous());
  // Auto resolves to the plan; explicit counts are kept.
  const ThreadChoice a = ChooseHostThreads(0, 0);
  CHECK(a.n_threads == 1);
  CHECK(a.n_threads_batch == topo.n_big());
  const ThreadChoice e = ChooseHostThreads(3, 0);
  CHECK(e.n_threads == 3);
  CHECK(e.n_threads_batch == 3);
  std::filesystem::remove_all(dir);
}
