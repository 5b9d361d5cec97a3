// Loading test models and creating sessions, through the C++ runtime and
// through the C API, with Catch REQUIREs that print ember's message on failure.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ember.h"
#include "runtime/model/model.h"
#include "runtime/session/session.h"

namespace ember::test {

// A model through the runtime; path "" is DefaultTinyModel().
std::unique_ptr<Model> LoadModelOrFail(const std::string& path = "");

// A session of `model` with `params`.
std::unique_ptr<Session> CreateSessionOrFail(const Model& model, const SessionParams& params);

// The logits after decoding `tokens` from an empty context (n_ctx 16, one
// thread) with the model at `path`: a model's output in one call.
std::vector<float> LastLogitsOrFail(const std::string& path, const std::vector<int32_t>& tokens);
// The same for a model already loaded.
std::vector<float> LastLogitsOrFail(const Model& model, const std::vector<int32_t>& tokens);

// n token ids in [100, 5100), from a seeded generator: model input that is
// the same on every run.
std::vector<int32_t> RandomTokens(size_t n, uint32_t seed);

// C API handles that free themselves.
struct CModelDeleter {
  void operator()(ember_model* m) const { ember_model_free(m); }
};
struct CSessionDeleter {
  void operator()(ember_session* s) const { ember_session_free(s); }
};
using CModelPtr = std::unique_ptr<ember_model, CModelDeleter>;
using CSessionPtr = std::unique_ptr<ember_session, CSessionDeleter>;

// A model through the C API; path "" is DefaultTinyModel().
CModelPtr LoadCModelOrFail(const std::string& path = "");

}  // namespace ember::test
