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

#include "serve/connection_watch.h"
#include "serve/serve_helpers.h"
#include "support/cli_runner.h"
#include "support/skip.h"
#include "support/test_paths.h"

using ember::test::ServerProcess;
using namespace ember::test::serve;  // NOLINT: the helpers are this file's vocabulary

namespace {

// The body of an input http_fuzz found (tests/data/fuzz): the route is its first line.
std::string FuzzBody(const std::string& name) {
  const std::string in =
      ember::test::ReadFile(ember::test::SourceDir() + "/tests/data/fuzz/" + name);
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

TEST_CASE("serve: a connection's state in the kernel's TCP table", "[serve]") {
  using serve::ConnectionWatch;
  const char* v4 =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid\n"
      "   0: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0\n"
      "   1: 0100007F:1F90 0100007F:C46C 01 00000000:00000000 00:00000000 00000000     0\n"
      "   2: 0100007F:1F90 0100007F:C46D 08 00000000:00000000 00:00000000 00000000     0\n"
      "   3: 0100007F:1F90 0200000A:C46C 01 00000000:00000000 00:00000000 00000000     0\n";
  ConnectionWatch::Key k;
  k.local_port = 8080;
  k.remote_port = 0xC46C;
  const uint8_t loopback[4] = {127, 0, 0, 1};
  std::copy(loopback, loopback + 4, k.remote.begin());
  CHECK(ConnectionWatch::StateIn(v4, k) == 1);  // established
  k.remote_port = 0xC46D;
  CHECK(ConnectionWatch::StateIn(v4, k) == 8);  // the client closed: CLOSE_WAIT
  k.remote_port = 0xC46E;
  CHECK(ConnectionWatch::StateIn(v4, k) == -1);  // not there
  const uint8_t other[4] = {10, 0, 0, 2};        // the same ports from another host
  std::copy(other, other + 4, k.remote.begin());
  k.remote_port = 0xC46C;
  CHECK(ConnectionWatch::StateIn(v4, k) == 1);
  k.local_port = 8081;
  CHECK(ConnectionWatch::StateIn(v4, k) == -1);
  CHECK(ConnectionWatch::StateIn("", k) == -1);
  CHECK(ConnectionWatch::StateIn("header only\n   0: garbage", k) == -1);
  // IPv6: ::ffff:127.0.0.1, four words.
  const char* v6 =
      "  sl  local_address                         remote_address                        st\n"
      "   0: 0000000000000000FFFF00000100007F:1F90 0000000000000000FFFF00000100007F:D000 08\n";
  ConnectionWatch::Key k6;
  k6.v6 = true;
  k6.local_port = 8080;
  k6.remote_port = 0xD000;
  const uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 127, 0, 0, 1};
  std::copy(mapped, mapped + 16, k6.remote.begin());
  CHECK(ConnectionWatch::StateIn(v6, k6) == 8);
}

TEST_CASE("serve: a non-streamed client that hangs up stops its generation", "[serve]") {
  const std::string model = TinyChatModel();
  ServerProcess server;
  StartOrFail(server, {"-m", model, "-c", "16384", "-t", "1"});
  auto c = server.Client();
  // A whole-reply request for 16000 tokens, whose client gives up after
  // 300 ms: the server notices within ~100 ms of the hang-up and cancels.
  std::thread gives_up([&] {
    httplib::Client h("127.0.0.1", server.port());
    h.set_read_timeout(0, 300 * 1000);
    h.Post("/v1/completions", Completion("Keep going", 16000).dump(), "application/json");
  });
  gives_up.join();
  CHECK(WaitFor([&] { return Metric(*c, "ember_requests_cancelled_total") == 1; }, 30));
  CHECK(WaitFor([&] { return Metric(*c, "ember_slots_busy") == 0; }, 30));
  CHECK(Metric(*c, "ember_tokens_generated_total") < 16000);
  // A client that waits gets its whole reply, on the same server.
  const Reply r = Post(*c, "/v1/completions", Completion("Served", 8));
  CHECK(r.status == 200);
  CHECK(Metric(*c, "ember_requests_cancelled_total") == 1);
  CHECK(server.Stop() == 0);
}

TEST_CASE("serve: every route but /health and / answers 503 while the model loads",
          "[serve][real]") {
  // A real 0.5B model takes a second or more to load and repack: the port is
  // open meanwhile. Asked the moment the port is known; a load that finished
  // before that is tried again (three times at most).
  const std::string model = ember::test::ModelPath("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
  if (model.empty()) {
    EMBER_SKIP("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf is not in the model cache");
  }
  bool seen_loading = false;
  for (int attempt = 0; attempt < 3 && !seen_loading; ++attempt) {
    ServerProcess server;
    Reply health, completion, models;
    std::string error;
    const bool ok = server.Start({"-m", model, "-t", "1"}, &error, 300, [&](int port) {
      httplib::Client c("127.0.0.1", port);
      c.set_read_timeout(30, 0);
      health = ToReply(c.Get("/health"));
      completion =
          ToReply(c.Post("/v1/completions", Completion("Hi", 4).dump(), "application/json"));
      models = ToReply(c.Get("/v1/models"));
    });
    INFO(error);
    REQUIRE(ok);
    if (health.status == 200) continue;  // already loaded
    seen_loading = true;
    INFO(health.text);
    CHECK(health.status == 503);
    CHECK(health.body.value("status", "") == "loading");
    // The request asked while loading may have been answered after the load
    // ended; one that got 503 says why, in OpenAI's shape.
    if (completion.status != 200) {
      CheckOpenAiError(completion, 503);
      CHECK(completion.body["error"]["message"] == "the model is loading; retry shortly");
    }
    CHECK((models.status == 503 || models.status == 200));
    // Once ready, the same requests are served.
    auto c = server.Client();
    CHECK(Get(*c, "/health").status == 200);
    CHECK(Post(*c, "/v1/completions", Completion("Hi", 4)).status == 200);
    CHECK(server.Stop() == 0);
  }
  CHECK(seen_loading);
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
