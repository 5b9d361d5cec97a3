// Bad input to every public function of include/ember.h: NULL handles and
// buffers, out-of-range parameters, files that are not models. Each call
// returns the documented status with a message naming what was wrong, sets
// out-handles to NULL, and never crashes or leaks (the suite runs under
// ASan/LSan in scripts/test.sh --full). Enum values outside their enums are
// legal C but not C++: tests/c_api/c99_program.c passes those.
#include <catch2/catch.hpp>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

namespace {

struct Case {
  const char* what;
  std::function<ember_status()> call;
  ember_status expected;
  std::string message;  // a part of ember_last_error()
};

void RunCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    INFO(c.what);
    const ember_status got = c.call();
    const std::string error = ember_last_error();
    INFO("status " << ember_status_str(got) << ", message: " << error);
    CHECK(got == c.expected);
    CHECK(error.find(c.message) != std::string::npos);
  }
}

struct Fixture {
  ember_model* model = nullptr;
  ember_session* session = nullptr;
  ember_sampler* sampler = nullptr;
  int32_t n_vocab = 0;
  int32_t n_embd = 0;

  Fixture() {
    REQUIRE(ember_model_load(ember::test::DefaultTinyModel().c_str(), nullptr, &model) == EMBER_OK);
    ember_model_info info;
    REQUIRE(ember_model_get_info(model, &info) == EMBER_OK);
    n_vocab = info.n_vocab;
    n_embd = info.n_embd;
    ember_session_params sp = ember_session_default_params();
    sp.n_ctx = 64;
    sp.n_threads = 1;
    REQUIRE(ember_session_create(model, &sp, &session) == EMBER_OK);
    ember_sampler_spec greedy = ember_sampler_spec_default(EMBER_SAMPLER_GREEDY);
    REQUIRE(ember_sampler_create(nullptr, 4, &greedy, 1, 1, &sampler) == EMBER_OK);
  }
  ~Fixture() {
    ember_sampler_free(sampler);
    ember_session_free(session);
    ember_model_free(model);
  }
};

// A value an out-handle cannot hold after a failed call.
template <typename T>
T* Poison() {
  static char bytes[8];
  return reinterpret_cast<T*>(bytes);
}

}  // namespace

TEST_CASE("c_api args: models", "[c_api][args]") {
  Fixture f;
  const std::string junk = ember::test::TempPath("junk.gguf");
  std::ofstream(junk) << "this is not a GGUF file, not even close";
  ember_model* out = nullptr;
  ember_model_info info;
  char buf[4];
  size_t needed = 0;
  RunCases({
      {"load: NULL path", [&] { return ember_model_load(nullptr, nullptr, &out); },
       EMBER_ERR_INVALID_ARGUMENT, "path is NULL"},
      {"load: NULL out", [&] { return ember_model_load(junk.c_str(), nullptr, nullptr); },
       EMBER_ERR_INVALID_ARGUMENT, "out is NULL"},
      {"load: missing file", [&] { return ember_model_load("/nonexistent.gguf", nullptr, &out); },
       EMBER_ERR_IO, "/nonexistent.gguf"},
      {"load: not a GGUF", [&] { return ember_model_load(junk.c_str(), nullptr, &out); },
       EMBER_ERR_BAD_FORMAT, "junk.gguf"},
      {"load: numerics not an ember_numerics",
       [&] {
         ember_model_params mp = ember_model_default_params();
         mp.numerics = 7;
         return ember_model_load(ember::test::DefaultTinyModel().c_str(), &mp, &out);
       },
       EMBER_ERR_INVALID_ARGUMENT, "numerics 7"},
      {"load: float_weights not an ember_float_weights",
       [&] {
         ember_model_params mp = ember_model_default_params();
         mp.float_weights = 2;
         return ember_model_load(ember::test::DefaultTinyModel().c_str(), &mp, &out);
       },
       EMBER_ERR_INVALID_ARGUMENT, "float_weights 2"},
      {"get_info: NULL model", [&] { return ember_model_get_info(nullptr, &info); },
       EMBER_ERR_INVALID_ARGUMENT, "NULL"},
      {"get_info: NULL out", [&] { return ember_model_get_info(f.model, nullptr); },
       EMBER_ERR_INVALID_ARGUMENT, "NULL"},
      {"describe_tensors: NULL model",
       [&] { return ember_model_describe_tensors(nullptr, buf, sizeof buf, &needed); },
       EMBER_ERR_INVALID_ARGUMENT, "model is NULL"},
      {"describe_tensors: NULL buf with a size",
       [&] { return ember_model_describe_tensors(f.model, nullptr, 10, &needed); },
       EMBER_ERR_INVALID_ARGUMENT, "buf is NULL"},
      {"describe_tensors: small buf",
       [&] { return ember_model_describe_tensors(f.model, buf, sizeof buf, &needed); },
       EMBER_ERR_BUFFER_TOO_SMALL, "buffer too small"},
  });
  // Failed loads leave *out NULL.
  out = Poison<ember_model>();
  CHECK(ember_model_load(junk.c_str(), nullptr, &out) == EMBER_ERR_BAD_FORMAT);
  CHECK(out == nullptr);
  ember_model_free(nullptr);
}

TEST_CASE("c_api args: tokens", "[c_api][args]") {
  Fixture f;
  int32_t ids[4] = {0, 1, 2, 3};
  char buf[8];
  size_t n = 0;
  RunCases({
      {"tokenize: NULL model",
       [&] { return ember_tokenize(nullptr, "a", 1, false, false, ids, 4, &n); },
       EMBER_ERR_INVALID_ARGUMENT, "model is NULL"},
      {"tokenize: NULL text with a length",
       [&] { return ember_tokenize(f.model, nullptr, 3, false, false, ids, 4, &n); },
       EMBER_ERR_INVALID_ARGUMENT, "text is NULL"},
      {"tokenize: NULL n_tokens",
       [&] { return ember_tokenize(f.model, "a", 1, false, false, ids, 4, nullptr); },
       EMBER_ERR_INVALID_ARGUMENT, "n_tokens is NULL"},
      {"tokenize: NULL tokens with a capacity",
       [&] { return ember_tokenize(f.model, "a", 1, false, false, nullptr, 4, &n); },
       EMBER_ERR_INVALID_ARGUMENT, "tokens is NULL"},
      {"token_to_piece: NULL model",
       [&] { return ember_token_to_piece(nullptr, 0, false, buf, sizeof buf, &n); },
       EMBER_ERR_INVALID_ARGUMENT, "model is NULL"},
      {"token_to_piece: negative id",
       [&] { return ember_token_to_piece(f.model, -1, false, buf, sizeof buf, &n); },
       EMBER_ERR_INVALID_ARGUMENT, "outside the vocabulary"},
      {"token_to_piece: id = n_vocab",
       [&] { return ember_token_to_piece(f.model, f.n_vocab, false, buf, sizeof buf, &n); },
       EMBER_ERR_INVALID_ARGUMENT, "outside the vocabulary"},
      {"token_to_piece: NULL n_bytes",
       [&] { return ember_token_to_piece(f.model, 0, false, buf, sizeof buf, nullptr); },
       EMBER_ERR_INVALID_ARGUMENT, "n_bytes is NULL"},
      {"token_to_piece: NULL buf with a size",
       [&] { return ember_token_to_piece(f.model, 0, false, nullptr, 8, &n); },
       EMBER_ERR_INVALID_ARGUMENT, "buf is NULL"},
      {"detokenize: NULL model",
       [&] { return ember_detokenize(nullptr, ids, 4, false, buf, sizeof buf, &n); },
       EMBER_ERR_INVALID_ARGUMENT, "model is NULL"},
      {"detokenize: NULL tokens with a count",
       [&] { return ember_detokenize(f.model, nullptr, 4, false, buf, sizeof buf, &n); },
       EMBER_ERR_INVALID_ARGUMENT, "tokens is NULL"},
      {"detokenize: NULL needed",
       [&] { return ember_detokenize(f.model, ids, 4, false, buf, sizeof buf, nullptr); },
       EMBER_ERR_INVALID_ARGUMENT, "needed is NULL"},
      {"detokenize: NULL buf with a size",
       [&] { return ember_detokenize(f.model, ids, 4, false, nullptr, 8, &n); },
       EMBER_ERR_INVALID_ARGUMENT, "buf is NULL"},
      {"detokenize: id outside the vocabulary",
       [&] {
         const int32_t bad[2] = {0, -3};
         return ember_detokenize(f.model, bad, 2, false, buf, sizeof buf, &n);
       },
       EMBER_ERR_INVALID_ARGUMENT, "token id -3 at index 1"},
  });
}

TEST_CASE("c_api args: sessions", "[c_api][args]") {
  Fixture f;
  ember_session* out = nullptr;
  const int32_t ids[2] = {1, 2};
  std::vector<float> emb_buffer(4096);
  float* emb = emb_buffer.data();
  auto with = [&](auto change) {
    ember_session_params p = ember_session_default_params();
    change(p);
    return ember_session_create(f.model, &p, &out);
  };
  RunCases({
      {"create: NULL model", [&] { return ember_session_create(nullptr, nullptr, &out); },
       EMBER_ERR_INVALID_ARGUMENT, "model is NULL"},
      {"create: NULL out", [&] { return ember_session_create(f.model, nullptr, nullptr); },
       EMBER_ERR_INVALID_ARGUMENT, "out is NULL"},
      {"create: n_ctx < 0", [&] { return with([](ember_session_params& p) { p.n_ctx = -1; }); },
       EMBER_ERR_INVALID_ARGUMENT, "context size -1"},
      {"create: n_threads < 0",
       [&] { return with([](ember_session_params& p) { p.n_threads = -2; }); },
       EMBER_ERR_INVALID_ARGUMENT, "thread count -2"},
      {"create: n_threads_batch < 0",
       [&] { return with([](ember_session_params& p) { p.n_threads_batch = -3; }); },
       EMBER_ERR_INVALID_ARGUMENT, "-3"},
      {"create: n_batch < 0", [&] { return with([](ember_session_params& p) { p.n_batch = -4; }); },
       EMBER_ERR_INVALID_ARGUMENT, "batch size"},
      {"eval: NULL session", [&] { return ember_session_eval(nullptr, ids, 2); },
       EMBER_ERR_INVALID_ARGUMENT, "session is NULL"},
      {"eval: NULL tokens", [&] { return ember_session_eval(f.session, nullptr, 2); },
       EMBER_ERR_INVALID_ARGUMENT, "no tokens"},
      {"eval: no tokens", [&] { return ember_session_eval(f.session, ids, 0); },
       EMBER_ERR_INVALID_ARGUMENT, "no tokens"},
      {"eval: id outside the vocabulary",
       [&] {
         const int32_t bad[2] = {1, f.n_vocab};
         return ember_session_eval(f.session, bad, 2);
       },
       EMBER_ERR_INVALID_ARGUMENT, "at index 1"},
      {"embed: NULL session",
       [&] { return ember_session_embed(nullptr, ids, 2, EMBER_POOLING_MEAN, true, emb, 4096); },
       EMBER_ERR_INVALID_ARGUMENT, "session is NULL"},
      {"embed: no tokens",
       [&] { return ember_session_embed(f.session, ids, 0, EMBER_POOLING_MEAN, true, emb, 4096); },
       EMBER_ERR_INVALID_ARGUMENT, "no tokens"},
      {"embed: NULL out",
       [&] {
         return ember_session_embed(f.session, ids, 2, EMBER_POOLING_MEAN, true, nullptr, 4096);
       },
       EMBER_ERR_INVALID_ARGUMENT, "out is NULL"},
      {"embed: not a pooling",
       [&] {
         return ember_session_embed(f.session, ids, 2, static_cast<ember_pooling>(9), true, emb,
                                    4096);
       },
       EMBER_ERR_INVALID_ARGUMENT, "pooling 9"},
      {"embed: out too small",
       [&] { return ember_session_embed(f.session, ids, 2, EMBER_POOLING_MEAN, true, emb, 3); },
       EMBER_ERR_INVALID_ARGUMENT, "out holds 3 floats, the embedding needs"},
      {"embed: one row per token for NONE",
       [&] {
         return ember_session_embed(f.session, ids, 2, EMBER_POOLING_NONE, true, emb,
                                    static_cast<size_t>(f.n_embd));
       },
       EMBER_ERR_INVALID_ARGUMENT, "needs " + std::to_string(2 * f.n_embd)},
  });
  // The batch form: the same checks, each input named.
  const int32_t* two[2] = {ids, ids + 1};
  const size_t sizes[2] = {2, 1};
  const size_t empty_sizes[2] = {2, 0};
  RunCases({
      {"embed_batch: NULL session",
       [&] {
         return ember_session_embed_batch(nullptr, two, sizes, 2, EMBER_POOLING_MEAN, true, emb,
                                          4096);
       },
       EMBER_ERR_INVALID_ARGUMENT, "session is NULL"},
      {"embed_batch: no inputs",
       [&] {
         return ember_session_embed_batch(f.session, two, sizes, 0, EMBER_POOLING_MEAN, true, emb,
                                          4096);
       },
       EMBER_ERR_INVALID_ARGUMENT, "no inputs"},
      {"embed_batch: an empty input",
       [&] {
         return ember_session_embed_batch(f.session, two, empty_sizes, 2, EMBER_POOLING_MEAN, true,
                                          emb, 4096);
       },
       EMBER_ERR_INVALID_ARGUMENT, "input 1 has no tokens"},
      {"embed_batch: none is not one vector per input",
       [&] {
         return ember_session_embed_batch(f.session, two, sizes, 2, EMBER_POOLING_NONE, true, emb,
                                          4096);
       },
       EMBER_ERR_INVALID_ARGUMENT, "not one vector per input"},
      {"embed_batch: out too small",
       [&] {
         return ember_session_embed_batch(f.session, two, sizes, 2, EMBER_POOLING_MEAN, true, emb,
                                          static_cast<size_t>(f.n_embd));
       },
       EMBER_ERR_INVALID_ARGUMENT, "need " + std::to_string(2 * f.n_embd)},
  });
  // Each vector of a batch is ember_session_embed's.
  REQUIRE(ember_session_embed_batch(f.session, two, sizes, 2, EMBER_POOLING_MEAN, true, emb,
                                    4096) == EMBER_OK);
  std::vector<float> one(static_cast<size_t>(f.n_embd));
  REQUIRE(ember_session_embed(f.session, two[1], 1, EMBER_POOLING_MEAN, true, one.data(),
                              one.size()) == EMBER_OK);
  CHECK(std::equal(one.begin(), one.end(), emb + f.n_embd));
  // A good call fills n_embd floats of unit length.
  REQUIRE(ember_session_embed(f.session, ids, 2, EMBER_POOLING_MODEL, true, emb, 4096) == EMBER_OK);
  double norm = 0;
  for (int32_t i = 0; i < f.n_embd; ++i) norm += static_cast<double>(emb[i]) * emb[i];
  CHECK(norm == Approx(1.0).epsilon(1e-6));
  out = Poison<ember_session>();
  CHECK(with([](ember_session_params& p) { p.n_ctx = -1; }) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(out == nullptr);
  // The functions without a status accept NULL.
  CHECK(ember_session_logits(nullptr) == nullptr);
  CHECK(ember_session_n_threads(nullptr) == 0);
  CHECK(ember_session_n_past(nullptr) == 0);
  ember_session_reset(nullptr);
  ember_session_cancel(nullptr);
  ember_session_free(nullptr);
  CHECK(ember_session_n_past(f.session) == 0);  // the failed evals changed nothing
}

TEST_CASE("c_api args: samplers", "[c_api][args]") {
  Fixture f;
  ember_sampler* out = nullptr;
  const float logits[4] = {1, 2, 3, 4};
  int32_t token = 0;
  ember_candidate cand[4];
  size_t n = 0;
  const char* name = nullptr;
  auto create = [&](std::vector<ember_sampler_spec> specs, int32_t n_vocab = 4) {
    return ember_sampler_create(nullptr, n_vocab, specs.data(), specs.size(), 1, &out);
  };
  auto spec = [](ember_sampler_type t) { return ember_sampler_spec_default(t); };
  RunCases({
      {"create: NULL out",
       [&] {
         const ember_sampler_spec s = spec(EMBER_SAMPLER_GREEDY);
         return ember_sampler_create(nullptr, 4, &s, 1, 1, nullptr);
       },
       EMBER_ERR_INVALID_ARGUMENT, "out is NULL"},
      {"create: NULL specs", [&] { return ember_sampler_create(nullptr, 4, nullptr, 2, 1, &out); },
       EMBER_ERR_INVALID_ARGUMENT, "specs is NULL"},
      {"create: no model and no n_vocab", [&] { return create({spec(EMBER_SAMPLER_GREEDY)}, 0); },
       EMBER_ERR_INVALID_ARGUMENT, "n_vocab must be > 0"},
      {"create: min_keep 0",
       [&] {
         ember_sampler_spec s = spec(EMBER_SAMPLER_TOP_K);
         s.min_keep = 0;
         return create({s, spec(EMBER_SAMPLER_GREEDY)});
       },
       EMBER_ERR_INVALID_ARGUMENT, "min-keep"},
      {"create: terminal sampler not last",
       [&] {
         return create({spec(EMBER_SAMPLER_GREEDY), spec(EMBER_SAMPLER_TOP_K)});
       },
       EMBER_ERR_INVALID_ARGUMENT, "terminal"},
      {"create: logit bias without arrays",
       [&] {
         ember_sampler_spec s = spec(EMBER_SAMPLER_LOGIT_BIAS);
         s.n_logit_bias = 2;
         return create({s, spec(EMBER_SAMPLER_GREEDY)});
       },
       EMBER_ERR_INVALID_ARGUMENT, "logit-bias"},
      {"from_params: NULL out",
       [&] { return ember_sampler_from_params(f.model, 0, nullptr, nullptr); },
       EMBER_ERR_INVALID_ARGUMENT, "out is NULL"},
      {"from_params: unknown sampler name",
       [&] {
         ember_sampling_params p = ember_sampling_default_params();
         p.samplers = "top_k;bogus";
         return ember_sampler_from_params(f.model, 0, &p, &out);
       },
       EMBER_ERR_INVALID_ARGUMENT, "bogus"},
      {"from_params: top_p out of range",
       [&] {
         ember_sampling_params p = ember_sampling_default_params();
         p.top_p = 2.0f;
         return ember_sampler_from_params(f.model, 0, &p, &out);
       },
       EMBER_ERR_INVALID_ARGUMENT, "top-p"},
      {"sample: NULL sampler",
       [&] { return ember_sampler_sample(nullptr, logits, 4, false, &token); },
       EMBER_ERR_INVALID_ARGUMENT, "sampler is NULL"},
      {"sample: NULL logits",
       [&] { return ember_sampler_sample(f.sampler, nullptr, 4, false, &token); },
       EMBER_ERR_INVALID_ARGUMENT, "logits is NULL"},
      {"sample: NULL token",
       [&] { return ember_sampler_sample(f.sampler, logits, 4, false, nullptr); },
       EMBER_ERR_INVALID_ARGUMENT, "token is NULL"},
      {"sample: wrong n_vocab",
       [&] { return ember_sampler_sample(f.sampler, logits, 3, false, &token); },
       EMBER_ERR_INVALID_ARGUMENT, "3 logits"},
      {"accept: NULL sampler", [&] { return ember_sampler_accept(nullptr, 0); },
       EMBER_ERR_INVALID_ARGUMENT, "sampler is NULL"},
      {"accept: token out of range", [&] { return ember_sampler_accept(f.sampler, 4); },
       EMBER_ERR_INVALID_ARGUMENT, "token 4"},
      {"candidates: NULL sampler", [&] { return ember_sampler_candidates(nullptr, cand, 4, &n); },
       EMBER_ERR_INVALID_ARGUMENT, "sampler is NULL"},
      {"candidates: NULL buf with a capacity",
       [&] { return ember_sampler_candidates(f.sampler, nullptr, 4, &n); },
       EMBER_ERR_INVALID_ARGUMENT, "buf is NULL"},
      {"trace: NULL sampler", [&] { return ember_sampler_trace(nullptr, 0, &name, cand, 4, &n); },
       EMBER_ERR_INVALID_ARGUMENT, "sampler is NULL"},
      {"trace: no such stage",
       [&] { return ember_sampler_trace(f.sampler, 7, &name, cand, 4, &n); },
       EMBER_ERR_INVALID_ARGUMENT, "no such stage"},
  });
  out = Poison<ember_sampler>();
  CHECK(create({spec(EMBER_SAMPLER_TOP_K)}) == EMBER_ERR_INVALID_ARGUMENT);  // no terminal
  CHECK(out == nullptr);
  CHECK(ember_sampler_trace_stages(nullptr) == 0);
  ember_sampler_reset(nullptr);
  ember_sampler_free(nullptr);
}

TEST_CASE("c_api args: generation", "[c_api][args]") {
  Fixture f;
  const int32_t prompt[2] = {464, 2068};
  ember_generate_stats st;
  auto with = [&](auto change) {
    ember_generate_params p = ember_generate_default_params();
    p.n_predict = 2;
    change(p);
    return ember_generate(f.session, prompt, 2, &p, nullptr, nullptr, &st);
  };
  const char* null_stop[1] = {nullptr};
  RunCases({
      {"generate: NULL session",
       [&] { return ember_generate(nullptr, prompt, 2, nullptr, nullptr, nullptr, &st); },
       EMBER_ERR_INVALID_ARGUMENT, "session is NULL"},
      {"generate: NULL prompt",
       [&] { return ember_generate(f.session, nullptr, 2, nullptr, nullptr, nullptr, &st); },
       EMBER_ERR_INVALID_ARGUMENT, "prompt is empty"},
      {"generate: empty prompt",
       [&] { return ember_generate(f.session, prompt, 0, nullptr, nullptr, nullptr, &st); },
       EMBER_ERR_INVALID_ARGUMENT, "prompt is empty"},
      {"generate: id outside the vocabulary",
       [&] {
         const int32_t bad[1] = {-9};
         return ember_generate(f.session, bad, 1, nullptr, nullptr, nullptr, &st);
       },
       EMBER_ERR_INVALID_ARGUMENT, "token id -9"},
      {"generate: n_predict < 0",
       [&] { return with([](ember_generate_params& p) { p.n_predict = -1; }); },
       EMBER_ERR_INVALID_ARGUMENT, "n_predict"},
      {"generate: n_stop without stop",
       [&] { return with([](ember_generate_params& p) { p.n_stop = 1; }); },
       EMBER_ERR_INVALID_ARGUMENT, "stop is NULL"},
      {"generate: a NULL stop string",
       [&] {
         return with([&](ember_generate_params& p) {
           p.stop = null_stop;
           p.n_stop = 1;
         });
       },
       EMBER_ERR_INVALID_ARGUMENT, "stop string is NULL"},
      {"generate: n_probs too large",
       [&] { return with([](ember_generate_params& p) { p.n_probs = 5000; }); },
       EMBER_ERR_INVALID_ARGUMENT, "n-probs"},
      {"generate: beams < 0", [&] { return with([](ember_generate_params& p) { p.beams = -1; }); },
       EMBER_ERR_INVALID_ARGUMENT, "beams"},
      {"generate: temperature < 0",
       [&] { return with([](ember_generate_params& p) { p.temperature = -1.0f; }); },
       EMBER_ERR_INVALID_ARGUMENT, "temperature"},
      {"generate_text: NULL session",
       [&] { return ember_generate_text(nullptr, "Hi", nullptr, nullptr, nullptr, &st); },
       EMBER_ERR_INVALID_ARGUMENT, "session is NULL"},
      {"generate_text: NULL prompt",
       [&] { return ember_generate_text(f.session, nullptr, nullptr, nullptr, nullptr, &st); },
       EMBER_ERR_INVALID_ARGUMENT, "prompt is NULL"},
      {"generate_text: a prompt without tokens",
       [&] { return ember_generate_text(f.session, "", nullptr, nullptr, nullptr, &st); },
       EMBER_ERR_INVALID_ARGUMENT, "no tokens"},
  });
  CHECK(ember_session_n_past(f.session) == 0);  // rejected before running anything
}

TEST_CASE("c_api args: quantization", "[c_api][args]") {
  const std::string out = ember::test::TempPath("q.gguf");
  const std::string in = ember::test::DefaultTinyModel();
  RunCases({
      {"quantize: NULL in",
       [&] { return ember_quantize(nullptr, out.c_str(), "Q8_0", nullptr, nullptr); },
       EMBER_ERR_INVALID_ARGUMENT, "NULL path"},
      {"quantize: NULL out",
       [&] { return ember_quantize(in.c_str(), nullptr, "Q8_0", nullptr, nullptr); },
       EMBER_ERR_INVALID_ARGUMENT, "NULL path"},
      {"quantize: NULL type",
       [&] { return ember_quantize(in.c_str(), out.c_str(), nullptr, nullptr, nullptr); },
       EMBER_ERR_INVALID_ARGUMENT, "type is NULL"},
      {"quantize: unknown type",
       [&] { return ember_quantize(in.c_str(), out.c_str(), "Q3_X", nullptr, nullptr); },
       EMBER_ERR_INVALID_ARGUMENT, "Q3_X"},
      {"quantize: missing input",
       [&] { return ember_quantize("/nonexistent.gguf", out.c_str(), "Q8_0", nullptr, nullptr); },
       EMBER_ERR_IO, "/nonexistent.gguf"},
      {"quantize: a llama.cpp mix ember cannot write yet",
       [&] { return ember_quantize(in.c_str(), out.c_str(), "IQ2_XS", nullptr, nullptr); },
       EMBER_ERR_UNSUPPORTED, "cannot write IQ2_XS"},
      {"quantize_ex: NULL params",
       [&] { return ember_quantize_ex(in.c_str(), out.c_str(), nullptr); },
       EMBER_ERR_INVALID_ARGUMENT, "params is NULL"},
      {"quantize_ex: negative threads",
       [&] {
         ember_quantize_params p = ember_quantize_default_params();
         p.n_threads = -1;
         return ember_quantize_ex(in.c_str(), out.c_str(), &p);
       },
       EMBER_ERR_INVALID_ARGUMENT, "n_threads"},
  });
  CHECK_FALSE(ember::test::FileExists(out));  // nothing half-written
}

TEST_CASE("c_api: quantize_ex reports each tensor's type and why", "[c_api]") {
  const std::string out = ember::test::TempPath("q_ex.gguf");
  const std::string in = ember::test::DefaultTinyModel();
  ember_quantize_params p = ember_quantize_default_params();
  CHECK(std::string(p.type) == "Q8_0");
  p.type = "Q4_K_M";
  p.n_threads = 2;
  struct Seen {
    int tensors = 0, noted = 0;
  } seen;
  p.user_data = &seen;
  p.on_tensor = [](const char* tensor, const char* type, const char* note, void* u) {
    auto* s = static_cast<Seen*>(u);
    ++s->tensors;
    if (note[0] != '\0') ++s->noted;
    CHECK(tensor[0] != '\0');
    CHECK(type[0] != '\0');
  };
  REQUIRE(ember_quantize_ex(in.c_str(), out.c_str(), &p) == EMBER_OK);
  CHECK(seen.tensors > 0);
  // The tiny model's 64 columns are not whole 256-blocks: every matrix falls back.
  CHECK(seen.noted == seen.tensors);
  ember_model* m = nullptr;
  REQUIRE(ember_model_load(out.c_str(), nullptr, &m) == EMBER_OK);
  ember_model_free(m);
}
