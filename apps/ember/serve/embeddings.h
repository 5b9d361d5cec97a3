// /v1/embeddings (OpenAI's embeddings API): the request body checked and
// turned into token lists, and the response built from the vectors. Every
// problem is an ApiError (400) naming the field, raised before anything is
// queued. docs/SERVER.md, docs/EMBEDDINGS.md.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/openai_request.h"

namespace serve {

struct EmbeddingRequest {
  std::vector<std::vector<int32_t>> inputs;  // one token list per input
  bool base64 = false;  // encoding_format "base64": little-endian float32, base64
  int64_t n_tokens = 0;
};

// input: a string, an array of strings, an array of token ids, or an array
// of such arrays (OpenAI's four forms); encoding_format: "float" (default) or
// "base64"; dimensions: only the model's own n_embd (ember does not shorten
// vectors). At most 2048 inputs, each non-empty and within the context.
EmbeddingRequest ParseEmbeddingRequest(const nlohmann::json& body, const RequestDefaults& defaults);

// {"object": "list", "data": [{"object": "embedding", "index": i, "embedding":
// [...] or "base64"}], "model": ..., "usage": {...}}.
nlohmann::json EmbeddingResponse(const EmbeddingRequest& req, const std::string& model_id,
                                 const std::vector<std::vector<float>>& vectors);

}  // namespace serve
