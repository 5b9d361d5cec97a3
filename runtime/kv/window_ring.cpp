#include "runtime/kv/window_ring.h"

#include <algorithm>
#include <cassert>

namespace ember {

void WindowRing::Reserve(int64_t n) {
  const int64_t need = n - ring_.n_free();
  if (need <= 0) return;
  ring_.Drop(need);
  evicted_ += need;
  // The next token's window starts at n_used - window + 1: still held.
  assert(first_held() <= std::max(n_keep_, n_used() - window_ + 1));
}

void WindowRing::Drop(int64_t n) {
  if (n <= 0) return;
  if (evicted_ >= n) {
    evicted_ -= n;  // the dropped tokens had been evicted already
  } else {
    ring_.Drop(n - evicted_);
    evicted_ = 0;
  }
}

int64_t WindowRing::Truncate(int64_t n) {
  if (n > n_keep_ && evicted_ > 0 && first_held() > std::max(n_keep_, n - window_ + 1)) {
    n = n_keep_;  // token n's window lost tokens: start again after the pinned ones
  }
  if (n <= n_keep_) {
    ring_.Truncate(n);
    evicted_ = 0;
  } else {
    ring_.Truncate(n - evicted_);
  }
  return n;
}

void WindowRing::Restore(int64_t n_used, int64_t first_held) {
  Reset();
  evicted_ = n_used > n_keep_ ? first_held - n_keep_ : 0;
  ring_.Append(n_used - evicted_);
}

int WindowRing::RowsOf(int64_t i, RowRange out[3]) const {
  const int64_t first = std::max<int64_t>(0, i - window_ + 1);
  int n = 0;
  if (first < n_keep_) {
    out[n++] = {first, std::min(i + 1, n_keep_) - first};
    if (i < n_keep_) return n;
  }
  const int64_t lo = std::max(first, n_keep_);
  assert(lo >= first_held());
  RowRange ring[3];
  const int m = ring_.RowsBetween(lo - evicted_, i - evicted_, ring);
  for (int r = 0; r < m; ++r) out[n++] = ring[r];
  return n;
}

}  // namespace ember
