// Which cpus this process may run on, and keeping compute threads on a subset
// of them. The only place that knows sched_getaffinity / sched_setaffinity.
#pragma once

#include <vector>

namespace ember {

// Ids of the cpus the calling thread may run on (its affinity mask), ascending.
// Empty where the OS does not say (non-Linux) or the call fails.
std::vector<int> AllowedCpus();

// Restricts the calling thread and the OpenMP workers it runs parallel regions
// with (the first n_threads of its pool) to `cpus`, all sharing one mask: the
// OS still places each thread, inside the set. Returns false where the OS does
// not allow it (non-Linux, a cpu id outside the mask's range, a refused call);
// nothing is changed then, or only part of the pool.
//
// Why one mask and not one cpu per thread: on a big.LITTLE board the point is
// to keep work off the little cores, which a mask does. Pinning each thread to
// its own core would also stop the OS from moving a thread away from a core
// that another process (a compiler, the UI) is busy on, and a matmul waits
// for its slowest thread, so one busy core would slow every step.
bool RestrictThreadPool(const std::vector<int>& cpus, int n_threads);

// Whether the user asked OpenMP to bind threads itself (OMP_PROC_BIND,
// OMP_PLACES or GOMP_CPU_AFFINITY set): then ember leaves affinity alone.
bool UserBindsThreads();

}  // namespace ember
