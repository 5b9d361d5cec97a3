#include "platform/scheduler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "platform/affinity.h"
#include "platform/bandwidth.h"
#include "platform/bandwidth_cache.h"

namespace ember {
namespace {

// Passes per thread count when measuring the profile (the best one counts).
constexpr int kProfileReps = 5;

std::vector<double> MeasureOnBigCores(const CpuTopology& topo, int n_threads) {
  std::vector<double> gbps;
  // A thread of its own has an OpenMP pool of its own: it can be kept on the
  // big cores (so the little ones do not drag the numbers down) without
  // changing the affinity of the caller's threads.
  std::thread worker([&] {
    if (topo.heterogeneous() && !UserBindsThreads()) RestrictThreadPool(topo.big, n_threads);
    gbps = MeasureReadBandwidthProfile(n_threads, ProfileBufferBytes(), kProfileReps);
  });
  worker.join();
  return gbps;
}

// The machine's load, with the fewest runnable tasks seen in 5 looks 10 ms
// apart: a competing build is runnable in all of them, while a thread of ours
// still spinning after a parallel region is not.
MachineLoad SampleLoad() {
  MachineLoad load = ReadMachineLoad();
  for (int i = 0; i < 4 && load.runnable > 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const MachineLoad l = ReadMachineLoad();
    if (l.runnable >= 0) load.runnable = std::min(load.runnable, l.runnable);
  }
  return load;
}

}  // namespace

ThreadPlan PlanThreads(const CpuTopology& topo, const std::vector<double>& read_gbps) {
  ThreadPlan plan;
  plan.cpus = topo.big.empty() ? topo.ids() : topo.big;
  if (plan.cpus.empty()) plan.cpus = {0};
  const int n_big = static_cast<int>(plan.cpus.size());
  plan.n_cpus = std::max(topo.n_cpus(), n_big);
  plan.restrict_cpus = !topo.big.empty() && topo.heterogeneous();
  plan.n_threads_batch = n_big;

  const int n_measured = std::min(n_big, static_cast<int>(read_gbps.size()));
  auto valid = [&](int i) { return std::isfinite(read_gbps[i]) && read_gbps[i] > 0; };
  double peak = 0;
  for (int i = 0; i < n_measured; ++i) {
    if (valid(i)) peak = std::max(peak, read_gbps[i]);
  }
  plan.n_threads = n_big;
  if (peak > 0) {
    plan.peak_gbps = peak;
    for (int i = 0; i < n_measured; ++i) {
      if (valid(i) && read_gbps[i] >= kDecodeBandwidthShare * peak) {
        plan.n_threads = i + 1;
        plan.decode_gbps = read_gbps[i];
        break;
      }
    }
  }
  return plan;
}

ThreadChoice ResolveThreads(const ThreadPlan& plan, int n_threads, int n_threads_batch) {
  ThreadChoice c;
  c.n_threads = n_threads > 0 ? n_threads : plan.n_threads;
  c.n_threads_batch = n_threads_batch > 0 ? n_threads_batch
                      : n_threads > 0     ? n_threads
                                          : plan.n_threads_batch;
  c.restrict_cpus = plan.restrict_cpus &&
                    std::max(c.n_threads, c.n_threads_batch) <= static_cast<int>(plan.cpus.size());
  return c;
}

const CpuTopology& HostTopology() {
  static const CpuTopology topo = DetectTopology();
  return topo;
}

const ThreadPlan& HostThreadPlan() {
  static const ThreadPlan plan = [] {
    bool quiet_before = false;
    const CpuTopology& topo = HostTopology();
    const std::string key = BandwidthKey(CpuModelName(), topo);
    // Load is the whole machine's, so it is compared with every online cpu.
    const int n_online = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    const std::vector<double> gbps = LoadOrMeasureBandwidth(
        BandwidthCachePath(), key, topo.n_big(),
        [&](int n) {
          quiet_before = QuietEnoughToCache(SampleLoad(), n_online, 1);
          return MeasureOnBigCores(topo, n);
        },
        [&] { return quiet_before && QuietEnoughToCache(SampleLoad(), n_online, 1); });
    return PlanThreads(topo, gbps);
  }();
  return plan;
}

ThreadChoice ChooseHostThreads(int n_threads, int n_threads_batch) {
  const CpuTopology& topo = HostTopology();
  // Explicit counts need no bandwidth profile: the plan's cpu set is enough.
  const ThreadPlan plan = n_threads == 0 ? HostThreadPlan() : PlanThreads(topo, {});
  const ThreadChoice c = ResolveThreads(plan, n_threads, n_threads_batch);
  if (!topo.heterogeneous() || UserBindsThreads()) return c;
  // What this thread's pool was last restricted to (OpenMP pools are per
  // calling thread): 1 big cores, 0 every usable cpu, -1 never touched; and
  // for how many threads.
  thread_local int restricted = -1;
  thread_local int restricted_threads = 0;
  const int want = c.restrict_cpus ? 1 : 0;
  const int team = std::max(c.n_threads, c.n_threads_batch);
  if (want == 0 && restricted != 1) return c;  // never narrowed: nothing to undo
  if (want == restricted && team <= restricted_threads) return c;
  if (RestrictThreadPool(want == 1 ? plan.cpus : topo.ids(), team)) {
    restricted = want;
    restricted_threads = team;
  }
  return c;
}

}  // namespace ember
