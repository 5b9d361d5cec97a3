#include "platform/affinity.h"

#include <atomic>
#include <cstdlib>

#if defined(__linux__)
#include <sched.h>
#endif

namespace ember {
namespace {

#if defined(__linux__)
// cpu_set_t holds 1024 cpus; larger machines need a bigger, allocated set.
constexpr int kMaxCpus = 1 << 14;

struct CpuSet {
  explicit CpuSet(int n_cpus) : n(n_cpus), set(CPU_ALLOC(n_cpus)), size(CPU_ALLOC_SIZE(n_cpus)) {
    if (set != nullptr) CPU_ZERO_S(size, set);
  }
  ~CpuSet() {
    if (set != nullptr) CPU_FREE(set);
  }
  CpuSet(const CpuSet&) = delete;
  CpuSet& operator=(const CpuSet&) = delete;
  int n;
  cpu_set_t* set;
  size_t size;
};
#endif

}  // namespace

std::vector<int> AllowedCpus() {
  std::vector<int> out;
#if defined(__linux__)
  // The kernel refuses (EINVAL) a set smaller than its own cpu count: grow.
  for (int n = 1024; n <= kMaxCpus; n *= 2) {
    CpuSet s(n);
    if (s.set == nullptr) return out;
    if (sched_getaffinity(0, s.size, s.set) != 0) continue;
    for (int c = 0; c < n; ++c) {
      if (CPU_ISSET_S(c, s.size, s.set)) out.push_back(c);
    }
    return out;
  }
#endif
  return out;
}

bool RestrictThreadPool(const std::vector<int>& cpus, int n_threads) {
#if defined(__linux__)
  if (cpus.empty() || n_threads < 1) return false;
  int max_id = 0;
  for (int c : cpus) {
    if (c < 0 || c >= kMaxCpus) return false;
    max_id = c > max_id ? c : max_id;
  }
  CpuSet s(max_id + 1);
  if (s.set == nullptr) return false;
  for (int c : cpus) CPU_SET_S(c, s.size, s.set);
  // sched_setaffinity(0, ...) sets the calling thread's mask only, so every
  // member of a team of n_threads sets its own. libgomp reuses the same pool
  // threads, in the same order, for later regions of up to n_threads; threads
  // it creates later inherit the mask of the (restricted) thread creating them.
  std::atomic<bool> ok{true};
#pragma omp parallel num_threads(n_threads)
  {
    if (sched_setaffinity(0, s.size, s.set) != 0) ok = false;
  }
  return ok;
#else
  (void)cpus;
  (void)n_threads;
  return false;
#endif
}

bool UserBindsThreads() {
  for (const char* name : {"OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') return true;
  }
  return false;
}

}  // namespace ember
