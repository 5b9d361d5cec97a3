// The KV cache on the command line: ember run's --kv-type, --keep,
// --no-context-shift and --prompt-cache, and ember perplexity.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "support/cli_runner.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

namespace {

using ember::test::RequireCleanError;
using ember::test::RunEmber;

// The number after "\"key\":" (or "\"key\": ") in a JSON line.
double JsonNumber(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\":");
  REQUIRE(at != std::string::npos);
  return std::strtod(json.c_str() + at + key.size() + 3, nullptr);
}

std::string JsonString(const std::string& json, const std::string& key) {
  const std::string k = "\"" + key + "\":\"";
  const size_t at = json.find(k);
  REQUIRE(at != std::string::npos);
  return json.substr(at + k.size(), json.find('"', at + k.size()) - at - k.size());
}

std::string TextFile() {
  // A few hundred tokens of real English (the GPL's preamble would do, but
  // the tests must not depend on /usr/share): the vocab tests' input text.
  std::string text;
  for (int i = 0; i < 12; ++i) {
    text += "The quick brown fox jumps over the lazy dog, and the dog sleeps on. ";
    text += "Free software is a matter of liberty, not price. ";
  }
  const std::string path = ember::test::TempPath("ppl.txt");
  std::FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return path;
}

}  // namespace

TEST_CASE("cli kv: bad KV flags are clear errors", "[cli][kv][bad-input]") {
  const std::string m = "-m " + ember::test::DefaultTinyModel();
  RequireCleanError(RunEmber("run " + m + " -p hi --kv-type q4"),
                    "--kv-type expects f16, q8 or f32, got 'q4'");
  RequireCleanError(RunEmber("run " + m + " -p hi -c 16 --keep 16"), "keep");
  RequireCleanError(RunEmber("run " + m + " -p hi --keep -2"), "--keep");
  RequireCleanError(RunEmber("run " + m + " -p hi --prompt-cache-ro"), "--prompt-cache");
  RequireCleanError(RunEmber("perplexity " + m), "-f FILE");
  RequireCleanError(RunEmber("perplexity " + m + " -f " + TextFile() + " -c 4096"),
                    "a chunk needs -c 4096");
  RequireCleanError(RunEmber("perplexity " + m + " -f " + TextFile() + " --keep 2"),
                    "--keep applies to --stream only");
}

TEST_CASE("cli kv: run goes past a small context, or stops at it", "[cli][kv]") {
  const std::string m = "-m " + ember::test::DefaultTinyModel();
  for (const char* type : {"f16", "q8", "f32"}) {
    INFO(type);
    const auto r = RunEmber("run " + m + " -p 'one two three' -c 16 -n 60 --temp 0 --ignore-eos " +
                            "--keep -1 --json -t 1 --kv-type " + type);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(JsonNumber(r.out, "n_gen") == 60);
    CHECK(JsonString(r.out, "finish_reason") == "length");
    CHECK_THAT(r.err, Catch::Contains("context shifts dropped"));
  }
  const auto fixed = RunEmber("run " + m +
                              " -p 'one two three' -c 16 -n 60 --temp 0 --ignore-eos --json -t 1 "
                              "--no-context-shift");
  REQUIRE(fixed.exit_code == 0);
  CHECK(JsonNumber(fixed.out, "n_gen") < 60);
  CHECK(JsonString(fixed.out, "finish_reason") == "length");
}

TEST_CASE("cli kv: --prompt-cache reuses the conversation so far", "[cli][kv]") {
  const std::string m = "-m " + ember::test::DefaultTinyModel();
  const std::string cache = ember::test::TempPath("cli.emberkv");
  std::remove(cache.c_str());
  const std::string common = " --temp 0 -n 6 --ignore-eos --json -t 1 --prompt-cache " + cache;
  const auto first = RunEmber("run " + m + " -p 'Hello there, how are you'" + common);
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(JsonNumber(first.out, "n_reused") == 0);
  CHECK_THAT(first.err, Catch::Contains("does not exist yet"));
  // The same prompt plus more: the cached prompt is not computed again.
  const std::string second_prompt = "'Hello there, how are you today, my friend'";
  const auto second = RunEmber("run " + m + " -p " + second_prompt + common);
  INFO(second.err);
  REQUIRE(second.exit_code == 0);
  CHECK(JsonNumber(second.out, "n_reused") >= 4);
  // The output is what a run without the cache gives.
  const auto plain =
      RunEmber("run " + m + " -p " + second_prompt + " --temp 0 -n 6 --ignore-eos --json -t 1");
  REQUIRE(plain.exit_code == 0);
  CHECK(JsonString(second.out, "text") == JsonString(plain.out, "text"));
  // A cache of another KV type is refused, and left alone.
  const std::string before = ember::test::ReadFile(cache);
  RequireCleanError(RunEmber("run " + m + " -p hi --kv-type q8 --prompt-cache " + cache),
                    "this session's KV cache is q8");
  CHECK(ember::test::ReadFile(cache) == before);
  // Read-only use does not write.
  const auto ro = RunEmber("run " + m + " -p " + second_prompt + common + " --prompt-cache-ro");
  REQUIRE(ro.exit_code == 0);
  CHECK(ember::test::ReadFile(cache) == before);
  std::remove(cache.c_str());
}

TEST_CASE("cli kv: perplexity by chunks and streamed through the ring", "[cli][kv]") {
  const std::string m = "-m " + ember::test::DefaultTinyModel();
  const std::string f = " -f " + TextFile();
  const auto chunks = RunEmber("perplexity " + m + f + " -c 64 -t 1 --json");
  INFO(chunks.err);
  REQUIRE(chunks.exit_code == 0);
  const double n_tokens = JsonNumber(chunks.out, "n_tokens");
  const double n_chunks = JsonNumber(chunks.out, "n_chunks");
  CHECK(n_chunks == std::floor(n_tokens / 64));
  CHECK(JsonNumber(chunks.out, "n_scored") == n_chunks * 31);  // tokens 33..63 of each chunk
  const double ppl = JsonNumber(chunks.out, "ppl");
  CHECK(ppl == Approx(std::exp(JsonNumber(chunks.out, "nll"))).epsilon(1e-3));
  CHECK(ppl > 1.0);

  // Streamed: every token after the first is scored; a 32-token ring shifts.
  const auto stream = RunEmber("perplexity " + m + f + " -c 32 --stream --keep 2 -b 8 -t 1 --json");
  INFO(stream.err);
  REQUIRE(stream.exit_code == 0);
  CHECK(JsonNumber(stream.out, "n_scored") == n_tokens - 1);
  CHECK(JsonNumber(stream.out, "n_dropped") > 0);
  CHECK(std::isfinite(JsonNumber(stream.out, "ppl")));

  // Without context shift the stream stops at the full context.
  const auto stop =
      RunEmber("perplexity " + m + f + " -c 32 --stream --no-context-shift -b 8 -t 1 --json");
  REQUIRE(stop.exit_code == 0);
  CHECK(JsonNumber(stop.out, "n_scored") == 31);
  CHECK_THAT(stop.err, Catch::Contains("the context is full"));
}
