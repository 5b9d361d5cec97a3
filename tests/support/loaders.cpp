#include "support/loaders.h"

#include <catch2/catch.hpp>

#include "support/model_builder.h"

namespace ember::test {

std::unique_ptr<Model> LoadModelOrFail(const std::string& path) {
  std::unique_ptr<Model> m;
  const Status s = Model::Load(path.empty() ? DefaultTinyModel() : path, nullptr, &m);
  INFO(s.message());
  REQUIRE(s.ok());
  return m;
}

CModelPtr LoadCModelOrFail(const std::string& path) {
  ember_model* m = nullptr;
  const std::string p = path.empty() ? DefaultTinyModel() : path;
  const ember_status s = ember_model_load(p.c_str(), nullptr, &m);
  INFO(ember_last_error());
  REQUIRE(s == EMBER_OK);
  return CModelPtr(m);
}

}  // namespace ember::test
