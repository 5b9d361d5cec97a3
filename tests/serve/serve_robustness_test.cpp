// `ember serve` under pressure: a client that hangs up, a full queue, the API
// key, bad input of every kind (OpenAI's error shape, the server going on),
// SIGTERM during a generation. Each test starts its own server
// (tests/serve/server_process.h) with the tiny qwen2 model.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "serve/serve_helpers.h"
#include "support/cli_runner.h"
#include "support/test_paths.h"

using ember::test::ServerProcess;
using namespace ember::test::serve;  // NOLINT: the helpers are this file's vocabulary

namespace {

// The body of an input http_fuzz found (tests/data/fuzz): the route is its first line.
std::string FuzzBody(const std::string& name) {
  const std::string in =
      ember::test::ReadFile(std::string(EMBER_SOURCE_DIR) + "/tests/data/fuzz/" + name);
  return in.substr(in.find('\n') + 1);
}

}  // namespace

TEST_CASE("serve: a client that hangs up frees its slot, a full queue answers 429", "[serve]") {
  const std::string model = TinyChatModel();
  ServerProcess server;
  // One slot, one queue place, and room for a generation that would take long.
  StartOrFail(server, {"-m", model, "-c", "16384", "-t", "1", "--queue", "1"});
  auto c = server.Client();
  json endless = Completion("Keep going", 16000);
  endless["stream"] = true;

  // A streams and hangs up after its first chunk.
  StreamAndHangUp(server.port(), endless);
  CHECK(WaitFor([&] { return Metric(*c, "ember_requests_cancelled_total") == 1; }, 30));
  CHECK(WaitFor([&] { return Metric(*c, "ember_slots_busy") == 0; }, 30));
  CHECK(Metric(*c, "ember_tokens_generated_total") < 16000);

  // B holds the slot, C waits in the queue, D is refused.
  std::atomic<bool> release_b{false}, c_done{false};
  std::thread b([&] { StreamAndHangUp(server.port(), endless, [&] { return release_b.load(); }); });
  CHECK(WaitFor([&] { return Metric(*c, "ember_slots_busy") == 1; }, 30));
  std::thread q([&] {
    httplib::Client qc("127.0.0.1", server.port());
    qc.set_read_timeout(300, 0);
    qc.Post("/v1/completions", Completion("Queued", 4).dump(), "application/json");
    c_done = true;
  });
  CHECK(WaitFor([&] { return Metric(*c, "ember_queue_length") == 1; }, 30));
  const Reply refused = Post(*c, "/v1/completions", Completion("Refused", 4));
  CheckOpenAiError(refused, 429);
  CHECK(Metric(*c, "ember_requests_rejected_total") == 1);
  release_b = true;
  b.join();  // B hung up: its slot goes to C
  q.join();
  CHECK(c_done);
  CHECK(WaitFor([&] { return Metric(*c, "ember_slots_busy") == 0; }, 30));
  CHECK(Post(*c, "/v1/completions", Completion("Served", 4)).status == 200);
  CHECK(server.Stop() == 0);
}

TEST_CASE("serve: --api-key", "[serve]") {
  const std::string model = TinyChatModel();
  ServerProcess server;
  StartOrFail(server, ServerArgs(model, {"--api-key", "s3cret"}));
  auto c = server.Client();
  const json body = Completion("Hi", 2);
  CheckOpenAiError(Post(*c, "/v1/completions", body), 401);
  CheckOpenAiError(Post(*c, "/v1/completions", body, {{"Authorization", "Bearer wrong"}}), 401);
  CheckOpenAiError(Post(*c, "/v1/completions", body, {{"Authorization", "Bearer s3cre"}}), 401);
  CheckOpenAiError(Post(*c, "/v1/completions", body, {{"Authorization", "s3cret"}}), 401);
  auto models = c->Get("/v1/models");
  REQUIRE(models);
  CHECK(models->status == 401);
  CHECK(Post(*c, "/v1/completions", body, {{"Authorization", "Bearer s3cret"}}).status == 200);
  auto health = c->Get("/health");  // open: supervisors poll it
  REQUIRE(health);
  CHECK(health->status == 200);
}

TEST_CASE("serve: bad requests get 4xx in OpenAI's shape, the server goes on", "[serve]") {
  const std::string model = TinyChatModel();
  ServerProcess server;
  StartOrFail(server, ServerArgs(model, {"-c", "64"}));
  auto c = server.Client();
  const json msgs = {{{"role", "user"}, {"content", "Hi"}}};
  std::string long_prompt;
  for (int i = 0; i < 100; ++i) long_prompt += "many words here ";
  struct Case {
    const char* name;
    const char* path;
    std::string body;
  };
  const std::vector<Case> cases = {
      {"malformed JSON", "/v1/chat/completions", "{\"messages\": [}"},
      {"not an object", "/v1/completions", "[1, 2]"},
      {"empty body", "/v1/completions", ""},
      {"invalid UTF-8", "/v1/completions", "{\"prompt\": \"bad \xff\xfe bytes\"}"},
      {"no prompt", "/v1/completions", json{{"max_tokens", 3}}.dump()},
      {"prompt of wrong type", "/v1/completions", json{{"prompt", 5}}.dump()},
      {"two prompts", "/v1/completions", json{{"prompt", {"a", "b"}}}.dump()},
      {"temperature a string", "/v1/completions",
       json{{"prompt", "x"}, {"temperature", "hot"}}.dump()},
      {"temperature too high", "/v1/completions", json{{"prompt", "x"}, {"temperature", 9}}.dump()},
      {"max_tokens negative", "/v1/completions", json{{"prompt", "x"}, {"max_tokens", -1}}.dump()},
      {"max_tokens zero", "/v1/completions", json{{"prompt", "x"}, {"max_tokens", 0}}.dump()},
      {"max_tokens too large", "/v1/completions",
       json{{"prompt", "x"}, {"max_tokens", 100000}}.dump()},
      {"max_tokens a float", "/v1/completions", json{{"prompt", "x"}, {"max_tokens", 2.5}}.dump()},
      {"prompt longer than the context", "/v1/completions", json{{"prompt", long_prompt}}.dump()},
      {"no messages", "/v1/chat/completions", json{{"max_tokens", 3}}.dump()},
      {"empty messages", "/v1/chat/completions", json{{"messages", json::array()}}.dump()},
      {"unknown role", "/v1/chat/completions",
       json{{"messages", {{{"role", "wizard"}, {"content", "x"}}}}}.dump()},
      {"message not an object", "/v1/chat/completions", json{{"messages", {"hi"}}}.dump()},
      {"image content", "/v1/chat/completions",
       json{{"messages", {{{"role", "user"}, {"content", {{{"type", "image_url"}}}}}}}}.dump()},
      {"stop a number", "/v1/chat/completions", json{{"messages", msgs}, {"stop", 3}}.dump()},
      {"n zero", "/v1/chat/completions", json{{"messages", msgs}, {"n", 0}}.dump()},
      {"top_logprobs without logprobs", "/v1/chat/completions",
       json{{"messages", msgs}, {"top_logprobs", 2}}.dump()},
      {"logit_bias not an id", "/v1/chat/completions",
       json{{"messages", msgs}, {"logit_bias", {{"abc", 1}}}}.dump()},
      {"logit_bias id out of range", "/v1/chat/completions",
       json{{"messages", msgs}, {"logit_bias", {{"99999999", 1}}}}.dump()},
      {"response_format unknown", "/v1/chat/completions",
       json{{"messages", msgs}, {"response_format", {{"type", "yaml"}}}}.dump()},
      {"schema with an unsupported keyword", "/v1/chat/completions",
       json{{"messages", msgs},
            {"response_format",
             {{"type", "json_schema"},
              {"json_schema", {{"schema", {{"type", "string"}, {"noSuchKeyword", 1}}}}}}}}
           .dump()},
      {"stream not a boolean", "/v1/chat/completions",
       json{{"messages", msgs}, {"stream", "yes"}}.dump()},
      {"tokenize without content", "/tokenize", json{{"text", "x"}}.dump()},
      {"detokenize bad ids", "/detokenize", json{{"tokens", {-1}}}.dump()},
      {"detokenize not ids", "/detokenize", json{{"tokens", "abc"}}.dump()},
      {"a number beyond a double", "/v1/completions",
       "{\"prompt\": \"x\", \"temperature\": 1e400}"},
      // Found by http_fuzz (tests/fuzz): the JSON parser's out_of_range escaped as a 500.
      {"http_fuzz: number overflow", "/v1/completions", FuzzBody("http_fuzz-number-overflow.txt")},
  };
  for (const Case& k : cases) {
    INFO(k.name);
    CheckOpenAiError(Post(*c, k.path, k.body), 400);
  }
  // 413: a body over the limit (8 MiB).
  {
    auto res = c->Post("/v1/completions", std::string(9u << 20, 'x'), "application/json");
    if (res) {  // the server may also close the connection early
      CHECK(res->status == 413);
      CheckOpenAiError(Reply{res->status, json::parse(res->body), res->body}, 413);
    }
  }
  // Still serving.
  const Reply ok = Post(*c, "/v1/chat/completions",
                        json{{"messages", msgs}, {"max_tokens", 3}, {"ignore_eos", true}});
  INFO(ok.text);
  CHECK(ok.status == 200);
  CHECK(ok.body["usage"]["completion_tokens"] == 3);
  CHECK(Metric(*c, "ember_requests_failed_total") >= static_cast<double>(cases.size()));
  CHECK(server.Stop() == 0);
}

TEST_CASE("serve: SIGTERM during a generation exits 0", "[serve]") {
  const std::string model = TinyChatModel();
  ServerProcess server;
  StartOrFail(server, {"-m", model, "-c", "16384", "-t", "1"});
  auto c = server.Client();
  std::thread t([&] {
    json endless = Completion("Keep going", 16000);
    endless["stream"] = true;
    httplib::Client sc("127.0.0.1", server.port());
    sc.set_read_timeout(60, 0);
    sc.Post("/v1/completions", endless.dump(), "application/json");
  });
  CHECK(WaitFor([&] { return Metric(*c, "ember_slots_busy") == 1; }, 30));
  const auto start = std::chrono::steady_clock::now();
  CHECK(server.Stop(30) == 0);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 10);
  t.join();
  CHECK(server.Log().find("ember serve: stopped") != std::string::npos);
}
