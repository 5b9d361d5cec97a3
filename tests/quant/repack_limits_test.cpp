// Repacked sizes in 64-bit arithmetic, and Repack refusing a matrix whose
// packed size passes the address space before it allocates (the 32-bit
// targets: armhf runs this under qemu).
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "platform/mapped_file.h"
#include "quant/packed.h"
#include "support/skip.h"

using namespace ember;

TEST_CASE("repack limits: repacked sizes are computed in 64 bits", "[repack][limits]") {
  // Q4_K rows grow a little repacked (148 bytes per 256 columns, not 144) and
  // rows are padded to 16: a [1, 256] matrix is one tile of 16 rows.
  CHECK(RepackedBytes(GgmlType::kQ4_K, 1, 256) == 16 * 148);
  CHECK(RepackedBytes(GgmlType::kQ4_K, 32, 512) == 2 * 16 * 2 * 148);
  CHECK(RepackedBytes(GgmlType::kQ8_0, 16, 64) == 2 * (512 + 32));
  CHECK(RepackedBytes(GgmlType::kQ4_1, 16, 32) == 256 + 32 + 32);
  // Past 32 bits without wrapping: 2^20 rows x 2^16 columns of Q8_0.
  CHECK(RepackedBytes(GgmlType::kQ8_0, int64_t{1} << 20, int64_t{1} << 16) ==
        (uint64_t{1} << 16) * 2048 * (512 + 32));
  CHECK(RepackedBytes(GgmlType::kQ8_0, int64_t{1} << 40, int64_t{1} << 40) == UINT64_MAX);
  CHECK(RepackedBytes(GgmlType::kI8, 16, 64) == 0);
  // What Repack allocates is that size.
  std::vector<uint8_t> src(34 * 2 * 20, 0);
  PackedMatrix w;
  REQUIRE(Repack(GgmlType::kQ8_0, src.data(), 20, 64, &w).ok());
  CHECK(w.bytes() == RepackedBytes(GgmlType::kQ8_0, 20, 64));
}

TEST_CASE("repack limits: a matrix larger than the address space is refused before allocating",
          "[repack][limits]") {
  const int64_t rows = int64_t{1} << 20, cols = int64_t{1} << 16;  // 68 GiB repacked
  if (kAddressSpaceLimit >= RepackedBytes(GgmlType::kQ8_0, rows, cols)) {
    EMBER_SKIP("a 64-bit address space holds it: the check is for 32-bit targets");
  }
  const uint8_t never_read = 0;  // the size is checked before the rows are read
  PackedMatrix w;
  const Status s = Repack(GgmlType::kQ8_0, &never_read, rows, cols, &w);
  CHECK(s.code() == Code::kUnsupported);
  CHECK(s.message() ==
        "a [1048576, 65536] Q8_0 matrix repacks to 73014444032 bytes, more than "
        "this process can address");
  CHECK(w.data == nullptr);
}
