// AllocStreamed: the memory of the packed weights and the bandwidth probe.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <new>

#include "platform/streamed_memory.h"

using namespace ember;

TEST_CASE("streamed memory: 2 MiB aligned, every byte writable, bad sizes refused", "[platform]") {
  for (size_t bytes : {size_t{1}, size_t{4096}, (size_t{2} << 20) + 1, size_t{5} << 20}) {
    INFO(bytes);
    StreamedBuffer b = AllocStreamed(bytes);
    REQUIRE(b != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(b.get()) % (size_t{2} << 20) == 0);
    std::memset(b.get(), 0x5A, bytes);
    CHECK(b[bytes - 1] == 0x5A);
  }
  CHECK_THROWS_AS(AllocStreamed(0), std::bad_alloc);
  // Rounding up to whole huge pages would wrap.
  CHECK_THROWS_AS(AllocStreamed(std::numeric_limits<size_t>::max() - 100), std::bad_alloc);
}
