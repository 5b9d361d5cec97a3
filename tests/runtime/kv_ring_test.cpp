// KvRing: which row holds which token, through appends, drops and wraps.
#include "runtime/kv/kv_ring.h"

#include <catch2/catch.hpp>
#include <set>
#include <vector>

using namespace ember;

namespace {

// The rows RowsUpTo names, expanded in order.
std::vector<int64_t> Expand(const KvRing& ring, int64_t i) {
  RowRange r[3];
  const int n = ring.RowsUpTo(i, r);
  std::vector<int64_t> rows;
  for (int k = 0; k < n; ++k) {
    for (int64_t j = 0; j < r[k].n; ++j) rows.push_back(r[k].begin + j);
  }
  return rows;
}

// Every live token has its own row, and token i attends exactly the rows of
// tokens 0..i in context order.
void CheckConsistent(const KvRing& ring) {
  std::set<int64_t> seen;
  for (int64_t i = 0; i < ring.n_used(); ++i) {
    const int64_t slot = ring.SlotOf(i);
    REQUIRE(slot >= 0);
    REQUIRE(slot < ring.n_ctx());
    REQUIRE(seen.insert(slot).second);
    if (i < ring.n_keep()) REQUIRE(slot == i);
    std::vector<int64_t> want;
    for (int64_t j = 0; j <= i; ++j) want.push_back(ring.SlotOf(j));
    REQUIRE(Expand(ring, i) == want);
  }
}

}  // namespace

TEST_CASE("kv ring: linear until the first drop", "[kv]") {
  KvRing ring(16, 3);
  ring.Append(10);
  CHECK(ring.linear());
  for (int64_t i = 0; i < 10; ++i) CHECK(ring.SlotOf(i) == i);
  RowRange r[3];
  REQUIRE(ring.RowsUpTo(9, r) == 2);  // pinned rows, then the ring region
  CHECK(r[0].begin == 0);
  CHECK(r[0].n == 3);
  CHECK(r[1].begin == 3);
  CHECK(r[1].n == 7);
  REQUIRE(ring.RowsUpTo(1, r) == 1);
  CHECK(r[0].n == 2);
  CheckConsistent(ring);
}

TEST_CASE("kv ring: drops advance the head and wrap without moving rows", "[kv]") {
  for (int64_t keep : {0, 1, 4}) {
    KvRing ring(12, keep);
    ring.Append(12);
    std::vector<int64_t> slots;
    for (int64_t i = 0; i < 12; ++i) slots.push_back(ring.SlotOf(i));
    ring.Drop(5);  // tokens keep..keep+4 go; later ones are renumbered, same rows
    CHECK_FALSE(ring.linear());
    CHECK(ring.n_used() == 7);
    for (int64_t i = keep; i < 7; ++i) CHECK(ring.SlotOf(i) == slots[static_cast<size_t>(i + 5)]);
    CheckConsistent(ring);
    ring.Append(5);  // the freed rows are reused: the ring wraps
    CHECK(ring.n_free() == 0);
    CheckConsistent(ring);
    for (int round = 0; round < 20; ++round) {  // many shifts: every head offset
      ring.Drop(1 + round % 3);
      ring.Append(1 + round % 3);
      CheckConsistent(ring);
    }
  }
}

TEST_CASE("kv ring: truncation below the ring region resets the head", "[kv]") {
  KvRing ring(10, 2);
  ring.Append(10);
  ring.Drop(4);
  CHECK_FALSE(ring.linear());
  ring.Truncate(5);
  CHECK(ring.n_used() == 5);
  CheckConsistent(ring);
  ring.Truncate(2);
  CHECK(ring.linear());
  ring.Append(8);
  CheckConsistent(ring);
}
