// ember_batch_step: the time of one forward pass over M tokens (M = 1, 2, 4,
// 8, 16), the cost of verifying M - 1 drafts (speculative decoding) or of a
// step of M parallel sequences, against one decode step (M = 1). Decode
// reads every weight once per pass, so while M is small a pass should cost
// little more than one token; this measures how little.
//
//   ember_batch_step -m MODEL [-t THREADS] [--depth D] [--m 1,2,4,8,16] [--reps R]
//
// For each M: the context is D tokens deep (computed once); each repetition
// decodes M tokens after it with all M rows' logits (as a verify pass does),
// then rolls them back. The M values alternate within each repetition; the
// median per M is printed, with the ratio to M = 1 and the spread
// (min..max) of the repetitions.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench/int_list.h"
#include "runtime/model/model.h"
#include "runtime/session/session.h"

using namespace ember;

int main(int argc, char** argv) {
  std::string path;
  int threads = 1, depth = 128, reps = 15;
  std::vector<int> ms = {1, 2, 4, 8, 16};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "-m")
      path = argv[i + 1];
    else if (a == "-t")
      threads = std::atoi(argv[i + 1]);
    else if (a == "--depth")
      depth = std::atoi(argv[i + 1]);
    else if (a == "--reps")
      reps = std::atoi(argv[i + 1]);
    else if (a == "--m")
      ms = ParseIntList(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (path.empty()) {
    std::fprintf(
        stderr,
        "usage: ember_batch_step -m MODEL [-t T] [--depth D] [--m 1,2,4,8,16] [--reps R]\n");
    return 2;
  }
  std::unique_ptr<Model> model;
  Status s = Model::Load(path, nullptr, &model);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  SessionParams sp;
  sp.n_ctx = depth + 64;
  sp.n_threads = threads;
  sp.n_threads_batch = threads;
  std::unique_ptr<Session> session;
  s = Session::Create(*model, sp, &session);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  std::vector<int32_t> ctx(static_cast<size_t>(depth));
  for (int i = 0; i < depth; ++i) ctx[static_cast<size_t>(i)] = 100 + (i * 37) % 5000;
  s = session->Decode(ctx);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  std::vector<std::vector<double>> times(ms.size());
  std::vector<float> rows;
  for (int r = 0; r < reps + 1; ++r) {  // the first repetition warms up
    for (size_t k = 0; k < ms.size(); ++k) {
      std::vector<int32_t> batch(static_cast<size_t>(ms[k]));
      for (int j = 0; j < ms[k]; ++j) batch[static_cast<size_t>(j)] = 200 + (r * 7 + j * 13) % 4000;
      const auto t0 = std::chrono::steady_clock::now();
      s = session->Decode(batch, &rows);
      const auto t1 = std::chrono::steady_clock::now();
      if (!s.ok()) {
        std::fprintf(stderr, "%s\n", s.message().c_str());
        return 1;
      }
      session->Truncate(depth);
      if (r > 0) times[k].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
  }
  std::printf("model %s, %d threads, depth %d, %d reps\n", path.c_str(), threads, depth, reps);
  std::printf(
      "| M | ms per pass (median) | min..max | x M=1 | ms per token "
      "|\n|---:|---:|---|---:|---:|\n");
  double base = 0;
  for (size_t k = 0; k < ms.size(); ++k) {
    std::vector<double> t = times[k];
    std::sort(t.begin(), t.end());
    const double med = t[t.size() / 2];
    if (ms[k] == 1 || base == 0) base = med;
    std::printf("| %d | %.2f | %.2f..%.2f | %.2f | %.2f |\n", ms[k], med, t.front(), t.back(),
                med / base, med / ms[k]);
  }
  return 0;
}
