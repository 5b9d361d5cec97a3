// The read-bandwidth profile of this machine (GB/s for 1..n threads), measured
// once and kept in ${EMBER_CACHE_DIR:-$HOME/.cache/ember}/bandwidth-v4.txt so
// that later processes start without the ~0.5 s measurement.
//
// File format (text, one entry; a new format, or a probe that measures
// differently, gets a new file name: v3 reads huge pages where v2 read 4 KiB
// ones, platform/streamed_memory.h; v4 also reads each thread's slice as
// four streams, platform/bandwidth.cpp):
//   ember read bandwidth v4
//   key <machine key>
//   1 13.204
//   2 22.411
//   ...                   (one line per thread count, 1..n, GB/s)
// A file that is missing, for another key or thread count, or malformed in any
// way is measured again and rewritten whole (temporary file + rename, so a
// reader never sees half a file). When the directory cannot be written the
// profile is still measured and used; nothing is reported. A profile measured
// while the machine is busy (other processes compete for the cores and the
// memory bus, so the rates come out low) is used but not kept.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "platform/topology.h"

namespace ember {

// Identifies what a profile was measured on: the CPU name, the number of
// online cpus this process may use, and the big-core set, e.g.
// "AMD EPYC | cpus 2 | big 0-1". Control characters become spaces.
std::string BandwidthKey(const std::string& cpu_model, const CpuTopology& topo);

// ${EMBER_CACHE_DIR}/bandwidth-v4.txt, else $HOME/.cache/ember/bandwidth-v4.txt;
// "" when neither variable is set.
std::string BandwidthCachePath();

// The file's text for a profile (gbps[i]: i + 1 threads).
std::string FormatBandwidthCache(const std::string& key, const std::vector<double>& gbps);

// Parses a cache file's text; false unless it is well formed, for `key`, and
// has exactly n_threads finite, positive rates.
bool ParseBandwidthCache(const std::string& text, const std::string& key, int n_threads,
                         std::vector<double>* gbps);

// Writes `text` to path through a temporary file in the same directory and a
// rename, creating the directory if needed. False on any failure (nothing
// half-written is left behind).
bool WriteFileAtomically(const std::string& path, const std::string& text);

// The profile for 1..n_threads from the cache at `path`, or measure(n_threads)
// written there, unless `quiet` (when given) says the machine was too busy for
// the numbers to be kept. path "" skips the cache. measure's result is used as
// given.
std::vector<double> LoadOrMeasureBandwidth(const std::string& path, const std::string& key,
                                           int n_threads,
                                           const std::function<std::vector<double>(int)>& measure,
                                           const std::function<bool()>& quiet = {});

// The 1-minute load average from a /proc/loadavg-style file; -1 when unknown.
// How busy the machine is, from a /proc/loadavg-style file
// ("0.42 0.30 0.20 2/345 6789"); -1 for what is unknown.
struct MachineLoad {
  double load1 = -1;  // 1-minute load average
  int runnable = -1;  // tasks runnable right now, the reader included
};
MachineLoad ReadMachineLoad(const std::string& loadavg_path = "/proc/loadavg");

// Whether a measurement taken at this load is worth keeping, given n_cpus
// online cpus and that `own` of the runnable tasks are the measuring process's:
// a 1-minute load of at most 0.5 + 0.25 per cpu (1.0 on 2 cpus, 2.5 on 8), and
// at most a quarter of the cpus (none on 2 or 3) running anything else right
// now. The load average alone lags by a minute: a build that has just started
// would halve the numbers and still pass. Unknown values do not count against.
bool QuietEnoughToCache(const MachineLoad& load, int n_cpus, int own);

}  // namespace ember
