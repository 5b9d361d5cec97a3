// Which cache row holds which token (docs/DESIGN.md §6).
//
// The cache has n_ctx rows. The first n_keep tokens (a system prompt, the
// attention sinks) are pinned in rows [0, n_keep); every later token lives in
// the ring region [n_keep, n_ctx), starting at its head row. When the context
// is full, the oldest tokens of the ring region are dropped by advancing the
// head: no row moves. Tokens are numbered 0..n_used-1 in context order and a
// token's number is also its position (the session re-rotates the surviving
// keys when it drops tokens, so positions stay below n_ctx).
#pragma once

#include <cstdint>

namespace ember {

// n consecutive cache rows from row `begin`.
struct RowRange {
  int64_t begin;
  int64_t n;
};

class KvRing {
 public:
  // Requires 0 <= n_keep < n_ctx (checked by the session).
  KvRing(int64_t n_ctx, int64_t n_keep) : n_ctx_(n_ctx), n_keep_(n_keep) {}

  int64_t n_ctx() const { return n_ctx_; }
  int64_t n_keep() const { return n_keep_; }
  int64_t n_used() const { return n_used_; }
  int64_t n_free() const { return n_ctx_ - n_used_; }
  // True when token i is in row i for every i (no drop since the last reset).
  bool linear() const { return head_ == 0; }

  // The row of token i (0 <= i < n_ctx).
  int64_t SlotOf(int64_t i) const {
    if (i < n_keep_) return i;
    return n_keep_ + (head_ + i - n_keep_) % (n_ctx_ - n_keep_);
  }

  // The rows token i attends to — tokens 0..i — as at most 3 ranges in
  // context order (pinned rows, then the ring region, which may wrap).
  // Returns the number of ranges.
  int RowsUpTo(int64_t i, RowRange out[3]) const { return RowsBetween(0, i, out); }
  // The rows of tokens first..last (first <= last < n_ctx) in context order,
  // as at most 3 ranges; returns the number of ranges.
  int RowsBetween(int64_t first, int64_t last, RowRange out[3]) const;

  // Tokens [n_used, n_used + n) take the next rows (n <= n_free()).
  void Append(int64_t n) { n_used_ += n; }
  // Forgets tokens from n on (n <= n_used).
  void Truncate(int64_t n);
  // Forgets tokens [n_keep, n_keep + n) (n <= n_used - n_keep): later tokens
  // are renumbered down by n and keep their rows.
  void Drop(int64_t n);
  // Back to the linear layout with no tokens.
  void Reset() {
    n_used_ = 0;
    head_ = 0;
  }
  // Declares the linear layout (after the caller moved the rows there).
  void SetLinear() { head_ = 0; }

 private:
  int64_t n_ctx_;
  int64_t n_keep_;
  int64_t n_used_ = 0;
  int64_t head_ = 0;  // offset in the ring region of token n_keep's row
};

}  // namespace ember
