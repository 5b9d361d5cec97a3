// Session::Embed (runtime/session/session_embed.cpp): each architecture's
// pooled hidden states against the plain-float reference forward's final-norm
// rows (tests/support/reference_forward.h), in prompt chunks and at 2 threads;
// the poolings, normalization, the file's pooling_type, and the errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "runtime/model/model.h"
#include "runtime/session/session.h"
#include "support/loaders.h"
#include "support/model_builder.h"
#include "support/reference_forward.h"
#include "support/skip.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

double Cosine(const float* a, const float* b, int64_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < n; ++i) {
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

double Norm(const float* a, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * a[i];
  return std::sqrt(s);
}

// Largest |a - b| over the largest |b|.
double RelErr(const std::vector<float>& a, const std::vector<float>& b) {
  double err = 0, top = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    err = std::max(err, static_cast<double>(std::fabs(a[i] - b[i])));
    top = std::max(top, static_cast<double>(std::fabs(b[i])));
  }
  return err / top;
}

std::unique_ptr<Session> EmbedSession(const Model& m) {
  SessionParams sp;
  sp.n_ctx = 64;
  sp.n_batch = 16;  // the 40 tokens go in three chunks
  sp.n_threads = 2;
  sp.n_threads_batch = 2;
  return test::CreateSessionOrFail(m, sp);
}

}  // namespace

TEST_CASE("embed: every architecture's pooled rows follow the reference forward", "[embed]") {
  if (!test::FileExists(test::SharedDir() + "/vocab/ggml-vocab-qwen2.gguf")) {
    EMBER_SKIP("no test vocabularies");
  }
  for (const char* which : {"llama", "llama3", "qwen2", "qwen3", "gemma3"}) {
    INFO(which);
    auto m = test::LoadModelOrFail(test::BuildArchModel(which));
    const int64_t E = m->config().n_embd;
    const std::vector<int32_t> ids = test::RandomTokens(40, 11);
    const int64_t n = static_cast<int64_t>(ids.size());
    std::vector<float> logits, hidden;
    REQUIRE(test::ReferenceForward(*m, ids, &logits, {}, &hidden).ok());
    std::vector<float> mean(static_cast<size_t>(E), 0.0f);
    for (int64_t t = 0; t < n; ++t) {
      for (int64_t i = 0; i < E; ++i) mean[i] += hidden[t * E + i] / static_cast<float>(n);
    }
    auto s = EmbedSession(*m);
    std::vector<float> none, got;
    REQUIRE(s->Embed(ids, Pooling::kNone, false, &none).ok());
    REQUIRE(none.size() == hidden.size());
    // ember's arithmetic (int8 activations, f16 cache) against doubles:
    // measured below 2% of the largest value; a wrong row, norm or pooling
    // is far off.
    CHECK(RelErr(none, hidden) < 0.05);
    for (int64_t t = 0; t < n; ++t) CHECK(Cosine(&none[t * E], &hidden[t * E], E) > 0.999);
    REQUIRE(s->Embed(ids, Pooling::kMean, false, &got).ok());
    REQUIRE(got.size() == static_cast<size_t>(E));
    CHECK(Cosine(got.data(), mean.data(), E) > 0.9999);
    CHECK(RelErr(got, mean) < 0.05);
    REQUIRE(s->Embed(ids, Pooling::kFirst, false, &got).ok());
    CHECK(std::equal(got.begin(), got.end(), none.begin()));  // the same arithmetic: bits
    REQUIRE(s->Embed(ids, Pooling::kLast, false, &got).ok());
    CHECK(std::equal(got.begin(), got.end(), none.end() - E));
    // The context is left empty; a generation afterwards starts from nothing.
    CHECK(s->n_past() == 0);
    CHECK_FALSE(s->has_logits());
  }
}

TEST_CASE("embed: normalized vectors, the file's pooling, and what a batch does not change",
          "[embed]") {
  auto m = test::LoadModelOrFail();
  const int64_t E = m->config().n_embd;
  const std::vector<int32_t> ids = test::RandomTokens(23, 5);
  auto s = EmbedSession(*m);
  std::vector<float> raw, unit, model;
  REQUIRE(s->Embed(ids, Pooling::kMean, false, &raw).ok());
  REQUIRE(s->Embed(ids, Pooling::kMean, true, &unit).ok());
  CHECK(Norm(unit.data(), E) == Approx(1.0).epsilon(1e-6));
  CHECK(Cosine(raw.data(), unit.data(), E) == Approx(1.0).epsilon(1e-6));
  // A model without pooling_type: mean.
  REQUIRE(m->config().pooling_type == -1);
  REQUIRE(s->Embed(ids, Pooling::kModel, true, &model).ok());
  CHECK(model == unit);
  // kNone normalizes each row.
  std::vector<float> rows;
  REQUIRE(s->Embed(ids, Pooling::kNone, true, &rows).ok());
  for (size_t t = 0; t < ids.size(); ++t) CHECK(Norm(&rows[t * E], E) == Approx(1.0).epsilon(1e-6));
  // Whole or in chunks of 16, 1 or 2 threads: the same vector.
  SessionParams sp;
  sp.n_ctx = 64;
  sp.n_batch = 64;
  sp.n_threads = 1;
  sp.n_threads_batch = 1;
  auto whole = test::CreateSessionOrFail(*m, sp);
  std::vector<float> w;
  REQUIRE(whole->Embed(ids, Pooling::kMean, false, &w).ok());
  CHECK(RelErr(w, raw) < 1e-5);

  // A file that names its pooling: last (3) and rank (4).
  test::TinyModelSpec spec;
  spec.uint_keys["llama.pooling_type"] = 3;
  const std::string last_path = test::TempPath("embed_last.gguf");
  REQUIRE(test::BuildTinyModel(spec, last_path).ok());
  auto ml = test::LoadModelOrFail(last_path);
  CHECK(ml->config().pooling_type == 3);
  auto sl = EmbedSession(*ml);
  std::vector<float> by_model, by_last;
  REQUIRE(sl->Embed(ids, Pooling::kModel, false, &by_model).ok());
  REQUIRE(sl->Embed(ids, Pooling::kLast, false, &by_last).ok());
  CHECK(by_model == by_last);
  spec.uint_keys["llama.pooling_type"] = 4;
  const std::string rank_path = test::TempPath("embed_rank.gguf");
  REQUIRE(test::BuildTinyModel(spec, rank_path).ok());
  auto mr = test::LoadModelOrFail(rank_path);
  auto sr = EmbedSession(*mr);
  std::vector<float> out;
  const Status rank = sr->Embed(ids, Pooling::kModel, false, &out);
  CHECK(rank.code() == Code::kUnsupported);
  CHECK_THAT(rank.message(), Catch::Contains("rank"));
  REQUIRE(sr->Embed(ids, Pooling::kMean, false, &out).ok());  // asked for: fine
}

TEST_CASE("embed: several inputs packed into one pass give each one's own vector", "[embed]") {
  if (!test::FileExists(test::SharedDir() + "/vocab/ggml-vocab-qwen2.gguf")) {
    EMBER_SKIP("no test vocabularies");
  }
  // Lengths 1..23 (packs of up to 16 tokens: several per pass, some alone),
  // and one of 40 (longer than a batch: in chunks). Gemma 3's window rings
  // take the inputs one by one.
  std::vector<std::vector<int32_t>> inputs;
  for (int n : {5, 1, 9, 3, 16, 2, 40, 7, 7, 23}) {
    inputs.push_back(test::RandomTokens(static_cast<size_t>(n), static_cast<uint32_t>(n * 3 + 1)));
  }
  for (const char* which : {"llama", "qwen2", "qwen3", "gemma3"}) {
    INFO(which);
    auto m = test::LoadModelOrFail(test::BuildArchModel(which));
    for (Pooling pooling : {Pooling::kMean, Pooling::kLast, Pooling::kFirst, Pooling::kNone}) {
      INFO("pooling " << static_cast<int>(pooling));
      auto s = EmbedSession(*m);
      std::vector<std::vector<float>> many;
      REQUIRE(s->EmbedMany(inputs, pooling, true, &many).ok());
      REQUIRE(many.size() == inputs.size());
      for (size_t i = 0; i < inputs.size(); ++i) {
        INFO("input " << i);
        std::vector<float> one;
        REQUIRE(s->Embed(inputs[i], pooling, true, &one).ok());
        CHECK(many[i] == one);  // the same arithmetic per row: the same bits
      }
      CHECK(s->n_past() == 0);
    }
  }
  // An error in any input: nothing runs, nothing is written.
  auto m = test::LoadModelOrFail();
  auto s = EmbedSession(*m);
  std::vector<std::vector<float>> out = {{1.0f}};
  CHECK(s->EmbedMany({{1, 2}, {}}, Pooling::kMean, true, &out).code() == Code::kInvalidArgument);
  CHECK(s->EmbedMany({{1, 2}, test::RandomTokens(65, 1)}, Pooling::kMean, true, &out).code() ==
        Code::kContextOverflow);
  CHECK(out == std::vector<std::vector<float>>{{1.0f}});
}

TEST_CASE("embed: bad input is an error and leaves the session empty", "[embed][bad-input]") {
  auto m = test::LoadModelOrFail();
  auto s = EmbedSession(*m);
  REQUIRE(s->Decode({1, 2, 3}).ok());
  std::vector<float> out = {42.0f};
  CHECK(s->Embed({}, Pooling::kMean, true, &out).code() == Code::kInvalidArgument);
  const Status too_long = s->Embed(test::RandomTokens(65, 3), Pooling::kMean, true, &out);
  CHECK(too_long.code() == Code::kContextOverflow);
  CHECK_THAT(too_long.message(), Catch::Contains("65 tokens do not fit in the context of 64"));
  const Status bad_id = s->Embed({1, -5}, Pooling::kMean, true, &out);
  CHECK(bad_id.code() == Code::kInvalidArgument);
  CHECK(out == std::vector<float>{42.0f});  // nothing written on an error
  CHECK(s->n_past() == 3);                  // and the context as it was
  // A cancel between chunks (40 tokens, batches of 16): an error, nothing
  // written, the context cleared.
  s->RequestCancel();
  const Status cancelled = s->Embed(test::RandomTokens(40, 9), Pooling::kMean, true, &out);
  CHECK(cancelled.code() == Code::kCancelled);
  CHECK(out == std::vector<float>{42.0f});
  CHECK(s->n_past() == 0);
  // EmbedMany: between packs (the second input does not fit with the first).
  std::vector<std::vector<float>> many = {{7.0f}};
  CHECK(s->EmbedMany({test::RandomTokens(10, 2), test::RandomTokens(10, 3)}, Pooling::kMean, true,
                     &many)
            .code() == Code::kCancelled);
  CHECK(many == std::vector<std::vector<float>>{{7.0f}});
  s->ClearCancel();

  // A pooling_type outside llama.cpp's numbers: the file is refused.
  test::TinyModelSpec spec;
  spec.uint_keys["llama.pooling_type"] = 9;
  const std::string path = test::TempPath("embed_bad_pooling.gguf");
  REQUIRE(test::BuildTinyModel(spec, path).ok());
  std::unique_ptr<Model> bad;
  const Status load = Model::Load(path, nullptr, &bad);
  CHECK(load.code() == Code::kBadFormat);
  CHECK_THAT(load.message(), Catch::Contains("llama.pooling_type"));
}
