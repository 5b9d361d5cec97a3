#include "runtime/kv/kv_ring.h"

#include <algorithm>

namespace ember {

int KvRing::RowsUpTo(int64_t i, RowRange out[3]) const {
  int n = 0;
  const int64_t pinned = std::min(i + 1, n_keep_);
  if (pinned > 0) out[n++] = {0, pinned};
  if (i < n_keep_) return n;
  const int64_t first = n_keep_ + head_;  // row of token n_keep
  const int64_t count = i - n_keep_ + 1;  // ring tokens n_keep..i
  const int64_t before_wrap = std::min(count, n_ctx_ - first);
  out[n++] = {first, before_wrap};
  if (count > before_wrap) out[n++] = {n_keep_, count - before_wrap};
  return n;
}

void KvRing::Truncate(int64_t n) {
  n_used_ = n;
  if (n_used_ <= n_keep_) head_ = 0;  // no ring token left: start the region afresh
}

void KvRing::Drop(int64_t n) {
  if (n <= 0) return;
  head_ = (head_ + n) % (n_ctx_ - n_keep_);
  n_used_ -= n;
  if (n_used_ <= n_keep_) head_ = 0;
}

}  // namespace ember
