#include "serve/embeddings.h"

#include <cstring>
#include <string>

#include "serve/api_error.h"

namespace serve {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxInputs = 2048;  // OpenAI's limit per request

// The bytes of v (little-endian float32 on every host ember builds for) in
// base64 (RFC 4648, with padding), as OpenAI's encoding_format "base64".
std::string Base64Floats(const std::vector<float>& v) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<unsigned char> bytes(v.size() * sizeof(float));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t w = static_cast<uint32_t>(bytes[i]) << 16;
    if (n > 1) w |= static_cast<uint32_t>(bytes[i + 1]) << 8;
    if (n > 2) w |= bytes[i + 2];
    out += kAlphabet[(w >> 18) & 63];
    out += kAlphabet[(w >> 12) & 63];
    out += n > 1 ? kAlphabet[(w >> 6) & 63] : '=';
    out += n > 2 ? kAlphabet[w & 63] : '=';
  }
  return out;
}

bool IsIdArray(const json& v) {
  if (!v.is_array() || v.empty()) return false;
  for (const json& x : v) {
    if (!x.is_number_integer()) return false;
  }
  return true;
}

std::vector<int32_t> Ids(const json& v, const RequestDefaults& d, size_t index) {
  std::vector<int32_t> ids;
  for (const json& x : v) {
    const int64_t id = x.get<int64_t>();
    if (id < 0 || id >= d.n_vocab) {
      throw BadRequest("'input' " + std::to_string(index) + ": token ids must be in [0, " +
                           std::to_string(d.n_vocab) + ")",
                       "input");
    }
    ids.push_back(static_cast<int32_t>(id));
  }
  return ids;
}

}  // namespace

EmbeddingRequest ParseEmbeddingRequest(const json& body, const RequestDefaults& d) {
  EmbeddingRequest r;
  auto in = body.find("input");
  if (in == body.end()) throw BadRequest("'input' is required", "input");
  // The four forms, as a list of inputs each a string or an id array.
  std::vector<const json*> items;
  if (in->is_string() || IsIdArray(*in)) {
    items.push_back(&*in);
  } else if (in->is_array() && !in->empty()) {
    for (const json& x : *in) items.push_back(&x);
  } else {
    throw BadRequest(
        "'input' must be a string, an array of strings, an array of token ids, or an array of "
        "token-id arrays, and not empty",
        "input");
  }
  if (items.size() > kMaxInputs) {
    throw BadRequest("'input' has " + std::to_string(items.size()) + " items; at most " +
                         std::to_string(kMaxInputs),
                     "input");
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const json& x = *items[i];
    std::vector<int32_t> ids;
    if (x.is_string()) {
      if (x.get_ref<const std::string&>().empty()) {
        throw BadRequest("'input' " + std::to_string(i) + " is an empty string", "input");
      }
      ids = TokenizeText(d.model, x.get<std::string>(), true);
    } else if (IsIdArray(x)) {
      ids = Ids(x, d, i);
    } else {
      throw BadRequest("'input' " + std::to_string(i) +
                           " must be a non-empty string or a non-empty array of token ids",
                       "input");
    }
    if (ids.empty()) throw BadRequest("'input' " + std::to_string(i) + " has no tokens", "input");
    if (static_cast<int64_t>(ids.size()) > d.n_ctx) {
      throw BadRequest("'input' " + std::to_string(i) + " has " + std::to_string(ids.size()) +
                           " tokens; the context holds " + std::to_string(d.n_ctx),
                       "input", "context_length_exceeded");
    }
    r.n_tokens += static_cast<int64_t>(ids.size());
    r.inputs.push_back(std::move(ids));
  }
  if (auto f = body.find("encoding_format"); f != body.end() && !f->is_null()) {
    if (*f == "base64") {
      r.base64 = true;
    } else if (*f != "float") {
      throw BadRequest("'encoding_format' must be \"float\" or \"base64\"", "encoding_format");
    }
  }
  if (auto dim = body.find("dimensions"); dim != body.end() && !dim->is_null()) {
    if (!dim->is_number_integer() || dim->get<int64_t>() != d.n_embd) {
      throw BadRequest("'dimensions': this model's embeddings have " + std::to_string(d.n_embd) +
                           " (ember does not shorten them)",
                       "dimensions");
    }
  }
  return r;
}

json EmbeddingResponse(const EmbeddingRequest& req, const std::string& model_id,
                       const std::vector<std::vector<float>>& vectors) {
  json data = json::array();
  for (size_t i = 0; i < vectors.size(); ++i) {
    json e = {{"object", "embedding"}, {"index", i}};
    if (req.base64) {
      e["embedding"] = Base64Floats(vectors[i]);
    } else {
      e["embedding"] = vectors[i];
    }
    data.push_back(std::move(e));
  }
  return {{"object", "list"},
          {"data", std::move(data)},
          {"model", model_id},
          {"usage", {{"prompt_tokens", req.n_tokens}, {"total_tokens", req.n_tokens}}}};
}

}  // namespace serve
