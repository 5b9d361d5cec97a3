// The `ember` binary on bad input: one line "ember: error: ..." on stderr, a
// non-zero exit, no crash. And the happy paths of each subcommand.
#include <sys/wait.h>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/gguf/gguf_writer.h"
#include "support/cli_runner.h"
#include "support/model_builder.h"
#include "support/skip.h"
#include "support/test_paths.h"

namespace {

using Result = ember::test::CliResult;
using ember::test::RequireCleanError;
using ember::test::ShellQuote;
Result Ember(const std::string& args) { return ember::test::RunEmber(args); }

std::string WriteBytes(const std::string& name, const std::string& bytes) {
  std::string p = ember::test::TempPath(name);
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

}  // namespace

TEST_CASE("cli: bad input gives one clear error line", "[cli][bad-input]") {
  const std::string tiny = ember::test::DefaultTinyModel();
  REQUIRE(!tiny.empty());
  const std::string model_bytes = ember::test::ReadFile(tiny);

  SECTION("missing file") {
    RequireCleanError(Ember("run -m /nonexistent.gguf -p hi"), "cannot open '/nonexistent.gguf'");
  }
  SECTION("--numerics names no numerics") {
    RequireCleanError(Ember("run -m " + tiny + " -p hi --numerics fast"),
                      "--numerics: expected ember or ggml, got 'fast'");
  }
  SECTION("--repack names no choice") {
    RequireCleanError(Ember("run -m " + tiny + " -p hi --repack q4"),
                      "--repack: expected float or int8, got 'q4'");
  }
  SECTION("--numerics ggml with an int8 KV cache") {
    RequireCleanError(Ember("run -m " + tiny + " -p hi -n 2 --numerics ggml --kv-type q8"),
                      "kv type q8 is not supported with it");
  }
  SECTION("not a GGUF") {
    std::string p = WriteBytes("text.gguf", "hello, this is not a model\n");
    RequireCleanError(Ember("run -m " + p + " -p hi"), "not a GGUF file");
  }
  SECTION("bad version") {
    std::string b = model_bytes;
    b[4] = 9;
    RequireCleanError(Ember("info -m " + WriteBytes("v9.gguf", b)), "unsupported GGUF version 9");
  }
  SECTION("truncated header") {
    RequireCleanError(Ember("info -m " + WriteBytes("trunc.gguf", model_bytes.substr(0, 30))),
                      "truncated GGUF");
  }
  SECTION("tensor data past the end") {
    std::string p = WriteBytes("short.gguf", model_bytes.substr(0, model_bytes.size() - 100));
    RequireCleanError(Ember("run -m " + p + " -p hi"), "past the end of the file");
  }
  SECTION("unknown tensor type") {
    ember::test::TinyModelSpec spec;
    spec.type_override["blk.0.attn_v.weight"] = 77;
    std::string p = ember::test::TempPath("type77.gguf");
    REQUIRE(ember::test::BuildTinyModel(spec, p).ok());
    RequireCleanError(Ember("run -m " + p + " -p hi"), "unknown tensor type 77");
  }
  SECTION("wrong tensor shape") {
    ember::test::TinyModelSpec spec;
    spec.dims_override["blk.0.ffn_down.weight"] = {96, 32};
    std::string p = ember::test::TempPath("shape.gguf");
    REQUIRE(ember::test::BuildTinyModel(spec, p).ok());
    RequireCleanError(Ember("run -m " + p + " -p hi"), "'blk.0.ffn_down.weight' has shape");
  }
  SECTION("unsupported architecture") {
    ember::test::TinyModelSpec spec;
    spec.arch = "mamba";
    std::string p = ember::test::TempPath("mamba.gguf");
    REQUIRE(ember::test::BuildTinyModel(spec, p).ok());
    RequireCleanError(Ember("run -m " + p + " -p hi"), "unsupported architecture 'mamba'");
    // info and tokenize work on any file with a vocabulary, and say what ember cannot run.
    const auto info = Ember("info -m " + p);
    CHECK(info.exit_code == 0);
    CHECK(info.out.find("ember cannot run it: unsupported architecture 'mamba'") !=
          std::string::npos);
    CHECK(Ember("tokenize -m " + p + " -p hello").exit_code == 0);
  }
  SECTION("prompt longer than the context") {
    std::string prompt;
    for (int i = 0; i < 100; ++i) prompt += "word ";
    RequireCleanError(Ember("run -m " + tiny + " -c 16 -p " + ShellQuote(prompt)),
                      "does not fit in the context of 16 tokens");
  }
  SECTION("negative -n") {
    RequireCleanError(Ember("run -m " + tiny + " -p hi -n -3"), "--n-predict must be between 0");
  }
  SECTION("bad numbers and options") {
    RequireCleanError(Ember("run -m " + tiny + " -p hi --temp abc"), "--temp expects a number");
    RequireCleanError(Ember("run -m " + tiny + " -p hi --temp -1"),
                      "temperature must be >= 0 (got -1)");
    RequireCleanError(Ember("run -m " + tiny + " -p hi --frobnicate"), "unknown option");
    RequireCleanError(Ember("run -m " + tiny), "a prompt is needed");
    RequireCleanError(Ember("eval -m " + tiny + " -p hi"), "--logits-out FILE is required");
    RequireCleanError(Ember("explode"), "unknown command 'explode'");
  }
}

TEST_CASE("cli: every subcommand has --help", "[cli]") {
  for (const char* cmd :
       {"run", "tokenize", "eval", "embed", "info", "bench", "quantize", "sample"}) {
    Result r = Ember(std::string(cmd) + " --help");
    INFO(cmd);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::StartsWith(std::string("usage: ember ") + cmd));
  }
}

TEST_CASE("cli: quantize says once when the source was quantized already", "[cli]") {
  const std::string tiny = ember::test::DefaultTinyModel();  // Q8_0 matrices
  const std::string out = ember::test::TempPath("cli_requant.gguf");
  // To fewer bits: error added. Per-tensor lines only for the rules' notes.
  Result down = Ember("quantize -m " + tiny + " -o " + out + " --type Q4_0 -t 1");
  INFO(down.err);
  REQUIRE(down.exit_code == 0);
  CHECK_THAT(down.err, Catch::Contains("matrices were quantized already (Q8_0)"));
  CHECK_THAT(down.err, Catch::Contains("that adds error"));
  CHECK(down.err.find("cannot restore") == std::string::npos);
  CHECK(down.err.find("requantized from") == std::string::npos);
  // To more bits: nothing gained back.
  Result up = Ember("quantize -m " + tiny + " -o " + out + " --type F16 -t 1");
  INFO(up.err);
  REQUIRE(up.exit_code == 0);
  CHECK_THAT(up.err, Catch::Contains("cannot restore what the source's quantization lost"));
  CHECK(up.err.find("adds error") == std::string::npos);
  std::remove(out.c_str());
}

TEST_CASE("cli: embed prints a unit vector per line of the text, or OpenAI's JSON", "[cli]") {
  const std::string tiny = ember::test::DefaultTinyModel();
  const std::string file = ember::test::TempPath("embed_in.txt");
  {
    std::FILE* f = std::fopen(file.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs("Hello world\n\nA second line\nand a third\n", f);  // the empty line is skipped
    std::fclose(f);
  }
  Result r = Ember("embed -m " + tiny + " -f " + file + " -t 1");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<std::vector<double>> rows;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream vals(line);
    rows.emplace_back();
    for (double v; vals >> v;) rows.back().push_back(v);
  }
  REQUIRE(rows.size() == 3);
  for (const auto& v : rows) {
    double norm = 0;
    for (double x : v) norm += x * x;
    CHECK(v.size() == rows[0].size());
    CHECK(norm == Approx(1.0).epsilon(1e-4));  // printed with 8 digits
  }
  CHECK(rows[0] != rows[1]);
  // One input (no separator), the JSON shape clients read.
  Result j = Ember("embed -m " + tiny + " -f " + file + " --separator '' --json -t 1");
  INFO(j.err);
  REQUIRE(j.exit_code == 0);
  CHECK_THAT(j.out, Catch::StartsWith("{\"object\": \"list\", \"data\": [{\"object\": "
                                      "\"embedding\", \"index\": 0, \"embedding\": ["));
  CHECK(j.out.find("\"index\": 1") == std::string::npos);
  CHECK_THAT(j.out, Catch::Contains("\"usage\": {\"prompt_tokens\": "));
  RequireCleanError(Ember("embed -m " + tiny + " -p hi --pooling avg"), "--pooling must be");
  RequireCleanError(Ember("embed -m " + tiny + " -p xx --separator x"), "no input to embed");
  RequireCleanError(Ember("embed -m " + tiny + " -p 'a b c d e f g' -c 2"),
                    "do not fit in the context of 2");
}

TEST_CASE("cli: run, tokenize, eval and info on a tiny model", "[cli]") {
  const std::string tiny = ember::test::DefaultTinyModel();
  Result run = Ember("run -m " + tiny + " -p 'Hello world' -n 5 --temp 0 --ignore-eos --json");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::StartsWith("{\"text\":"));
  CHECK_THAT(run.out, Catch::Contains("\"n_prompt\":2,\"n_gen\":5,\"finish_reason\":\"length\""));

  Result tok = Ember("tokenize -m " + tiny + " -p 'Hello world'");
  CHECK(tok.exit_code == 0);
  CHECK(tok.out == "15496 995\n");  // GPT-2 ids of "Hello" " world"

  std::string logits = ember::test::TempPath("logits.f32");
  Result ev = Ember("eval -m " + tiny + " -p 'Hello world' --logits-out " + logits);
  CHECK(ev.exit_code == 0);
  CHECK(ember::test::ReadFile(logits).size() == 50257 * 4);

  Result info = Ember("info -m " + tiny);
  CHECK(info.exit_code == 0);
  CHECK_THAT(info.out, Catch::Contains("architecture:  llama"));
  CHECK_THAT(info.out, Catch::Contains("Q8_0"));
}

TEST_CASE("cli: run, bench and perplexity on every architecture", "[cli][arch]") {
  if (!ember::test::FileExists(ember::test::SharedDir() + "/vocab/ggml-vocab-qwen2.gguf")) {
    EMBER_SKIP("no test vocabularies");
  }
  const std::string text = ember::test::TempPath("cli_arch_text.txt");
  {
    std::ofstream f(text);
    for (int i = 0; i < 40; ++i) f << "The quick brown fox jumps over the lazy dog. ";
  }
  for (const char* which : {"llama3", "qwen2", "qwen3", "gemma3"}) {
    INFO(which);
    const std::string m = ember::test::BuildArchModel(which);
    REQUIRE(!m.empty());
    const Result run = Ember("run -m " + m + " -p hello -n 8 --temp 0 --ignore-eos -t 1");
    CHECK(run.exit_code == 0);
    CHECK(run.err.find("generated 8 tokens") != std::string::npos);
    const Result beams = Ember("run -m " + m + " -p hello -n 4 --beams 2 -t 1");
    CHECK(beams.exit_code == 0);
    const Result ppl = Ember("perplexity -m " + m + " -f " + text + " -c 64 --chunks 2 -t 1");
    INFO("perplexity: " << ppl.out << ppl.err);
    CHECK(ppl.exit_code == 0);
    CHECK(ppl.out.find("Final estimate: PPL = ") != std::string::npos);
    const Result bench = Ember("bench -m " + m + " -p 16 -n 4 -r 1 -t 1 --json");
    CHECK(bench.exit_code == 0);
    CHECK(bench.out.find("\"n_gen\": 4") != std::string::npos);
  }
}
