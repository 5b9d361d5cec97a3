#include "runtime/session/batcher.h"

#include <algorithm>

namespace ember {

Batcher::Batcher(const Model& model, const BatcherParams& params)
    : model_(model), params_(params), worker_([this] { Work(); }) {
  // A float library sums in its own order, so a row's bits would depend on
  // how many rows share the pass: batched passes use ember's own kernel.
  std::lock_guard<std::mutex> lock(mu_);
  scratch_.mm.float_library = false;
}

Batcher::~Batcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  worker_.join();
}

void Batcher::Run(const void* owner, const ForwardSeq& seq, int n_threads) {
  Request r{owner, seq, n_threads};
  std::unique_lock<std::mutex> lock(mu_);
  pending_.push_back(&r);
  work_cv_.notify_all();
  done_cv_.wait(lock, [&] { return r.done; });
}

void Batcher::Enter(const void* owner) {
  std::lock_guard<std::mutex> lock(mu_);
  active_.push_back(owner);
}

void Batcher::Leave(const void* owner) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = std::find(active_.begin(), active_.end(), owner);
    if (it != active_.end()) active_.erase(it);
    // Generations nest (a chat reply inside a chat call): a regular stays one
    // while it is still active.
    if (std::find(active_.begin(), active_.end(), owner) == active_.end()) {
      regulars_.erase(std::remove(regulars_.begin(), regulars_.end(), owner), regulars_.end());
    }
  }
  work_cv_.notify_all();  // the worker may be waiting for it
}

bool Batcher::OthersActive(const void* owner) const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::any_of(active_.begin(), active_.end(), [&](const void* o) { return o != owner; });
}

BatcherStats Batcher::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

bool Batcher::RegularsReady() const {
  for (const void* o : regulars_) {
    if (std::none_of(pending_.begin(), pending_.end(),
                     [&](const Request* r) { return r->owner == o; })) {
      return false;
    }
  }
  return true;
}

void Batcher::Work() {
  using Clock = std::chrono::steady_clock;
  std::unique_lock<std::mutex> lock(mu_);
  std::vector<Request*> batch;
  std::vector<ForwardSeq> seqs;
  for (;;) {
    work_cv_.wait(lock, [&] { return stop_ || !pending_.empty(); });
    if (pending_.empty()) return;  // stop_, and nothing left to run
    // Wait for the regulars' next steps, a little: their threads are
    // sampling and emitting the last pass's tokens.
    const Clock::duration wait = std::max<Clock::duration>(params_.min_wait, last_pass_ / 2);
    if (!work_cv_.wait_until(lock, Clock::now() + wait, [&] { return stop_ || RegularsReady(); })) {
      ++stats_.late;
    }
    // One request per owner per pass (a session's passes follow each other).
    batch.clear();
    for (auto it = pending_.begin(); it != pending_.end();) {
      const bool seen = std::any_of(batch.begin(), batch.end(),
                                    [&](const Request* r) { return r->owner == (*it)->owner; });
      if (seen) {
        ++it;
      } else {
        batch.push_back(*it);
        it = pending_.erase(it);
      }
    }
    regulars_.clear();
    for (const Request* r : batch) {
      if (std::find(active_.begin(), active_.end(), r->owner) != active_.end()) {
        regulars_.push_back(r->owner);
      }
    }
    seqs.clear();
    int n_threads = 1;
    int64_t rows = 0;
    for (const Request* r : batch) {
      seqs.push_back(r->seq);
      n_threads = std::max(n_threads, r->n_threads);
      rows += r->seq.n;
    }
    lock.unlock();
    const Clock::time_point t0 = Clock::now();
    ForwardMany(model_, scratch_, seqs.data(), static_cast<int64_t>(seqs.size()), n_threads);
    const Clock::duration took = Clock::now() - t0;
    lock.lock();
    last_pass_ = took;
    ++stats_.passes;
    stats_.rows += rows;
    stats_.sequences += static_cast<int64_t>(batch.size());
    stats_.max_sequences = std::max<int64_t>(stats_.max_sequences, batch.size());
    for (Request* r : batch) r->done = true;
    done_cv_.notify_all();
  }
}

}  // namespace ember
