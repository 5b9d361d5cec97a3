// libFuzzer target: the request handling of `ember serve` without the
// network: what apps/ember/serve does with a body before anything is queued.
//
// Input: the route on the first line (/v1/completions, /v1/chat/completions,
// /v1/embeddings, /tokenize, /detokenize), then the request body. The body
// goes through ParseBody and the route's checks (ParseGenerationRequest and a
// sampler per choice, ParseEmbeddingRequest and its response,
// TokenizeRequest, DetokenizeRequest) against a tiny llama model with
// a ChatML template, as routes.cpp runs them. Every failure must be an
// ApiError in OpenAI's shape (a 4xx, a message, a type; its body serializes
// as JSON): any other exception escaping is a finding. An accepted request
// must be one the server can run: a prompt of ids in the vocabulary that
// fits the context, 1..max_n choices, a sampler for each; embedding inputs
// each non-empty, in the vocabulary and within the context; an answer of
// /tokenize and /detokenize must serialize.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ember.h"
#include "fuzz_models.h"
#include "serve/api_error.h"
#include "serve/embeddings.h"
#include "serve/openai_request.h"
#include "serve/openai_response.h"

namespace {

using nlohmann::json;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "http_fuzz: %s\n", what.c_str());
  std::abort();
}

const serve::RequestDefaults& Defaults() {
  static const serve::RequestDefaults d = [] {
    ember_model* model = nullptr;
    const std::string& path = ember::fuzz::TinyModelPath("llama");
    if (ember_model_load(path.c_str(), nullptr, &model) != EMBER_OK) {
      Fail(std::string("loading the tiny model: ") + ember_last_error());
    }
    ember_model_info info{};
    ember_model_get_info(model, &info);
    serve::RequestDefaults r;
    r.model = model;  // kept for the process's life
    r.n_vocab = info.n_vocab;
    r.n_ctx = 64;
    r.n_embd = info.n_embd;
    r.sampling = ember_sampling_default_params();
    r.think = serve::ModelHasThinkMarkers(model);
    return r;
  }();
  return d;
}

void CheckGeneration(const serve::GenerationRequest& gr, const serve::RequestDefaults& d) {
  if (gr.prompt.empty()) Fail("an accepted request has an empty prompt");
  if (static_cast<int64_t>(gr.prompt.size()) >= d.n_ctx) Fail("the prompt does not fit");
  for (const int32_t id : gr.prompt) {
    if (id < 0 || id >= d.n_vocab) Fail("a prompt id is outside the vocabulary");
  }
  if (gr.n < 1 || gr.n > d.max_n) Fail("the number of choices is out of range");
  if (gr.n_predict < 0) Fail("a negative max_tokens was accepted");
  for (int i = 0; i < gr.n; ++i) {
    if (!serve::MakeSampler(gr, d, i)) Fail("MakeSampler returned no sampler");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t eol = in.find('\n');
  if (eol == std::string_view::npos) return 0;
  const std::string_view route = in.substr(0, eol);
  const std::string body(in.substr(eol + 1));
  const serve::RequestDefaults& d = Defaults();
  try {
    if (route == "/v1/completions" || route == "/v1/chat/completions") {
      const json j = serve::ParseBody(body);
      CheckGeneration(serve::ParseGenerationRequest(j, route == "/v1/chat/completions", d), d);
    } else if (route == "/v1/embeddings") {
      const serve::EmbeddingRequest er = serve::ParseEmbeddingRequest(serve::ParseBody(body), d);
      if (er.inputs.empty()) Fail("/v1/embeddings: no inputs accepted");
      std::vector<std::vector<float>> vectors;
      for (const auto& in : er.inputs) {
        if (in.empty() || static_cast<int64_t>(in.size()) > d.n_ctx) Fail("a bad input length");
        for (const int32_t id : in) {
          if (id < 0 || id >= d.n_vocab) Fail("an embedding input id is outside the vocabulary");
        }
        vectors.emplace_back(static_cast<size_t>(d.n_embd), 0.5f);
      }
      (void)serve::Dump(serve::EmbeddingResponse(er, "m", vectors));
    } else if (route == "/tokenize") {
      const json answer = serve::TokenizeRequest(serve::ParseBody(body), d);
      for (const json& id : answer.at("tokens")) {
        if (id.get<int64_t>() < 0 || id.get<int64_t>() >= d.n_vocab) Fail("/tokenize: bad id");
      }
      (void)serve::Dump(answer);
    } else if (route == "/detokenize") {
      (void)serve::Dump(serve::DetokenizeRequest(serve::ParseBody(body), d));
    }
  } catch (const serve::ApiError& e) {
    if (e.status < 400 || e.status > 499 || e.message.empty() || e.type.empty()) {
      Fail("an ApiError of status " + std::to_string(e.status) + " type '" + e.type +
           "': " + e.message);
    }
    const json shaped = json::parse(serve::Dump(serve::ErrorBody(e)));
    if (!shaped.at("error").at("message").is_string()) Fail("an error body without a message");
  } catch (const std::exception& e) {
    Fail(std::string("an exception other than ApiError escaped: ") + e.what());
  }
  return 0;
}
