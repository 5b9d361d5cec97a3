// Which rows of a sliding-window layer's cache hold which tokens, when that
// cache is a ring of about the window's size rather than the whole context
// (docs/KV.md "Sliding-window layers").
//
// A windowed layer's token i (position i) sees tokens max(0, i - window + 1)
// .. i. Its cache holds the n_keep pinned tokens (rows [0, n_keep), as in the
// full cache: after a context shift a window may reach back to them) and the
// most recent `capacity` later tokens, in a KvRing over the remaining rows.
// Tokens older than that are evicted as new ones arrive: with capacity >=
// window + the largest chunk - 1, no token a window still needs is ever
// evicted, also within a chunk whose tokens are stored before they attend.
//
// Context tokens are numbered as the session numbers them (0..n_used-1, the
// number is the position); `evicted` of the non-pinned ones are gone, so the
// held ones are [n_keep + evicted, n_used) and context token i is ring token
// i - evicted.
#pragma once

#include <cstdint>

#include "runtime/kv/kv_ring.h"

namespace ember {

class WindowRing {
 public:
  // Requires window >= 1, n_keep >= 0, capacity >= window.
  WindowRing(int64_t window, int64_t n_keep, int64_t capacity)
      : window_(window), n_keep_(n_keep), ring_(n_keep + capacity, n_keep) {}

  int64_t window() const { return window_; }
  int64_t n_rows() const { return ring_.n_ctx(); }  // pinned rows + capacity
  int64_t n_used() const { return ring_.n_used() + evicted_; }
  // The first non-pinned context token still held.
  int64_t first_held() const { return n_keep_ + evicted_; }

  // Before context tokens [n_used, n_used + n) are appended: evicts the oldest
  // held tokens so that they fit (n <= capacity - window + 1).
  void Reserve(int64_t n);
  void Append(int64_t n) { ring_.Append(n); }
  // The context dropped tokens [n_keep, n_keep + n) (a context shift): later
  // tokens are renumbered down by n and keep their rows.
  void Drop(int64_t n);
  // Forgets tokens from n on and returns how many tokens remain: n, or
  // n_keep's prefix when a token the window of token n would see has been
  // evicted (the tokens after it must then be computed again).
  int64_t Truncate(int64_t n);
  void Reset() {
    ring_.Reset();
    evicted_ = 0;
  }
  // State restored from a file: n_used tokens, the non-pinned ones held from
  // first_held on (first_held >= n_keep, n_used - first_held <= capacity).
  void Restore(int64_t n_used, int64_t first_held);

  // The row of context token i (pinned, held, or about to be appended).
  int64_t SlotOf(int64_t i) const { return i < n_keep_ ? i : ring_.SlotOf(i - evicted_); }
  // The rows token i sees, in context order (at most 3 ranges); every one of
  // them must be held. Returns the number of ranges.
  int RowsOf(int64_t i, RowRange out[3]) const;

 private:
  int64_t window_;
  int64_t n_keep_;
  KvRing ring_;
  int64_t evicted_ = 0;
};

}  // namespace ember
