// Resource limits on the command line: --max-memory on the commands that
// create sessions, a context larger than the machine's memory, and
// --no-mmap / --mmap.
#include <catch2/catch.hpp>
#include <string>

#include "platform/memory_info.h"
#include "support/cli_runner.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

namespace {

using ember::test::RequireCleanError;
using ember::test::RunEmber;

std::string TextFile() {
  const std::string path = ember::test::TempPath("limits.txt");
  std::string text;
  for (int i = 0; i < 20; ++i) text += "The quick brown fox jumps over the lazy dog. ";
  std::FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return path;
}

}  // namespace

TEST_CASE("cli limits: --max-memory refuses a context that needs more", "[cli][limits]") {
  const std::string m = "-m " + ember::test::DefaultTinyModel();
  const std::string needle = "bytes) it may take: the limit given as max_memory (--max-memory)";
  RequireCleanError(RunEmber("run " + m + " -p hi -c 256 -t 1 --max-memory 1K"),
                    "session: a context of 256 tokens needs ");
  RequireCleanError(RunEmber("run " + m + " -p hi -c 256 -t 1 --max-memory 1K"),
                    "more than the 1.0 KiB (1024 " + needle);
  RequireCleanError(RunEmber("chat " + m + " -t 1 --max-memory 100K </dev/null"), needle);
  RequireCleanError(RunEmber("eval " + m + " -p hi -t 1 --logits-out /dev/null --max-memory 2K"),
                    needle);
  RequireCleanError(
      RunEmber("perplexity " + m + " -f " + TextFile() + " -c 64 -t 1 " + "--max-memory 0.001M"),
      "(1048 " + needle);
  RequireCleanError(RunEmber("bench " + m + " -p 8 -n 8 -r 1 -t 1 --max-memory 4096"), needle);
  // A limit the context fits in.
  const auto ok = RunEmber("run " + m + " -p hi -c 64 -n 4 -t 1 --max-memory 512M");
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
}

TEST_CASE("cli limits: bad --max-memory values", "[cli][limits][bad-input]") {
  const std::string m = "-m " + ember::test::DefaultTinyModel();
  for (const char* v : {"abc", "-1", "0", "4X", "1.5.5G", "G"}) {
    INFO(v);
    RequireCleanError(
        RunEmber("run " + m + " -p hi --max-memory '" + v + "'"),
        "--max-memory expects a size such as 512M or 4G, got '" + std::string(v) + "'");
  }
  RequireCleanError(RunEmber("run " + m + " -p hi --mmap --no-mmap"),
                    "give --mmap or --no-mmap, not both");
}

TEST_CASE("cli limits: serve shares --max-memory among its slots", "[cli][limits]") {
  const std::string m = "-m " + ember::test::DefaultTinyModel();
  const auto r = RunEmber("serve " + m + " --port 0 -t 1 --parallel 2 -c 256 --max-memory 2K");
  RequireCleanError(r,
                    "creating the sessions (--max-memory 2K shared by 2 slots): a context of "
                    "256 tokens needs ");
  CHECK_THAT(r.err, Catch::Contains("more than the 1.0 KiB (1024 bytes) it may take"));
}

TEST_CASE("cli limits: -c beyond the machine's memory is a clear error, not an OOM kill",
          "[cli][limits]") {
  ember::test::TinyModelSpec spec;  // 32 KiB of f16 KV cache per token
  spec.n_head = 8;
  spec.n_head_kv = 8;
  spec.head_dim = 512;
  const std::string path = ember::test::TempPath("cli_wide_kv.gguf");
  REQUIRE(ember::test::BuildTinyModel(spec, path).ok());
  const ember::MemoryBudget machine = ember::AvailableMemory();
  if (machine.bytes >= uint64_t{32} << 30) EMBER_SKIP("this machine has " + machine.source);
  const auto r = RunEmber("run -m " + path + " -p hi -t 1 -c 1000000");
  RequireCleanError(r, "session: a context of 1000000 tokens needs 30.");
  CHECK_THAT(r.err, Catch::Contains(machine.source));
  CHECK_THAT(r.err, Catch::Contains("a smaller context or a q8 KV cache needs less"));
}

TEST_CASE("cli limits: --no-mmap and --mmap give the same output", "[cli][limits]") {
  const std::string m = "-m " + ember::test::DefaultTinyModel();
  const std::string common = " -p 'one two three' -n 8 --temp 0 --ignore-eos -t 1 --json";
  const auto mapped = RunEmber("run " + m + common + " --mmap");
  const auto copied = RunEmber("run " + m + common + " --no-mmap");
  INFO(mapped.err << copied.err);
  REQUIRE(mapped.exit_code == 0);
  REQUIRE(copied.exit_code == 0);
  const auto text = [](const std::string& json) {
    return json.substr(0, json.find("\"n_prompt\""));
  };
  CHECK(text(mapped.out) == text(copied.out));
}
