#include "support/loaders.h"

#include <catch2/catch.hpp>
#include <random>

#include "support/model_builder.h"

namespace ember::test {

std::unique_ptr<Model> LoadModelOrFail(const std::string& path) {
  std::unique_ptr<Model> m;
  const Status s = Model::Load(path.empty() ? DefaultTinyModel() : path, nullptr, &m);
  INFO(s.message());
  REQUIRE(s.ok());
  return m;
}

std::unique_ptr<Session> CreateSessionOrFail(const Model& model, const SessionParams& params) {
  std::unique_ptr<Session> s;
  const Status st = Session::Create(model, params, &s);
  INFO(st.message());
  REQUIRE(st.ok());
  return s;
}

std::vector<float> LastLogitsOrFail(const std::string& path, const std::vector<int32_t>& tokens) {
  return LastLogitsOrFail(*LoadModelOrFail(path), tokens);
}

std::vector<float> LastLogitsOrFail(const Model& model, const std::vector<int32_t>& tokens) {
  SessionParams p;
  p.n_ctx = 16;
  p.n_threads = 1;
  const std::unique_ptr<Session> session = CreateSessionOrFail(model, p);
  const Status s = session->Decode(tokens);
  INFO(s.message());
  REQUIRE(s.ok());
  return session->logits();
}

std::vector<int32_t> RandomTokens(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t(n);
  for (auto& x : t) x = static_cast<int32_t>(100 + rng() % 5000);
  return t;
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
