// -t auto|N and --threads-batch N|auto on ember run, eval and bench: the
// chosen threads are shown, and bad values give one clear error line.
#include <sys/wait.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli_runner.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

namespace {

using Result = ember::test::CliResult;
using ember::test::RequireCleanError;
using ember::test::ShellQuote;
Result Ember(const std::string& args) { return ember::test::RunEmber(args); }

}  // namespace

TEST_CASE("cli threads: bad thread values are clear errors", "[cli][threads][bad-input]") {
  const std::string m = "-m " + ember::test::DefaultTinyModel();
  const std::string expect = "expects 'auto' or a thread count from 1 to 1024";
  RequireCleanError(Ember("run " + m + " -p hi -t abc"), "--threads " + expect + ", got 'abc'");
  RequireCleanError(Ember("run " + m + " -p hi -t -2"), "got '-2'");
  RequireCleanError(Ember("run " + m + " -p hi -t 1025"), "got '1025'");
  RequireCleanError(Ember("run " + m + " -p hi -t ''"), "got ''");
  RequireCleanError(Ember("run " + m + " -p hi --threads-batch 2x"),
                    "--threads-batch " + expect + ", got '2x'");
  RequireCleanError(Ember("eval " + m + " -p hi --logits-out /dev/null -t AUTO"), "got 'AUTO'");
  RequireCleanError(Ember("bench " + m + " -p 4 -n 0 -r 1 -t 1,auto,x"), "got 'x'");
  RequireCleanError(Ember("bench " + m + " -p 4 -n 0 -r 1 -t 1,,2"), "got ''");
  RequireCleanError(Ember("bench " + m + " -p 4 -n 0 -r 1 --threads-batch 99999"), "got '99999'");
}

TEST_CASE("cli threads: ember run shows the threads it chose", "[cli][threads]") {
  const std::string m = "-m " + ember::test::DefaultTinyModel();
  SECTION("auto (the default)") {
    const Result r = Ember("run " + m + " -p 'Once upon' -n 3 --temp 0");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("ember: decode "));
    CHECK_THAT(r.err, Catch::Contains("(auto"));
    CHECK_THAT(r.err, Catch::Contains(", prefill "));
    const Result a = Ember("run " + m + " -p 'Once upon' -n 3 --temp 0 -t auto");
    REQUIRE(a.exit_code == 0);
    CHECK(a.out == r.out);
  }
  SECTION("explicit counts") {
    const Result r = Ember("run " + m + " -p 'Once upon' -n 3 --temp 0 -t 1 --threads-batch 2");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("decode 1 thread (-t 1), prefill 2 threads "
                                      "(--threads-batch 2)"));
    CHECK_THAT(r.err, Catch::Contains("2 threads); generated"));
    const Result t = Ember("run " + m + " -p 'Once upon' -n 3 --temp 0 -t 2");
    CHECK_THAT(t.err, Catch::Contains("decode 2 threads (-t 2), prefill 2 threads (as -t)"));
    // Greedy output does not depend on the thread counts.
    CHECK(t.out == r.out);
  }
}

TEST_CASE("cli threads: ember eval and bench take auto", "[cli][threads]") {
  const std::string m = "-m " + ember::test::DefaultTinyModel();
  const std::string a = ember::test::TempPath("auto.f32"), b = ember::test::TempPath("one.f32");
  REQUIRE(Ember("eval " + m + " -p 'Once upon a time' --logits-out " + a + " -t auto").exit_code ==
          0);
  REQUIRE(
      Ember("eval " + m + " -p 'Once upon a time' --logits-out " + b + " -t 1 --threads-batch 1")
          .exit_code == 0);
  CHECK(ember::test::ReadFile(a) == ember::test::ReadFile(b));  // bit-identical

  const Result r = Ember("bench " + m + " -p 8 -n 4 -r 1 -t 1,auto");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("-t auto: decode "));
  CHECK_THAT(r.out, Catch::Contains("GB/s peak), prefill "));
  CHECK_THAT(r.out, Catch::Contains("| pp8            |         1 |"));
  CHECK_THAT(r.out, Catch::Contains("| tg4            |    auto "));
  const Result j = Ember("bench " + m + " -p 8 -n 0 -r 1 -t auto --threads-batch 1 --json");
  INFO(j.out << j.err);
  REQUIRE(j.exit_code == 0);
  CHECK_THAT(j.out, Catch::Contains("\"n_threads\": 1, \"threads\": \"1\""));
}

TEST_CASE("cli: ember run --batch-size chunks the prompt without changing the text",
          "[cli][bad-input]") {
  const std::string m = "-m " + ember::test::DefaultTinyModel();
  const std::string run = "run " + m + " -p 'Once upon a time there was' -n 6 --temp 0";
  const Result whole = Ember(run);
  INFO(whole.err);
  REQUIRE(whole.exit_code == 0);
  for (const char* b : {"-b 1", "-b 3", "--batch-size 256"}) {
    const Result r = Ember(run + " " + b);
    INFO(b << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == whole.out);
  }
  RequireCleanError(Ember(run + " -b 0"), "--batch-size");
  RequireCleanError(Ember(run + " -b x"), "--batch-size");
}

TEST_CASE("cli: ember bench -d runs each test after that many tokens, as llama-bench",
          "[cli][bad-input]") {
  const std::string m = "-m " + ember::test::DefaultTinyModel();
  const Result r = Ember("bench " + m + " -p 4 -n 3 -d 0,9 -r 1 -t 1");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("| pp4            |         1 |"));
  CHECK_THAT(r.out, Catch::Contains("| tg3            |         1 |"));
  CHECK_THAT(r.out, Catch::Contains("| pp4 @ d9       |         1 |"));
  CHECK_THAT(r.out, Catch::Contains("| tg3 @ d9       |         1 |"));
  const Result j = Ember("bench " + m + " -p 0 -n 2 -d 5 -r 1 -t 1 --json");
  INFO(j.out << j.err);
  REQUIRE(j.exit_code == 0);
  CHECK_THAT(j.out, Catch::Contains("\"n_prompt\": 0, \"n_gen\": 2, \"n_depth\": 5, "
                                    "\"test\": \"tg2 @ d5\""));
  RequireCleanError(Ember("bench " + m + " -p 4 -n 0 -r 1 -d x"), "--n-depth");
  RequireCleanError(Ember("bench " + m + " -p 4 -n 0 -r 1 -d -3"), "--n-depth");
}

TEST_CASE("cli: ember bench --probe-each rates each decode repetition against the probes beside it",
          "[cli]") {
  const std::string m = "-m " + ember::test::DefaultTinyModel();
  const Result j = Ember("bench " + m + " -p 4 -n 3 -r 2 -t 1 --json --probe-each");
  INFO(j.out << j.err);
  REQUIRE(j.exit_code == 0);
  std::istringstream lines(j.out);
  std::string line;
  int tests = 0;
  while (std::getline(lines, line)) {
    const nlohmann::json t = nlohmann::json::parse(line);
    ++tests;
    if (t["test"] == "pp4") {  // prefill: no probes
      CHECK_FALSE(t.contains("probes_gbps"));
      continue;
    }
    REQUIRE(t["test"] == "tg3");
    // A probe before each of the 2 repetitions and one after the last; each
    // repetition's rate against the larger probe on either side of it, and
    // pct_peak_bw their median (the mean of two).
    const std::vector<double> probes = t["probes_gbps"], pct = t["pct_peak_bw_samples"],
                              tok_s = t["samples_ts"];
    REQUIRE(probes.size() == 3);
    REQUIRE(pct.size() == 2);
    REQUIRE(tok_s.size() == 2);
    const double bytes_per_tok = t["gbps"].get<double>() / t["avg_ts"].get<double>();
    for (size_t r = 0; r < 2; ++r) {
      CHECK(probes[r] > 0);
      const double want = 100.0 * tok_s[r] * bytes_per_tok / std::max(probes[r], probes[r + 1]);
      CHECK(pct[r] == Approx(want).epsilon(1e-3));
    }
    CHECK(t["pct_peak_bw"].get<double>() == Approx((pct[0] + pct[1]) / 2).epsilon(1e-3));
  }
  CHECK(tests == 2);
  const Result r = Ember("bench " + m + " -p 0 -n 3 -r 3 -t 1 --probe-each");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("% peak: median of 3 repetitions, each against the larger "
                                    "probe beside it"));
}

TEST_CASE("cli: ember bench -pg times a prompt and its decodes together, as llama-bench",
          "[cli][bad-input]") {
  const std::string m = "-m " + ember::test::DefaultTinyModel();
  const Result r = Ember("bench " + m + " -p 0 -n 0 -pg 4,3 -pg 2,1 -d 0,6 -r 1 -t 1");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  // Only the -pg tests (-p 0 -n 0), each at each depth; no bandwidth column.
  CHECK_THAT(r.out, Catch::Contains("| pp4+tg3        |         1 |"));
  CHECK_THAT(r.out, Catch::Contains("| pp2+tg1        |         1 |"));
  CHECK_THAT(r.out, Catch::Contains("| pp4+tg3 @ d6   |         1 |"));
  CHECK(r.out.find("| pp4 ") == std::string::npos);
  CHECK(r.out.find("| tg3 ") == std::string::npos);
  // The context holds the deepest test: 6 + 4 + 3 positions.
  CHECK_THAT(r.out, Catch::Contains("at n_ctx 13)"));
  const Result j = Ember("bench " + m + " -p 0 -n 0 -pg 4,3 -r 1 -t 1 --json");
  INFO(j.out << j.err);
  REQUIRE(j.exit_code == 0);
  CHECK_THAT(j.out, Catch::Contains("\"n_prompt\": 4, \"n_gen\": 3, \"n_depth\": 0, "
                                    "\"test\": \"pp4+tg3\""));
  for (const char* bad : {"4", "0,3", "4,0", "4,3,2", "x,3"}) {
    RequireCleanError(Ember("bench " + m + " -r 1 -pg " + bad), "--prompt-gen");
  }
}

TEST_CASE("cli: ember bench --kv-type measures with that cache, as llama-bench's -ctk -ctv",
          "[cli][bad-input]") {
  const std::string m = "-m " + ember::test::DefaultTinyModel();
  // The cache's size in KiB at the bench's context, from the text output's last line.
  auto kv_mib = [&](const std::string& type) {
    const Result r = Ember("bench " + m + " -p 0 -n 2 -d 30 -r 1 -t 1 --kv-type " + type);
    INFO(type << ": " << r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("KV cache: " + type + ")"));
    const std::string key = "KV cache " + type + ": ";
    const size_t at = r.out.find(key);
    REQUIRE(at != std::string::npos);
    size_t used = 0;
    const double v = std::stod(r.out.substr(at + key.size()), &used);
    const std::string unit = r.out.substr(at + key.size() + used, 4);
    REQUIRE((unit == " KiB" || unit == " MiB"));
    return unit == " MiB" ? v * 1024 : v;
  };
  const double f16 = kv_mib("f16"), q8 = kv_mib("q8"), f32 = kv_mib("f32");
  CHECK(f32 == Approx(2 * f16).epsilon(0.01));
  // int8 plus an f32 scale per row and head: (head_dim + 4) / (2 head_dim) of
  // f16, 0.53 at SmolLM2's 64, more for the tiny model's small heads.
  CHECK(q8 < 0.7 * f16);
  CHECK(q8 > 0.5 * f16);
  const Result j = Ember("bench " + m + " -p 0 -n 2 -r 1 -t 1 --json --kv-type q8_0");
  INFO(j.out << j.err);
  REQUIRE(j.exit_code == 0);
  CHECK_THAT(j.out, Catch::Contains("\"type_k\": \"q8_0\", \"type_v\": \"q8_0\""));
  RequireCleanError(Ember("bench " + m + " -p 0 -n 2 -r 1 --kv-type q4"), "--kv-type");
}
