// `ember sample` and the sampling flags of `ember run`: the worked
// examples, bad input, and the JSON fields.
#include <sys/wait.h>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "support/cli_runner.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

namespace {

using Result = ember::test::CliResult;
using ember::test::RequireCleanError;
using ember::test::ShellQuote;
Result Ember(const std::string& args) { return ember::test::RunEmber(args); }

void RequireError(const Result& r, const std::string& needle) {
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 1);
  // One error line, the last (a "loaded" log line may come before it).
  const size_t at = r.err.find("ember: error: ");
  REQUIRE(at != std::string::npos);
  CHECK(r.err.find('\n', at) == r.err.size() - 1);
  CHECK_THAT(r.err.substr(at), Catch::Contains(needle));
  CHECK(r.out.empty());
}

}  // namespace

TEST_CASE("ember sample: the worked examples", "[cli][sample]") {
  Result a = Ember("sample --logits 3,2,1,0.5 --top-k 2 --temp 1");
  INFO(a.err);
  REQUIRE(a.exit_code == 0);
  CHECK_THAT(a.out, Catch::Contains("\"final\": {\"n\":2,\"ids\":[0,1]"));
  CHECK_THAT(a.out, Catch::Contains("\"probs\":[0.7311,0.2689]"));

  Result b = Ember("sample --logits 3,2,1,0.5 --temp 0.5");
  CHECK_THAT(b.out, Catch::Contains("\"probs\":[0.8618,0.1166,0.0158,0.0058]"));
  Result c = Ember("sample --logits 3,2,1,0.5 --temp 2");
  CHECK_THAT(c.out, Catch::Contains("\"probs\":[0.4423,0.2683,0.1627,0.1267]"));

  // Repetition penalty 1.3 on seen tokens: 2.0 -> 1.5385, -2.0 -> -2.6.
  Result d = Ember("sample --logits 2,-2,1 --repeat-penalty 1.3 --history 0,1 --trace");
  CHECK_THAT(d.out, Catch::Contains("\"sampler\": \"penalties\""));
  CHECK_THAT(d.out, Catch::Contains("\"logits\":[1.5385,1.0000,-2.6000]"));
}

TEST_CASE("ember sample: only the named samplers run, in the order asked", "[cli][sample]") {
  Result plain = Ember("sample --logits 3,2,1,0.5");
  CHECK_THAT(plain.out, Catch::Contains("\"chain\": [\"dist\"]"));
  CHECK_THAT(plain.out, Catch::Contains("\"n\":4"));
  Result ordered = Ember("sample --logits 3,2,1,0.5 --top-p 0.8 --temp 3 --samplers temp,top_p");
  CHECK_THAT(ordered.out, Catch::Contains("\"chain\": [\"temperature\", \"top-p\", \"dist\"]"));
  RequireError(Ember("sample --logits 3,2 --samplers top_k"), "--top-k) is not given");
  RequireError(Ember("sample --logits 3,2 --top-k 1 --samplers temp --temp 1"),
               "--samplers does not name 'top-k'");
}

TEST_CASE("ember sample: --fill, --draw with a seed, vocab-sized cases", "[cli][sample]") {
  Result a = Ember("sample --logits 5,4 --fill 31998=0 --top-k 40 --draw 2000 --seed 7");
  INFO(a.err);
  REQUIRE(a.exit_code == 0);
  CHECK_THAT(a.out, Catch::Contains("\"n_vocab\": 32000"));
  CHECK_THAT(a.out, Catch::Contains("\"n\":40"));
  CHECK_THAT(a.out, Catch::Contains("\"draws\": {\"n\": 2000, \"seed\": 7"));
  Result b = Ember("sample --logits 5,4 --fill 31998=0 --top-k 40 --draw 2000 --seed 7");
  CHECK(a.out == b.out);  // same seed, same draws
  Result c = Ember("sample --logits 5,4 --fill 31998=0 --top-k 40 --draw 2000 --seed 8");
  CHECK(a.out != c.out);
}

TEST_CASE("ember sample: bad input names the parameter", "[cli][sample][bad-input]") {
  RequireError(Ember("sample --logits 3,2 --temp -0.5"), "temperature must be >= 0");
  RequireError(Ember("sample --logits 3,2 --top-p 1.5"), "top-p");
  RequireError(Ember("sample --logits 3,2 --top-p 0"), "top-p");
  RequireError(Ember("sample --logits 3,2 --top-k -1"), "top-k");
  RequireError(Ember("sample --logits 3,2 --min-p 2"), "min-p");
  RequireError(Ember("sample --logits 3,2 --temp 1 --samplers temp,frobnicate"),
               "unknown sampler 'frobnicate'");
  RequireError(Ember("sample --logits 3,2 --logit-bias 1*5"), "--logit-bias expects");
  RequireError(Ember("sample --logits 3,2 --logit-bias 7+1"), "logit-bias");  // id >= n_vocab
  RequireError(Ember("sample --logits ''"), "--logits: no logits given");
  RequireError(Ember("sample --logits 3,x"), "'x' is not a number");
  RequireError(Ember("sample"), "exactly one of --logits and --logits-file");
  RequireError(Ember("sample --logits 3 --fill 5"), "--fill expects COUNT=VALUE");
  RequireError(Ember("sample --logits 3,2 --mirostat 1"), "mirostat v1");
}

TEST_CASE("ember run: stop strings, --n-probs, beams and sampler flags", "[cli][sample]") {
  const std::string tiny = ember::test::DefaultTinyModel();
  Result full = Ember("run -m " + tiny + " -p 'Hello world' -n 12 --temp 0 --ignore-eos --json");
  REQUIRE(full.exit_code == 0);
  CHECK_THAT(full.out, Catch::Contains("\"logprob\":"));

  Result probs =
      Ember("run -m " + tiny + " -p 'Hello world' -n 3 --temp 0 --ignore-eos --n-probs 2 --json");
  INFO(probs.err);
  CHECK_THAT(probs.out, Catch::Contains("\"probs\":[{\"id\":"));
  CHECK_THAT(probs.out, Catch::Contains("\"top\":[{\"id\":"));

  Result beams = Ember("run -m " + tiny + " -p 'Hello world' -n 6 --beams 1 --ignore-eos --json");
  Result greedy = Ember("run -m " + tiny + " -p 'Hello world' -n 6 --temp 0 --ignore-eos --json");
  auto tokens = [](const std::string& json) {
    const size_t a = json.find("\"tokens\":"), b = json.find(']', a);
    return json.substr(a, b - a);
  };
  CHECK(tokens(beams.out) == tokens(greedy.out));

  Result sampled = Ember("run -m " + tiny +
                         " -p 'Hello world' -n 6 --ignore-eos --json --top-k 5 --top-p 0.9"
                         " --min-p 0.01 --repeat-penalty 1.1 --presence-penalty 0.5"
                         " --frequency-penalty 0.2 --dry-multiplier 0.8 --xtc-probability 0.5"
                         " --typical 0.9 --top-nsigma 2 --logit-bias 15496-inf --seed 3"
                         " --samplers 'penalties;dry;top_k;typ_p;top_p;min_p;xtc;temperature'");
  INFO(sampled.err);
  CHECK(sampled.exit_code == 0);

  RequireError(Ember("run -m " + tiny + " -p hi --top-p 2"), "top-p");
  RequireError(Ember("run -m " + tiny + " -p hi --samplers 'top_k;bogus'"), "bogus");
  RequireError(Ember("run -m " + tiny + " -p hi --beams 0"), "--beams must be between 1");
  RequireError(Ember("run -m " + tiny + " -p hi --stop ''"), "--stop needs a non-empty string");
}
