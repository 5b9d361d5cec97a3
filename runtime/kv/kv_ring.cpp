#include "runtime/kv/kv_ring.h"

#include <algorithm>

namespace ember {

int KvRing::RowsBetween(int64_t first, int64_t last, RowRange out[3]) const {
  int n = 0;
  if (first < n_keep_) {
    out[n++] = {first, std::min(last + 1, n_keep_) - first};
    if (last < n_keep_) return n;
    first = n_keep_;
  }
  const int64_t begin = SlotOf(first);
  const int64_t count = last - first + 1;
  const int64_t before_wrap = std::min(count, n_ctx_ - begin);
  out[n++] = {begin, before_wrap};
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
