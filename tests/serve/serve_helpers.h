// Helpers of the server's tests (serve_test.cpp, serve_robustness_test.cpp):
// starting a server on the tiny qwen2 model, posting JSON, parsing SSE, the
// reference greedy output of ember_generate, reading /metrics.
#pragma once

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "ember.h"
#include "serve/server_process.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

namespace ember::test::serve {

using json = nlohmann::json;

inline std::string TinyChatModel() {
  const std::string m = ember::test::BuildArchModel("qwen2");
  REQUIRE(!m.empty());
  return m;
}

inline std::vector<std::string> ServerArgs(const std::string& model,
                                           std::vector<std::string> more = {}) {
  std::vector<std::string> a = {"-m", model, "-c", "512", "-t", "1"};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

inline void StartOrFail(ServerProcess& s, const std::vector<std::string>& args) {
  std::string error;
  const bool ok = s.Start(args, &error);
  INFO(error);
  REQUIRE(ok);
}

struct Reply {
  int status = 0;
  json body;
  std::string text;  // the raw body
};

// A reply as status, raw body and (when it is JSON) the parsed body.
inline Reply ToReply(const httplib::Result& res) {
  Reply r;
  REQUIRE(res);
  r.status = res->status;
  r.text = res->body;
  if (res->get_header_value("Content-Type").find("application/json") == 0) {
    r.body = json::parse(res->body);
  }
  return r;
}

inline Reply Post(httplib::Client& c, const std::string& path, const std::string& body,
                  const httplib::Headers& headers = {}) {
  return ToReply(c.Post(path.c_str(), headers, body, "application/json"));
}

inline Reply Get(httplib::Client& c, const std::string& path) {
  return ToReply(c.Get(path.c_str()));
}

inline Reply Post(httplib::Client& c, const std::string& path, const json& body,
                  const httplib::Headers& headers = {}) {
  return Post(c, path, body.dump(), headers);
}

// The data events of an SSE body; *done tells whether it ended with [DONE].
inline std::vector<json> SseEvents(const std::string& body, bool* done) {
  std::vector<json> events;
  *done = false;
  size_t start = 0;
  while (start < body.size()) {
    size_t end = body.find("\n\n", start);
    if (end == std::string::npos) end = body.size();
    const std::string event = body.substr(start, end - start);
    start = end + 2;
    if (event.rfind("data: ", 0) != 0) continue;  // ": ping" comments
    const std::string data = event.substr(6);
    CHECK_FALSE(*done);  // nothing after [DONE]
    if (data == "[DONE]") {
      *done = true;
    } else {
      events.push_back(json::parse(data));
    }
  }
  return events;
}

inline void CheckOpenAiError(const Reply& r, int status) {
  INFO(r.text);
  CHECK(r.status == status);
  REQUIRE(r.body.is_object());
  REQUIRE(r.body.contains("error"));
  const json& e = r.body["error"];
  CHECK(e["message"].is_string());
  CHECK(!e["message"].get<std::string>().empty());
  CHECK(e["type"].is_string());
  CHECK(e.contains("param"));
  CHECK(e.contains("code"));
}

// Greedy text of ember_generate on `prompt` (the reference the server must equal).
inline std::string GreedyReference(const std::string& model_path,
                                   const std::vector<int32_t>& prompt, int n_predict) {
  ember_model* model = nullptr;
  REQUIRE(ember_model_load(model_path.c_str(), nullptr, &model) == EMBER_OK);
  ember_session_params sp = ember_session_default_params();
  sp.n_ctx = 512;
  sp.n_threads = 1;
  ember_session* s = nullptr;
  REQUIRE(ember_session_create(model, &sp, &s) == EMBER_OK);
  ember_generate_params gp = ember_generate_default_params();
  gp.n_predict = n_predict;
  gp.temperature = 0;
  gp.ignore_eos = true;
  std::string text;
  auto on_piece = [](const char* p, size_t n, int32_t, void* u) {
    static_cast<std::string*>(u)->append(p, n);
    return true;
  };
  REQUIRE(ember_generate(s, prompt.data(), prompt.size(), &gp, on_piece, &text, nullptr) ==
          EMBER_OK);
  ember_session_free(s);
  ember_model_free(model);
  return text;
}

inline std::vector<int32_t> PromptTokens(const std::string& model_path, const std::string& text) {
  ember_model_params mp = ember_model_default_params();
  mp.vocab_only = true;
  ember_model* model = nullptr;
  REQUIRE(ember_model_load(model_path.c_str(), &mp, &model) == EMBER_OK);
  std::vector<int32_t> ids(4096);
  size_t n = 0;
  REQUIRE(ember_tokenize(model, text.data(), text.size(), true, true, ids.data(), ids.size(), &n) ==
          EMBER_OK);
  ids.resize(n);
  ember_model_free(model);
  return ids;
}

inline std::vector<int32_t> ChatTokens(const std::string& model_path, const std::string& user) {
  ember_model_params mp = ember_model_default_params();
  mp.vocab_only = true;
  ember_model* model = nullptr;
  REQUIRE(ember_model_load(model_path.c_str(), &mp, &model) == EMBER_OK);
  ember_chat_message m{"user", user.c_str()};
  std::vector<int32_t> ids(4096);
  size_t n = 0;
  REQUIRE(ember_chat_prompt_tokens(model, nullptr, nullptr, &m, 1, true, ids.data(), ids.size(),
                                   &n) == EMBER_OK);
  ids.resize(n);
  ember_model_free(model);
  return ids;
}

inline json Completion(const std::string& prompt, int max_tokens) {
  return {{"prompt", prompt}, {"max_tokens", max_tokens}, {"temperature", 0}, {"ignore_eos", true}};
}

// The value of a metric on the /metrics page (-1 when absent).
inline double Metric(httplib::Client& c, const std::string& name) {
  auto r = c.Get("/metrics");
  REQUIRE(r);
  REQUIRE(r->status == 200);
  const std::string key = "\n" + name + " ";
  const size_t at = r->body.find(key);
  if (at == std::string::npos) return -1;
  return std::atof(r->body.c_str() + at + key.size());
}

// Posts a streamed completion and reads it until `hang_up()` says to stop
// (checked at each piece received, after the first data event), then hangs
// up. Returns once it has hung up (or the stream ended).
inline void StreamAndHangUp(int port, const json& body, const std::function<bool()>& hang_up) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(60, 0);
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  std::string got;
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    got.append(data, n);
    if (got.find("data: {") == std::string::npos) return true;
    while (!hang_up()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return false;  // hang up
  };
  c.send(req);
}

inline void StreamAndHangUp(int port, const json& body) {
  StreamAndHangUp(port, body, [] { return true; });
}

inline bool WaitFor(const std::function<bool()>& cond, double seconds) {
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
         seconds) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return cond();
}

}  // namespace ember::test::serve
