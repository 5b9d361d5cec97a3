// How many threads decode and prefill use, and on which cpus
// (docs/DESIGN.md §8). Decode reads every weight byte once per token, so
// it is done when memory bandwidth is: more threads than it takes to saturate
// it only add synchronisation (and heat, on a board). Prefill is arithmetic,
// so it wants every fast core. Little cores would make every step wait for
// them, so neither uses them.
//
// The policy (PlanThreads, ResolveThreads) is pure and tested with fake
// topologies and profiles; the Host* functions apply it to this machine.
#pragma once

#include <vector>

#include "platform/topology.h"

namespace ember {

// Decode uses the fewest big cores whose measured read bandwidth is at least
// this share of the best over 1..n_big threads.
constexpr double kDecodeBandwidthShare = 0.95;

struct ThreadPlan {
  int n_threads = 1;           // decode (one token per step)
  int n_threads_batch = 1;     // prefill (chunks of tokens): all big cores
  std::vector<int> cpus;       // where both run: the big cores, ascending
  bool restrict_cpus = false;  // cpus is a strict subset of the usable cpus (big.LITTLE)
  int n_cpus = 1;              // usable cpus (big and little)
  double decode_gbps = 0;      // measured read GB/s with n_threads threads (0: unknown)
  double peak_gbps = 0;        // the best measured over 1..n_big threads (0: unknown)
};

// read_gbps[i]: measured read GB/s with i + 1 threads (entries past n_big are
// ignored; zero, negative or non-finite ones count as not measured). With no
// measured entry, decode uses all big cores, like prefill.
ThreadPlan PlanThreads(const CpuTopology& topo, const std::vector<double>& read_gbps);

// Thread counts as asked for (0: auto) resolved against a plan.
struct ThreadChoice {
  int n_threads = 1;
  int n_threads_batch = 1;
  // Keep the threads on plan.cpus: the machine has little cores to avoid and
  // neither count needs more threads than there are big cores.
  bool restrict_cpus = false;
};

// n_threads 0: plan.n_threads. n_threads_batch 0: n_threads when that was
// given (as llama.cpp's -t sets both), else plan.n_threads_batch. Counts are
// used as given otherwise (the caller has range-checked them).
ThreadChoice ResolveThreads(const ThreadPlan& plan, int n_threads, int n_threads_batch);

// This process's topology (DetectTopology()), read once.
const CpuTopology& HostTopology();

// This machine's plan, computed once per process from HostTopology() and the
// bandwidth profile (platform/bandwidth_cache.h: read from the cache, or
// measured in well under a second and cached).
const ThreadPlan& HostThreadPlan();

// Resolves the counts for this machine (the bandwidth profile is only needed,
// and only measured, when n_threads is 0) and, on a big.LITTLE machine, keeps
// the calling thread and its OpenMP workers on the big cores, or lets them on
// every usable cpu again when the counts need more than the big cores. Left
// alone when the user binds OpenMP threads (OMP_PROC_BIND, OMP_PLACES,
// GOMP_CPU_AFFINITY) and where the OS has no affinity call.
ThreadChoice ChooseHostThreads(int n_threads, int n_threads_batch);

}  // namespace ember
