// The probe's read loops (platform/read_xor.h): every variant this CPU runs
// returns the xor of the whole 64-bit words, the bits of ReadXor_ref, at any
// length, alignment and number of streams, and reads each word exactly once.
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

#include "platform/read_xor.h"
#include "support/simd_isas.h"
#include "support/skip.h"

using namespace ember;

namespace {

// The xor of the bytes / 8 whole words at p, one at a time.
uint64_t XorOfWords(const unsigned char* p, size_t bytes) {
  uint64_t x = 0;
  for (size_t i = 0; i + 8 <= bytes; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    x ^= w;
  }
  return x;
}

std::vector<Isa> IsasToTest() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::kRef, Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Vnni, Isa::kNeon, Isa::kNeonDot,
                  Isa::kNeonI8mm}) {
    if (ReadXorFor(isa) != nullptr && test::CanRunOnHost(isa)) out.push_back(isa);
  }
  return out;
}

}  // namespace

TEST_CASE("read_xor: every variant gives the xor of the whole words", "[bandwidth][isa]") {
  std::mt19937_64 rng(11);
  // Room for the longest length at the largest misalignment.
  std::vector<unsigned char> buf(70000 + 64);
  for (unsigned char& b : buf) b = static_cast<unsigned char>(rng());
  for (Isa isa : IsasToTest()) {
    const ReadXorFn fn = ReadXorFor(isa);
    // Around each variant's step (16..512 bytes) and its single-vector tail,
    // tails shorter than a word, and a long run.
    for (size_t bytes : {0,   1,   7,   8,   9,   16,  24,  31,  32,   56,   64,   72,   120,  128,
                         136, 248, 256, 264, 504, 511, 512, 520, 1000, 1024, 4096, 4104, 70000}) {
      for (size_t offset : {0, 1, 8, 13, 32, 63}) {
        for (int streams : {0, 1, 2, 3, 4, 7}) {  // 0 reads as 1
          INFO(IsaName(isa) << " bytes " << bytes << " offset " << offset << " streams "
                            << streams);
          CHECK(fn(buf.data() + offset, bytes, streams) == XorOfWords(buf.data() + offset, bytes));
        }
      }
    }
  }
}

TEST_CASE("read_xor: every variant reads each word once", "[bandwidth][isa]") {
  // One non-zero word at a time: a skipped word gives 0, one read twice
  // cancels out to 0 as well.
  constexpr size_t kWords = 500;  // 4000 bytes: 7 AVX-512 steps and tails
  std::vector<uint64_t> words(kWords, 0);
  for (Isa isa : IsasToTest()) {
    const ReadXorFn fn = ReadXorFor(isa);
    for (int streams : {1, 2, 3, 4}) {
      for (size_t k = 0; k < kWords; ++k) {
        INFO(IsaName(isa) << " streams " << streams << " word " << k);
        words[k] = 0x9e3779b97f4a7c15u ^ k;
        CHECK(fn(words.data(), kWords * 8, streams) == words[k]);
        words[k] = 0;
      }
    }
  }
}

TEST_CASE("read_xor: the host's variant is one this CPU runs", "[bandwidth]") {
  const ReadXorFn host = HostReadXor();
  REQUIRE(host != nullptr);
  CHECK(host == ReadXorFor(HostCpu().Best()));
  if (IsasToTest().size() == 1) EMBER_SKIP("only ReadXor_ref on this build and CPU");
  CHECK(host != ReadXor_ref);
}
