// Loading test models, through the C++ runtime and through the C API, with
// Catch REQUIREs that print ember's message on failure.
#pragma once

#include <memory>
#include <string>

#include "ember.h"
#include "runtime/model.h"

namespace ember::test {

// A model through the runtime; path "" is DefaultTinyModel().
std::unique_ptr<Model> LoadModelOrFail(const std::string& path = "");

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
