// `ember serve` driven over HTTP, as clients use it: every endpoint, the
// OpenAI shapes (whole and streamed), greedy output against ember_generate's
// and `ember run`'s, stop strings, logprobs, response_format, concurrent
// clients, the slot choice, reasoning_content. Each test starts its own
// server on a free loopback port (tests/serve/server_process.h) with the tiny
// qwen2 model (random weights, Qwen2's vocabulary and ChatML template).
// serve_robustness_test.cpp has disconnects, the queue, errors, shutdown.
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "serve/serve_helpers.h"
#include "support/cli_runner.h"
#include "support/schema_check.h"
#include "support/skip.h"

using ember::test::ServerProcess;
using namespace ember::test::serve;  // NOLINT: the helpers are this file's vocabulary

TEST_CASE("serve: health, models, tokenize, detokenize, metrics, page, 404", "[serve]") {
  const std::string model = TinyChatModel();
  ServerProcess server;
  StartOrFail(server, ServerArgs(model));
  auto c = server.Client();

  auto health = c->Get("/health");
  REQUIRE(health);
  CHECK(health->status == 200);
  CHECK(json::parse(health->body) == json{{"status", "ok"}});

  auto models = c->Get("/v1/models");
  REQUIRE(models);
  const json m = json::parse(models->body);
  CHECK(m["object"] == "list");
  REQUIRE(m["data"].size() == 1);
  CHECK(m["data"][0]["object"] == "model");
  CHECK(m["data"][0]["id"].get<std::string>().find(".gguf") != std::string::npos);

  const std::string text = "Hello world, how are you?";
  const Reply tok = Post(*c, "/tokenize", json{{"content", text}});
  REQUIRE(tok.status == 200);
  // The same ids as ember_tokenize without special tokens added.
  std::vector<int32_t> expected = PromptTokens(model, text);
  const Reply tok_special = Post(*c, "/tokenize", json{{"content", text}, {"add_special", true}});
  CHECK(tok_special.body["tokens"].get<std::vector<int32_t>>() == expected);
  CHECK(tok.body["tokens"].size() >= 5);
  const Reply detok = Post(*c, "/detokenize", json{{"tokens", tok.body["tokens"]}});
  REQUIRE(detok.status == 200);
  CHECK(detok.body["content"] == text);

  auto metrics = c->Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->status == 200);
  for (const char* name :
       {"ember_requests_total", "ember_prompt_tokens_total", "ember_tokens_generated_total",
        "ember_slots_busy", "ember_queue_length"}) {
    CHECK(metrics->body.find(std::string("# TYPE ") + name) != std::string::npos);
  }

  auto page = c->Get("/");
  REQUIRE(page);
  CHECK(page->status == 200);
  CHECK(page->body.find("/v1/chat/completions") != std::string::npos);

  auto missing = c->Get("/v1/nothing");
  REQUIRE(missing);
  Reply r{missing->status, json::parse(missing->body), missing->body};
  CheckOpenAiError(r, 404);
  CHECK(server.Stop() == 0);
}

TEST_CASE("serve: /v1/embeddings equals ember_session_embed, in both encodings", "[serve]") {
  const std::string model = TinyChatModel();
  ServerProcess server;
  StartOrFail(server, ServerArgs(model, {"--parallel", "2"}));
  auto c = server.Client();
  const std::vector<std::string> texts = {"Hello world, how are you?", "A second text"};
  const Reply r = Post(*c, "/v1/embeddings", json{{"input", texts}, {"model", "any"}});
  INFO(r.text);
  REQUIRE(r.status == 200);
  CHECK(r.body["object"] == "list");
  REQUIRE(r.body["data"].size() == 2);
  // The C API's vector for the same tokens (the server's pooling: the model's, mean here).
  ember_model* m = nullptr;
  REQUIRE(ember_model_load(model.c_str(), nullptr, &m) == EMBER_OK);
  ember_model_info info;
  REQUIRE(ember_model_get_info(m, &info) == EMBER_OK);
  ember_session_params sp = ember_session_default_params();
  sp.n_ctx = 64;
  ember_session* s = nullptr;
  REQUIRE(ember_session_create(m, &sp, &s) == EMBER_OK);
  int64_t n_tokens = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const json& d = r.body["data"][i];
    CHECK(d["object"] == "embedding");
    CHECK(d["index"] == i);
    const std::vector<float> got = d["embedding"].get<std::vector<float>>();
    const std::vector<int32_t> ids = PromptTokens(model, texts[i]);
    n_tokens += static_cast<int64_t>(ids.size());
    std::vector<float> want(static_cast<size_t>(info.n_embd));
    REQUIRE(ember_session_embed(s, ids.data(), ids.size(), EMBER_POOLING_MODEL, true, want.data(),
                                want.size()) == EMBER_OK);
    REQUIRE(got.size() == want.size());
    for (size_t j = 0; j < want.size(); ++j) CHECK(got[j] == Approx(want[j]).margin(1e-6));
  }
  CHECK(r.body["usage"]["prompt_tokens"] == n_tokens);
  ember_session_free(s);
  ember_model_free(m);
  // base64: the same floats' bytes; token ids as input: the same vector.
  const Reply b64 =
      Post(*c, "/v1/embeddings", json{{"input", texts[0]}, {"encoding_format", "base64"}});
  REQUIRE(b64.status == 200);
  const std::string enc = b64.body["data"][0]["embedding"].get<std::string>();
  CHECK(enc.size() == (static_cast<size_t>(info.n_embd) * 4 + 2) / 3 * 4);
  const Reply by_ids = Post(*c, "/v1/embeddings", json{{"input", PromptTokens(model, texts[0])}});
  REQUIRE(by_ids.status == 200);
  CHECK(by_ids.body["data"][0]["embedding"] == r.body["data"][0]["embedding"]);
  // Bad input: OpenAI's error shape, naming the field.
  for (const json& bad : {json{{"model", "x"}}, json{{"input", ""}}, json{{"input", json::array()}},
                          json{{"input", {1, -2}}}, json{{"input", {{"a"}, 3}}},
                          json{{"input", "x"}, {"encoding_format", "hex"}},
                          json{{"input", "x"}, {"dimensions", 3}}}) {
    INFO(bad.dump());
    const Reply e = Post(*c, "/v1/embeddings", bad);
    CheckOpenAiError(e, 400);
  }
  // A generation after embeddings on the same slots is unaffected.
  const Reply gen = Post(*c, "/v1/completions", json{{"prompt", "Hello"}, {"max_tokens", 3}});
  CHECK(gen.status == 200);
  CHECK(server.Stop() == 0);
}

TEST_CASE("serve: greedy completions and chat equal ember_generate's, with usage", "[serve]") {
  const std::string model = TinyChatModel();
  ServerProcess server;
  StartOrFail(server, ServerArgs(model));
  auto c = server.Client();

  const std::string prompt = "The capital of France is";
  const std::vector<int32_t> ids = PromptTokens(model, prompt);
  const Reply r = Post(*c, "/v1/completions", Completion(prompt, 12));
  INFO(r.text);
  REQUIRE(r.status == 200);
  CHECK(r.body["object"] == "text_completion");
  CHECK(r.body["id"].get<std::string>().rfind("cmpl-", 0) == 0);
  CHECK(r.body["created"].is_number_integer());
  CHECK(r.body["model"].is_string());
  REQUIRE(r.body["choices"].size() == 1);
  CHECK(r.body["choices"][0]["index"] == 0);
  CHECK(r.body["choices"][0]["finish_reason"] == "length");
  CHECK(r.body["choices"][0]["text"] == GreedyReference(model, ids, 12));
  CHECK(r.body["usage"]["prompt_tokens"] == ids.size());
  CHECK(r.body["usage"]["completion_tokens"] == 12);
  CHECK(r.body["usage"]["total_tokens"] == ids.size() + 12);
  // prompt as an array of one string: the same request
  json arr = Completion(prompt, 12);
  arr["prompt"] = json::array({prompt});
  CHECK(Post(*c, "/v1/completions", arr).body["choices"][0]["text"] ==
        r.body["choices"][0]["text"]);

  const std::string user = "Write a haiku about the sea.";
  const json chat = {{"messages", {{{"role", "user"}, {"content", user}}}},
                     {"max_completion_tokens", 10},
                     {"temperature", 0},
                     {"ignore_eos", true}};
  const Reply cr = Post(*c, "/v1/chat/completions", chat);
  INFO(cr.text);
  REQUIRE(cr.status == 200);
  CHECK(cr.body["object"] == "chat.completion");
  CHECK(cr.body["id"].get<std::string>().rfind("chatcmpl-", 0) == 0);
  const json& msg = cr.body["choices"][0]["message"];
  CHECK(msg["role"] == "assistant");
  const std::vector<int32_t> chat_ids = ChatTokens(model, user);
  CHECK(msg["content"] == GreedyReference(model, chat_ids, 10));
  CHECK(cr.body["usage"]["prompt_tokens"] == chat_ids.size());
  CHECK(cr.body["usage"]["completion_tokens"] == 10);
  CHECK(cr.body["choices"][0]["logprobs"].is_null());

  // n = 2: two choices, indexed; greedy, so equal.
  json two = chat;
  two["n"] = 2;
  const Reply nr = Post(*c, "/v1/chat/completions", two);
  REQUIRE(nr.status == 200);
  REQUIRE(nr.body["choices"].size() == 2);
  CHECK(nr.body["choices"][0]["index"] == 0);
  CHECK(nr.body["choices"][1]["index"] == 1);
  CHECK(nr.body["choices"][1]["message"]["content"] == msg["content"]);
  CHECK(nr.body["usage"]["completion_tokens"] == 20);

  // The conversation resent with one more turn reuses the slot's cache.
  const double reused_before = Metric(*c, "ember_prompt_tokens_reused_total");
  json more = chat;
  more["messages"].push_back({{"role", "assistant"}, {"content", msg["content"]}});
  more["messages"].push_back({{"role", "user"}, {"content", "Another one."}});
  REQUIRE(Post(*c, "/v1/chat/completions", more).status == 200);
  CHECK(Metric(*c, "ember_prompt_tokens_reused_total") - reused_before >=
        static_cast<double>(chat_ids.size()));
  CHECK(server.Stop() == 0);
}

TEST_CASE("serve: --draft-model and --lookup speculate without changing a reply", "[serve]") {
  const std::string model = TinyChatModel();
  // A repetitive prompt, so that lookup finds drafts; the model as its own
  // draft model, so that drafts are accepted.
  const std::string prompt = "one two three four one two three four one two three";
  const std::vector<int32_t> ids = PromptTokens(model, prompt);
  const std::string expected = GreedyReference(model, ids, 24);
  const std::vector<std::vector<std::string>> setups = {
      {"--lookup", "3"},
      {"--draft-model", model, "--draft-max", "4"},
      {"--draft-model", model, "--parallel", "2"},  // the draft sessions batched too
  };
  for (const auto& setup : setups) {
    INFO(setup[0] << " " << setup[1] << (setup.size() > 2 ? " " + setup[2] : std::string()));
    ServerProcess server;
    StartOrFail(server, ServerArgs(model, setup));
    CHECK(server.Log().find("speculative with") != std::string::npos);
    auto c = server.Client();
    const Reply r = Post(*c, "/v1/completions", Completion(prompt, 24));
    INFO(r.text);
    REQUIRE(r.status == 200);
    CHECK(r.body["choices"][0]["text"] == expected);
    CHECK(r.body["usage"]["completion_tokens"] == 24);
    // Two clients at once each get the same reply.
    std::vector<std::thread> clients;
    std::vector<std::string> texts(2);
    for (size_t i = 0; i < texts.size(); ++i) {
      clients.emplace_back([&, i] {
        auto ci = server.Client();
        auto res = ci->Post("/v1/completions", Completion(prompt, 24).dump(), "application/json");
        if (res && res->status == 200) texts[i] = json::parse(res->body)["choices"][0]["text"];
      });
    }
    for (auto& t : clients) t.join();
    for (const std::string& t : texts) CHECK(t == expected);
    // A request for logprobs is answered (generated without speculation).
    json lp = Completion(prompt, 8);
    lp["logprobs"] = 2;
    CHECK(Post(*c, "/v1/completions", lp).status == 200);
    CHECK(Metric(*c, "ember_draft_tokens_total") > 0);
    CHECK(Metric(*c, "ember_draft_tokens_accepted_total") > 0);
    CHECK(server.Stop() == 0);
  }
  // A draft model of another vocabulary: the server says so and exits.
  const std::string other = ember::test::BuildArchModel("llama");
  ServerProcess bad;
  std::string error;
  CHECK_FALSE(bad.Start(ServerArgs(model, {"--draft-model", other}), &error, 60));
  CHECK(error.find("the draft model has another vocabulary") != std::string::npos);
}

TEST_CASE("serve: `ember run --temp 0` and the server agree", "[serve]") {
  const std::string model = TinyChatModel();
  const std::string prompt = "Once upon a time";
  const auto run =
      ember::test::RunEmber("run -m " + model + " -p " + ember::test::ShellQuote(prompt) +
                            " -n 10 --temp 0 --ignore-eos -t 1 -c 512 2>/dev/null");
  REQUIRE(run.exit_code == 0);
  ServerProcess server;
  StartOrFail(server, ServerArgs(model));
  auto c = server.Client();
  json body = Completion(prompt, 10);
  const Reply r = Post(*c, "/v1/completions", body);
  REQUIRE(r.status == 200);
  std::string out = run.out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  CHECK(r.body["choices"][0]["text"] == out);
  body["echo"] = true;  // the prompt before the reply
  CHECK(Post(*c, "/v1/completions", body).body["choices"][0]["text"] == prompt + out);
}

TEST_CASE("serve: streaming (SSE) chunks, [DONE], usage, equal to the whole reply", "[serve]") {
  const std::string model = TinyChatModel();
  ServerProcess server;
  StartOrFail(server, ServerArgs(model));
  auto c = server.Client();

  const json whole = Post(*c, "/v1/completions", Completion("A stream of words", 16)).body;
  json stream = Completion("A stream of words", 16);
  stream["stream"] = true;
  stream["stream_options"] = {{"include_usage", true}};
  const Reply r = Post(*c, "/v1/completions", stream);
  REQUIRE(r.status == 200);
  bool done = false;
  const std::vector<json> events = SseEvents(r.text, &done);
  CHECK(done);
  REQUIRE(events.size() >= 2);
  std::string text;
  std::string finish;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    CHECK(events[i]["object"] == "text_completion");
    CHECK(events[i].contains("usage"));
    CHECK(events[i]["usage"].is_null());
    text += events[i]["choices"][0]["text"].get<std::string>();
    if (!events[i]["choices"][0]["finish_reason"].is_null()) {
      finish = events[i]["choices"][0]["finish_reason"];
    }
  }
  CHECK(text == whole["choices"][0]["text"]);
  CHECK(finish == "length");
  const json& usage_chunk = events.back();
  CHECK(usage_chunk["choices"].empty());
  CHECK(usage_chunk["usage"]["completion_tokens"] == 16);

  // Chat: the first chunk carries the role, the last the finish reason.
  json chat = {{"messages", {{{"role", "user"}, {"content", "Hi!"}}}},
               {"max_tokens", 8},
               {"temperature", 0},
               {"ignore_eos", true},
               {"stream", true}};
  const Reply cr = Post(*c, "/v1/chat/completions", chat);
  const std::vector<json> ce = SseEvents(cr.text, &done);
  CHECK(done);
  REQUIRE(ce.size() >= 2);
  CHECK(ce.front()["object"] == "chat.completion.chunk");
  CHECK(ce.front()["choices"][0]["delta"]["role"] == "assistant");
  CHECK(ce.back()["choices"][0]["finish_reason"] == "length");
  CHECK_FALSE(ce.back().contains("usage"));
  std::string ctext;
  for (const json& e : ce) {
    if (e["choices"][0]["delta"].contains("content")) {
      ctext += e["choices"][0]["delta"]["content"].get<std::string>();
    }
  }
  chat["stream"] = false;
  CHECK(ctext == Post(*c, "/v1/chat/completions", chat).body["choices"][0]["message"]["content"]);
}

TEST_CASE("serve: stop strings and max_tokens", "[serve]") {
  const std::string model = TinyChatModel();
  ServerProcess server;
  StartOrFail(server, ServerArgs(model));
  auto c = server.Client();
  const std::string full =
      Post(*c, "/v1/completions", Completion("Numbers and letters", 24)).body["choices"][0]["text"];
  REQUIRE(full.size() >= 8);
  // A stop string taken from the middle of the greedy reply (whole UTF-8
  // characters, at least 3 bytes): the reply ends just before its first occurrence.
  auto lead = [&](size_t i) { return i >= full.size() || (full[i] & 0xC0) != 0x80; };
  size_t from = full.size() / 2, to = from + 3;
  while (!lead(from)) --from;
  while (!lead(to)) ++to;
  const std::string stop = full.substr(from, to - from);
  json body = Completion("Numbers and letters", 24);
  body["stop"] = json::array({"\x01never", stop});
  const Reply r = Post(*c, "/v1/completions", body);
  REQUIRE(r.status == 200);
  CHECK(r.body["choices"][0]["text"] == full.substr(0, full.find(stop)));
  CHECK(r.body["choices"][0]["finish_reason"] == "stop");
  body["stop"] = stop;  // a plain string too
  CHECK(Post(*c, "/v1/completions", body).body["choices"][0]["text"] ==
        full.substr(0, full.find(stop)));

  // logit_bias 100 forces a token; the same seed draws the same reply.
  const int32_t forced = Post(*c, "/tokenize", json{{"content", " hello"}}).body["tokens"][0];
  json biased = Completion("Numbers and letters", 4);
  biased["logit_bias"] = {{std::to_string(forced), 100}};
  biased["temperature"] = 1.0;
  biased["logprobs"] = 0;
  const json forced_choice = Post(*c, "/v1/completions", biased).body["choices"][0];
  const json& forced_tokens = forced_choice["logprobs"]["tokens"];
  REQUIRE(forced_tokens.size() == 4);
  for (const json& t : forced_tokens) {
    CHECK(t == forced_tokens[0]);
    CHECK(t.get<std::string>().find("hello") != std::string::npos);
  }
  json seeded = Completion("Numbers and letters", 12);
  seeded["temperature"] = 1.0;
  seeded["seed"] = 5;
  const Reply s1 = Post(*c, "/v1/completions", seeded);
  CHECK(Post(*c, "/v1/completions", seeded).body["choices"][0]["text"] ==
        s1.body["choices"][0]["text"]);

  const Reply one = Post(*c, "/v1/completions", Completion("Numbers and letters", 1));
  CHECK(one.body["usage"]["completion_tokens"] == 1);
  CHECK(one.body["choices"][0]["finish_reason"] == "length");
}

TEST_CASE("serve: logprobs in the chat and the completions shapes", "[serve]") {
  const std::string model = TinyChatModel();
  ServerProcess server;
  StartOrFail(server, ServerArgs(model));
  auto c = server.Client();
  const json chat = {{"messages", {{{"role", "user"}, {"content", "Hello"}}}},
                     {"max_tokens", 6},
                     {"temperature", 0},
                     {"ignore_eos", true},
                     {"logprobs", true},
                     {"top_logprobs", 3}};
  const Reply r = Post(*c, "/v1/chat/completions", chat);
  INFO(r.text);
  REQUIRE(r.status == 200);
  const json& content = r.body["choices"][0]["logprobs"]["content"];
  REQUIRE(content.size() == 6);
  std::string joined;
  for (const json& t : content) {
    CHECK(t["logprob"].get<double>() <= 0);
    REQUIRE(t["top_logprobs"].size() == 3);
    // Greedy: the chosen token is the most likely one.
    CHECK(t["top_logprobs"][0]["token"] == t["token"]);
    CHECK(t["top_logprobs"][0]["logprob"].get<double>() ==
          Approx(t["logprob"].get<double>()).margin(1e-4));
    CHECK(t["bytes"].size() == t["token"].get<std::string>().size());
    joined += t["token"].get<std::string>();
  }
  CHECK(joined == r.body["choices"][0]["message"]["content"]);

  json comp = Completion("Hello", 5);
  comp["logprobs"] = 2;
  const Reply cr = Post(*c, "/v1/completions", comp);
  REQUIRE(cr.status == 200);
  const json& lp = cr.body["choices"][0]["logprobs"];
  REQUIRE(lp["tokens"].size() == 5);
  CHECK(lp["token_logprobs"].size() == 5);
  CHECK(lp["top_logprobs"].size() == 5);
  CHECK(lp["top_logprobs"][0].size() <= 2);
  CHECK(lp["text_offset"][0] == 0);
  CHECK(lp["text_offset"][1] == lp["tokens"][0].get<std::string>().size());
  // Streamed: the same tokens, offsets counting on from chunk to chunk.
  comp["stream"] = true;
  const Reply sr = Post(*c, "/v1/completions", comp);
  bool done = false;
  size_t offset = 0;
  std::vector<std::string> streamed;
  for (const json& e : SseEvents(sr.text, &done)) {
    const json& l = e["choices"][0]["logprobs"];
    if (l.is_null()) continue;
    for (size_t k = 0; k < l["tokens"].size(); ++k) {
      CHECK(l["text_offset"][k] == offset);
      offset += l["tokens"][k].get<std::string>().size();
      streamed.push_back(l["tokens"][k]);
    }
  }
  CHECK(done);
  CHECK(streamed == lp["tokens"].get<std::vector<std::string>>());
}

TEST_CASE("serve: response_format json_schema and json_object", "[serve]") {
  const std::string model = TinyChatModel();
  ServerProcess server;
  StartOrFail(server, ServerArgs(model));
  auto c = server.Client();
  const json schema = {{"type", "object"},
                       {"properties",
                        {{"name", {{"type", "string"}, {"maxLength", 8}}},
                         {"age", {{"type", "integer"}, {"minimum", 0}, {"maximum", 150}}}}},
                       {"required", {"name", "age"}},
                       {"additionalProperties", false}};
  for (int seed = 1; seed <= 3; ++seed) {
    const json body = {
        {"messages", {{{"role", "user"}, {"content", "A person as JSON."}}}},
        {"max_tokens", 200},
        {"temperature", 1.0},
        {"seed", seed},
        {"response_format",
         {{"type", "json_schema"}, {"json_schema", {{"name", "person"}, {"schema", schema}}}}}};
    const Reply r = Post(*c, "/v1/chat/completions", body);
    INFO(r.text);
    REQUIRE(r.status == 200);
    CHECK(r.body["choices"][0]["finish_reason"] == "stop");
    const auto doc = nlohmann::ordered_json::parse(
        r.body["choices"][0]["message"]["content"].get<std::string>());
    const nlohmann::ordered_json s = schema;
    CHECK(ember::test::SchemaViolation(doc, s, s) == "");
  }
  const json obj = {{"messages", {{{"role", "user"}, {"content", "JSON please"}}}},
                    {"max_tokens", 200},
                    {"seed", 7},
                    {"response_format", {{"type", "json_object"}}}};
  const Reply r = Post(*c, "/v1/chat/completions", obj);
  REQUIRE(r.status == 200);
  CHECK(json::parse(r.body["choices"][0]["message"]["content"].get<std::string>()).is_object());
}

TEST_CASE("serve: concurrent clients get what each gets alone, nothing mixed", "[serve]") {
  const std::string model = TinyChatModel();
  ServerProcess server;
  StartOrFail(server, ServerArgs(model, {"--parallel", "2"}));
  const std::vector<std::string> prompts = {"Alpha beta gamma", "The quick brown fox",
                                            "One two three four", "Lorem ipsum dolor"};
  std::vector<std::string> alone;
  {
    auto c = server.Client();
    for (const std::string& p : prompts) {
      const Reply r = Post(*c, "/v1/completions", Completion(p, 20));
      REQUIRE(r.status == 200);
      alone.push_back(r.body["choices"][0]["text"]);
    }
  }
  // Each client twice at once, one of them streaming, all at the same time.
  std::vector<std::string> together(prompts.size() * 2);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < together.size(); ++i) {
    threads.emplace_back([&, i] {
      httplib::Client c("127.0.0.1", server.port());
      c.set_read_timeout(300, 0);
      json body = Completion(prompts[i % prompts.size()], 20);
      const bool stream = i >= prompts.size();
      body["stream"] = stream;
      auto res = c.Post("/v1/completions", body.dump(), "application/json");
      if (!res || res->status != 200) return;
      if (!stream) {
        together[i] = json::parse(res->body)["choices"][0]["text"];
        return;
      }
      bool done = false;
      std::string text;
      for (const json& e : SseEvents(res->body, &done)) {
        text += e["choices"][0]["text"].get<std::string>();
      }
      if (done) together[i] = text;
    });
  }
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < together.size(); ++i) {
    INFO("client " << i);
    CHECK(together[i] == alone[i % prompts.size()]);
  }
  auto c = server.Client();
  CHECK(Metric(*c, "ember_slots_total") == 2);
  // A reply is sent when its job ends, just before the worker frees the slot.
  CHECK(WaitFor([&] { return Metric(*c, "ember_slots_busy") == 0; }, 30));
}

TEST_CASE("serve: a resent conversation goes to the slot that holds it", "[serve]") {
  const std::string model = TinyChatModel();
  ServerProcess server;
  StartOrFail(server, ServerArgs(model, {"--parallel", "2"}));
  auto c = server.Client();
  auto chat = [](const std::string& user) {
    return json{{"messages", {{{"role", "user"}, {"content", user}}}},
                {"max_tokens", 6},
                {"temperature", 0},
                {"ignore_eos", true}};
  };
  const json a = chat("A long first question about the sea, the waves and the wind.");
  const Reply ra = Post(*c, "/v1/chat/completions", a);  // slot 0
  REQUIRE(ra.status == 200);
  REQUIRE(WaitFor([&] { return Metric(*c, "ember_slots_busy") == 0; }, 30));
  // Another client: the slot idle the longest (slot 1) takes it.
  REQUIRE(Post(*c, "/v1/chat/completions", chat("Something else entirely.")).status == 200);
  REQUIRE(WaitFor([&] { return Metric(*c, "ember_slots_busy") == 0; }, 30));
  // A's conversation, resent with a new turn, goes back to slot 0: all of
  // A's prompt is reused, not only the template's opening both share.
  json more = a;
  more["messages"].push_back(ra.body["choices"][0]["message"]);
  more["messages"].push_back({{"role", "user"}, {"content", "And then?"}});
  const double before = Metric(*c, "ember_prompt_tokens_reused_total");
  REQUIRE(Post(*c, "/v1/chat/completions", more).status == 200);
  const int64_t a_prompt = ra.body["usage"]["prompt_tokens"];
  CHECK(Metric(*c, "ember_prompt_tokens_reused_total") - before >= static_cast<double>(a_prompt));
}

TEST_CASE("serve: the real SmolLM2 model, greedy chat equals ember_generate's", "[serve][real]") {
  const std::string model = ember::test::ModelPath("SmolLM2-135M-Instruct.Q4_1.gguf");
  if (model.empty()) EMBER_SKIP("SmolLM2-135M-Instruct.Q4_1.gguf is not in the model cache");
  ServerProcess server;
  StartOrFail(server, ServerArgs(model));
  auto c = server.Client();
  const std::string user = "What is the capital of France?";
  const Reply r = Post(*c, "/v1/chat/completions",
                       json{{"messages", {{{"role", "user"}, {"content", user}}}},
                            {"max_tokens", 12},
                            {"temperature", 0},
                            {"ignore_eos", true}});
  INFO(r.text);
  REQUIRE(r.status == 200);
  const std::string content = r.body["choices"][0]["message"]["content"];
  CHECK(content == GreedyReference(model, ChatTokens(model, user), 12));
  CHECK(content.find("Paris") != std::string::npos);
}

TEST_CASE("serve: a reasoning template's <think> section becomes reasoning_content", "[serve]") {
  // The tiny qwen3 model with Qwen3's template (which has <think> markers); a
  // grammar (llama-server's `grammar` field) makes its random weights write a
  // reply with a reasoning section.
  ember::test::TinyModelSpec spec = ember::test::ArchSpec("qwen3");
  spec.string_keys["tokenizer.chat_template"] =
      ember::test::ReadFile(ember::test::SharedDir() + "/templates/Qwen-Qwen3-0.6B.jinja");
  const std::string model = ember::test::TempPath("qwen3_think.gguf");
  REQUIRE(ember::test::BuildTinyModel(spec, model).ok());
  ServerProcess server;
  StartOrFail(server, ServerArgs(model));
  auto c = server.Client();
  json body = {{"messages", {{{"role", "user"}, {"content", "Why?"}}}},
               {"max_tokens", 60},
               {"grammar", "root ::= \"<think>\\nLet me see.\\n</think>\\n\\nBecause.\""}};
  const Reply r = Post(*c, "/v1/chat/completions", body);
  INFO(r.text);
  REQUIRE(r.status == 200);
  CHECK(r.body["choices"][0]["message"]["reasoning_content"] == "Let me see.");
  CHECK(r.body["choices"][0]["message"]["content"] == "Because.");
  body["stream"] = true;
  const Reply s = Post(*c, "/v1/chat/completions", body);
  bool done = false;
  std::string reasoning, content;
  for (const json& e : SseEvents(s.text, &done)) {
    const json& d = e["choices"][0]["delta"];
    if (d.contains("reasoning_content")) reasoning += d["reasoning_content"].get<std::string>();
    if (d.contains("content")) content += d["content"].get<std::string>();
  }
  CHECK(done);
  CHECK(reasoning == "Let me see.");
  CHECK(content == "Because.");
}

TEST_CASE("serve: --help and flag errors", "[serve][cli]") {
  const auto help = ember::test::RunEmber("serve --help");
  CHECK(help.exit_code == 0);
  for (const char* flag : {"--host", "--port", "--parallel", "--ctx-size", "--api-key", "--queue",
                           "--threads", "--temp", "--pooling"}) {
    CHECK(help.out.find(flag) != std::string::npos);
  }
  ember::test::RequireCleanError(ember::test::RunEmber("serve --port 70000 -m x.gguf"), "--port");
  ember::test::RequireCleanError(ember::test::RunEmber("serve --pooling none -m x.gguf"),
                                 "one per input");
  ember::test::RequireCleanError(ember::test::RunEmber("serve --pooling max -m x.gguf"),
                                 "--pooling must be");
  ember::test::RequireCleanError(
      ember::test::RunEmber("serve --port 0 -m " + ember::test::TempPath("missing.gguf")),
      "missing.gguf");
}
