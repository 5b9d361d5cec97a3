#include "serve/routes.h"

#include <chrono>
#include <ctime>
#include <random>

#include "serve/api_error.h"
#include "serve/connection_watch.h"
#include "serve/embeddings.h"
#include "serve/openai_response.h"
#include "serve/web_page.h"

namespace serve {
namespace {

using json = nlohmann::json;

void SendJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(Dump(body), "application/json");
}

void SendError(httplib::Response& res, const ApiError& e) { SendJson(res, e.status, ErrorBody(e)); }

std::string RandomId(const char* prefix) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(rng()));
  return std::string(prefix) + buf;
}

// A handler whose ApiErrors become OpenAI-shaped responses.
template <class Fn>
httplib::Server::Handler Guard(ServerState& state, Fn fn) {
  return [&state, fn](const httplib::Request& req, httplib::Response& res) {
    try {
      fn(req, res);
    } catch (const ApiError& e) {
      state.metrics.requests_failed++;
      SendError(res, e);
    }
  };
}

// Queues a request's jobs (all or none) and counts it; a full queue is a 429,
// a stopping server a 503.
void Submit(ServerState& state, const std::vector<std::shared_ptr<Job>>& jobs) {
  switch (state.pool.load()->Submit(jobs)) {
    case SlotPool::SubmitResult::kOk:
      break;
    case SlotPool::SubmitResult::kQueueFull:
      state.metrics.rejected_queue_full++;
      throw ApiError{429, "the server is busy: its queue is full; retry later", "",
                     "rate_limit_error", "queue_full"};
    case SlotPool::SubmitResult::kStopping:
      throw ApiError{503, "the server is shutting down", "", "unavailable_error", ""};
  }
  state.metrics.requests++;
}

// What one streamed request keeps between calls of its content provider.
struct Stream {
  ServerState* state;
  ResponseMeta meta;
  std::shared_ptr<Channel> channel;
  std::vector<std::shared_ptr<Job>> jobs;
  std::vector<bool> started, finished;
  std::vector<size_t> text_offset;       // completions' logprobs: bytes of each choice sent so far
  std::vector<ThinkSplitter> splitters;  // one per choice, when splitting reasoning
  int64_t prompt_tokens = 0;
  bool include_usage = false;
  std::string echo;  // completions' echo: sent before the first token
  std::chrono::steady_clock::time_point last_write = std::chrono::steady_clock::now();
  bool ended = false;
};

bool Write(httplib::DataSink& sink, const std::string& s) { return sink.write(s.data(), s.size()); }

bool WriteEvent(httplib::DataSink& sink, const json& j) {
  return Write(sink, "data: " + Dump(j) + "\n\n");
}

// One step of an SSE stream: waits briefly for news from the jobs, then
// sends it. Returns false to drop the connection (the client is gone).
bool StreamStep(Stream& st, httplib::DataSink& sink) {
  if (!sink.is_writable()) return false;
  struct Out {
    int index;
    std::string text;
    std::string reasoning;
    json logprobs;
    std::string finish;
    bool first;
  };
  std::vector<Out> outs;
  std::string error;
  bool all_done = true;
  int64_t completion = 0;
  bool cancelled = false;
  {
    std::unique_lock<std::mutex> lock(st.channel->mu);
    auto news = [&] {
      for (const auto& j : st.jobs) {
        if (j->done || j->text.size() > j->text_sent || j->tokens.size() > j->tokens_sent) {
          return true;
        }
      }
      return false;
    };
    st.channel->cv.wait_for(lock, std::chrono::milliseconds(200), news);
    for (size_t i = 0; i < st.jobs.size(); ++i) {
      Job& j = *st.jobs[i];
      all_done = all_done && j.done;
      completion += j.stats.n_gen;
      if (!j.error.empty()) error = j.error;
      cancelled = cancelled || j.cancelled;
      if (st.finished[i]) continue;
      Out o{j.index, j.text.substr(j.text_sent), "", nullptr, "", !st.started[i]};
      if (!st.splitters.empty()) {
        std::string piece = std::move(o.text);
        o.text.clear();
        st.splitters[i].Feed(piece, &o.reasoning, &o.text);
        if (j.done) st.splitters[i].Finish(&o.reasoning, &o.text);
      }
      if (j.n_top_logprobs >= 0 && j.tokens.size() > j.tokens_sent) {
        o.logprobs = st.meta.chat ? ChatLogprobs(j.tokens, j.tokens_sent, j.tokens.size())
                                  : CompletionLogprobs(j.tokens, j.tokens_sent, j.tokens.size(),
                                                       st.text_offset[i]);
        for (size_t t = j.tokens_sent; t < j.tokens.size(); ++t) {
          st.text_offset[i] += j.tokens[t].piece.size();
        }
      }
      if (!st.meta.chat && o.first) o.text = st.echo + o.text;
      j.text_sent = j.text.size();
      j.tokens_sent = j.tokens.size();
      if (j.done && j.error.empty() && !j.cancelled) o.finish = FinishReason(j.stats);
      if (o.text.empty() && o.reasoning.empty() && o.finish.empty() && o.logprobs.is_null() &&
          !o.first) {
        continue;
      }
      st.started[i] = true;
      if (j.done) st.finished[i] = true;
      outs.push_back(std::move(o));
    }
  }
  // OpenAI's shape, whatever arrived since the last look: a chat stream
  // opens with a chunk that only names the role, and the finish reason comes
  // in a chunk of its own after the last text.
  auto write = [&](const Out& o, const std::string& text, const std::string& reasoning, bool first,
                   const json& logprobs, const std::string& finish) {
    return WriteEvent(sink, StreamChunk(st.meta, o.index, text, reasoning, first, logprobs, finish,
                                        st.include_usage));
  };
  for (const Out& o : outs) {
    bool first = o.first;
    if (first && st.meta.chat) {
      if (!write(o, "", "", true, nullptr, "")) return false;
      first = false;
    }
    const bool body = !o.text.empty() || !o.reasoning.empty() || !o.logprobs.is_null();
    if ((body || first) && !write(o, o.text, o.reasoning, first, o.logprobs, "")) return false;
    if (!o.finish.empty() && !write(o, "", "", false, nullptr, o.finish)) return false;
    st.last_write = std::chrono::steady_clock::now();
  }
  if (all_done) {
    if (!error.empty() || cancelled) {
      ApiError e{error.empty() ? 503 : 500, error.empty() ? "the server is shutting down" : error,
                 "", error.empty() ? "unavailable_error" : "server_error", ""};
      WriteEvent(sink, ErrorBody(e));
    } else if (st.include_usage) {
      WriteEvent(sink, UsageChunk(st.meta, st.prompt_tokens, completion));
    }
    Write(sink, "data: [DONE]\n\n");
    st.ended = true;
    sink.done();
    return true;
  }
  // Nothing to say for a while (a long prompt, a wait in the queue): an SSE
  // comment, which clients ignore, both keeps proxies from timing out and
  // finds out whether the client is still there (a write to a closed
  // connection fails).
  if (outs.empty() && std::chrono::steady_clock::now() - st.last_write > std::chrono::seconds(1)) {
    if (!Write(sink, ": ping\n\n")) return false;
    st.last_write = std::chrono::steady_clock::now();
  }
  return true;
}

void Generate(ServerState& state, const httplib::Request& req, httplib::Response& res, bool chat) {
  const json body = ParseBody(req.body);
  GenerationRequest gr = ParseGenerationRequest(body, chat, state.defaults);
  auto channel = std::make_shared<Channel>();
  std::vector<std::shared_ptr<Job>> jobs;
  for (int i = 0; i < gr.n; ++i) {
    auto job = std::make_shared<Job>();
    job->index = i;
    job->prompt = gr.prompt;
    job->n_predict = gr.n_predict;
    job->sampler = MakeSampler(gr, state.defaults, i);
    job->stop = gr.stop;
    job->ignore_eos = gr.ignore_eos;
    job->n_top_logprobs = gr.n_top_logprobs;
    job->channel = channel;
    jobs.push_back(std::move(job));
  }
  Submit(state, jobs);
  ResponseMeta meta;
  meta.chat = chat;
  meta.split_reasoning = gr.split_reasoning;
  meta.starts_in_reasoning = gr.starts_in_reasoning;
  meta.engine_model = state.defaults.model;
  meta.id = RandomId(chat ? "chatcmpl-" : "cmpl-");
  meta.created = static_cast<int64_t>(std::time(nullptr));
  meta.model = state.model_id;
  const int64_t n_prompt = static_cast<int64_t>(gr.prompt.size());
  const std::string echo = gr.echo ? gr.prompt_text : "";

  if (!gr.stream) {
    // A non-streamed reply: nothing is written until it is complete, so the
    // connection is watched while the jobs run (serve/connection_watch.h): a
    // client that leaves cancels them, as a stream's disconnect does.
    const ConnectionWatch watch(req);
    const auto all_done = [&] {
      for (const auto& j : jobs) {
        if (!j->done) return false;
      }
      return true;
    };
    std::unique_lock<std::mutex> lock(channel->mu);
    while (!channel->cv.wait_for(lock, std::chrono::milliseconds(100), all_done)) {
      if (watch.Gone()) {
        lock.unlock();  // Cancel finishes queued jobs, which takes the channel's lock
        for (const auto& j : jobs) state.pool.load()->Cancel(j);
        return;  // no one to answer
      }
    }
    std::vector<const Job*> done;
    for (const auto& j : jobs) {
      if (!j->error.empty()) {
        throw ApiError{500, "generation failed: " + j->error, "", "server_error", ""};
      }
      if (j->cancelled)
        throw ApiError{503, "the server is shutting down", "", "unavailable_error", ""};
      done.push_back(j.get());
    }
    SendJson(res, 200, FullResponse(meta, done, n_prompt, echo));
    return;
  }

  auto st = std::make_shared<Stream>();
  st->state = &state;
  st->meta = meta;
  st->channel = channel;
  st->jobs = jobs;
  st->started.assign(jobs.size(), false);
  st->finished.assign(jobs.size(), false);
  st->text_offset.assign(jobs.size(), echo.size());
  if (gr.split_reasoning) {
    for (size_t i = 0; i < jobs.size(); ++i) {
      st->splitters.emplace_back(meta.engine_model, meta.starts_in_reasoning);
    }
  }
  st->prompt_tokens = n_prompt;
  st->include_usage = gr.include_usage;
  st->echo = echo;
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream", [st](size_t, httplib::DataSink& sink) { return StreamStep(*st, sink); },
      // Called when the response ends, however it ends: a stream that did not
      // reach [DONE] lost its client (or the server stops), so its jobs stop.
      [st](bool) {
        if (st->ended) return;
        for (const auto& j : st->jobs) st->state->pool.load()->Cancel(j);
      });
}

// /v1/embeddings: one job for all of the request's inputs, waited for as a
// non-streamed generation (a client that leaves cancels it).
void Embeddings(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  EmbeddingRequest er = ParseEmbeddingRequest(ParseBody(req.body), state.defaults);
  auto job = std::make_shared<Job>();
  job->embed = true;
  job->embed_inputs = er.inputs;
  job->pooling = state.defaults.pooling;
  job->channel = std::make_shared<Channel>();
  Submit(state, {job});
  const ConnectionWatch watch(req);
  std::unique_lock<std::mutex> lock(job->channel->mu);
  while (
      !job->channel->cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return job->done; })) {
    if (watch.Gone()) {
      lock.unlock();
      state.pool.load()->Cancel(job);
      return;
    }
  }
  if (!job->error.empty()) {
    throw ApiError{500, "embedding failed: " + job->error, "", "server_error", ""};
  }
  if (job->cancelled)
    throw ApiError{503, "the server is shutting down", "", "unavailable_error", ""};
  SendJson(res, 200, EmbeddingResponse(er, state.model_id, job->embeddings));
}

json ModelsBody(const ServerState& s) {
  json m = {{"id", s.model_id}, {"object", "model"}, {"created", s.created}, {"owned_by", "ember"}};
  if (s.phase.load() == Phase::kReady) {
    m["meta"] = {{"n_ctx", s.defaults.n_ctx}, {"n_vocab", s.defaults.n_vocab}};
  }
  return json{{"object", "list"}, {"data", json::array({m})}};
}

}  // namespace

bool ConstantTimeEquals(const std::string& given, const std::string& expected) {
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    const unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff |= static_cast<unsigned char>(g ^ static_cast<unsigned char>(expected[i]));
  }
  return diff == 0;
}

void InstallRoutes(httplib::Server& server, ServerState& state) {
  // Before routing: the key, then whether the model is there. /health and
  // the page answer without a key (the page asks for it and sends it).
  server.set_pre_routing_handler([&state](const httplib::Request& req, httplib::Response& res) {
    const bool open = req.path == "/health" || req.path == "/";
    if (!state.api_key.empty() && !open) {
      const std::string auth = req.get_header_value("Authorization");
      const std::string prefix = "Bearer ";
      const bool ok = auth.compare(0, prefix.size(), prefix) == 0 &&
                      ConstantTimeEquals(auth.substr(prefix.size()), state.api_key);
      if (!ok) {
        state.metrics.requests_failed++;
        SendError(res, ApiError{401, "invalid or missing API key (Authorization: Bearer KEY)", "",
                                "invalid_request_error", "invalid_api_key"});
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    const Phase phase = state.phase.load();
    if (phase != Phase::kReady && !open) {
      SendError(res, ApiError{503,
                              phase == Phase::kLoading ? "the model is loading; retry shortly"
                                                       : "the server is shutting down",
                              "", "unavailable_error", ""});
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Routes that do not exist, bodies over the limit and other errors httplib
  // finds itself: give them OpenAI's shape too.
  httplib::Server::HandlerWithResponse on_error = [&state](const httplib::Request& req,
                                                           httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    state.metrics.requests_failed++;
    ApiError e{res.status, "", "", "invalid_request_error", ""};
    if (res.status == 404) {
      e.message = "unknown route: " + req.method + " " + req.path;
      e.code = "not_found";
    } else if (res.status == 413) {
      e.message = "the body is larger than " + std::to_string(state.max_body) + " bytes";
      e.code = "payload_too_large";
    } else {
      e.message = "HTTP " + std::to_string(res.status);
    }
    SendError(res, e);
    return httplib::Server::HandlerResponse::Handled;
  };
  server.set_error_handler(on_error);
  server.set_exception_handler(
      [&state](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown error";
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        state.metrics.requests_failed++;
        SendError(res, ApiError{500, "internal error: " + what, "", "server_error", ""});
      });

  server.Get("/health", [&state](const httplib::Request&, httplib::Response& res) {
    const Phase p = state.phase.load();
    if (p == Phase::kReady) {
      SendJson(res, 200, {{"status", "ok"}});
    } else {
      SendJson(res, 503, {{"status", p == Phase::kLoading ? "loading" : "stopping"}});
    }
  });
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(WebPage(), "text/html; charset=utf-8");
  });
  server.Get("/v1/models", [&state](const httplib::Request&, httplib::Response& res) {
    SendJson(res, 200, ModelsBody(state));
  });
  server.Get("/metrics", [&state](const httplib::Request&, httplib::Response& res) {
    res.set_content(RenderMetrics(state.metrics, state.pool.load()->gauges()),
                    "text/plain; version=0.0.4");
  });
  server.Post("/v1/completions",
              Guard(state, [&state](const httplib::Request& req, httplib::Response& res) {
                Generate(state, req, res, false);
              }));
  server.Post("/v1/chat/completions",
              Guard(state, [&state](const httplib::Request& req, httplib::Response& res) {
                Generate(state, req, res, true);
              }));
  server.Post("/v1/embeddings",
              Guard(state, [&state](const httplib::Request& req, httplib::Response& res) {
                Embeddings(state, req, res);
              }));
  server.Post("/tokenize",
              Guard(state, [&state](const httplib::Request& req, httplib::Response& res) {
                SendJson(res, 200, TokenizeRequest(ParseBody(req.body), state.defaults));
              }));
  server.Post("/detokenize",
              Guard(state, [&state](const httplib::Request& req, httplib::Response& res) {
                SendJson(res, 200, DetokenizeRequest(ParseBody(req.body), state.defaults));
              }));
}

}  // namespace serve
