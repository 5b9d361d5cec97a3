// ember eval --all-logits: the logits of every position, position-major, as
// bench/peer/peer_tool's `logits --all` writes them (scripts/validate.sh reads
// both). Each row is what a plain eval of the tokens up to it gives, bit for bit.
#include <catch2/catch.hpp>
#include <string>

#include "support/cli_runner.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

namespace {

using Result = ember::test::CliResult;
using ember::test::RequireCleanError;
Result Ember(const std::string& args) { return ember::test::RunEmber(args); }

constexpr size_t kRowBytes = 50257 * 4;  // the tiny model's GPT-2 vocabulary, f32

// The logits file of a plain eval (the last position) of `ids`.
std::string LastRow(const std::string& m, const std::string& ids, const std::string& name) {
  const std::string out = ember::test::TempPath(name);
  const Result r = Ember("eval " + m + " --tokens " + ids + " -t 1 --logits-out " + out);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return ember::test::ReadFile(out);
}

}  // namespace

TEST_CASE("cli eval: --all-logits writes one row per position", "[cli][eval]") {
  const std::string m = "-m " + ember::test::DefaultTinyModel();
  const std::string all = ember::test::TempPath("all.f32");
  const Result r =
      Ember("eval " + m + " --tokens 15496,995,11,257 -t 1 --all-logits --logits-out " + all);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("wrote 50257 logits of each of 4 positions"));
  const std::string rows = ember::test::ReadFile(all);
  REQUIRE(rows.size() == 4 * kRowBytes);
  // Row i is the plain eval of the first i + 1 tokens.
  CHECK(rows.substr(0, kRowBytes) == LastRow(m, "15496", "row0.f32"));
  CHECK(rows.substr(1 * kRowBytes, kRowBytes) == LastRow(m, "15496,995", "row1.f32"));
  CHECK(rows.substr(3 * kRowBytes, kRowBytes) == LastRow(m, "15496,995,11,257", "row3.f32"));
  CHECK(rows.substr(0, kRowBytes) != rows.substr(1 * kRowBytes, kRowBytes));

  SECTION("a prompt gives its tokens' rows") {
    const std::string p = ember::test::TempPath("prompt.f32");
    const Result e = Ember("eval " + m + " -p 'Hello world' -t 1 --all-logits --logits-out " + p);
    REQUIRE(e.exit_code == 0);
    CHECK(ember::test::ReadFile(p) == rows.substr(0, 2 * kRowBytes));  // "Hello" " world"
  }
}

TEST_CASE("cli eval: --all-logits past the context is a clear error", "[cli][eval][bad-input]") {
  const std::string m = "-m " + ember::test::DefaultTinyModel();
  const std::string all = ember::test::TempPath("overflow.f32");
  // No context shift: every row must see all the tokens before it.
  RequireCleanError(Ember("eval " + m +
                          " --tokens 1,2,3,4,5,6,7,8,9,10 -c 8 --all-logits "
                          "--logits-out " +
                          all),
                    "context");
}
