// The C API: handles wrap the C++ objects; every entry point catches
// everything, so no exception crosses the boundary.
#include <cstddef>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>

#include "ember.h"
#include "ops/kernels.h"
#include "platform/bandwidth.h"
#include "platform/scheduler.h"
#include "runtime/capi/c_api_internal.h"
#include "runtime/decoding/generate.h"
#include "runtime/model/model.h"
#include "runtime/model/quantize_model.h"
#include "runtime/session/session.h"
#include "sampling/logprobs.h"

using namespace ember::capi;

namespace ember::capi {

ember_status GenerateParamsFromC(const ember_generate_params& p, ember::GenerateParams* gp) {
  EMBER_REQUIRE_ARG(p.n_stop == 0 || p.stop != nullptr, "ember_generate: stop is NULL");
  gp->n_predict = p.n_predict;
  gp->ignore_eos = p.ignore_eos;
  for (size_t i = 0; i < p.n_stop; ++i) {
    EMBER_REQUIRE_ARG(p.stop[i] != nullptr, "ember_generate: a stop string is NULL");
    gp->stop.emplace_back(p.stop[i]);
  }
  gp->n_probs = p.n_probs;
  gp->logprobs = p.logprobs;
  gp->beams = p.beams;
  gp->length_penalty = p.length_penalty;
  gp->reuse_prefix = p.reuse_prefix;
  if (p.sampler != nullptr) {
    gp->chain = SamplerChainOf(p.sampler);
  } else {
    // The v0 meaning of temperature: a plain softmax(logits / T) draw.
    EMBER_REQUIRE_ARG(p.temperature >= 0.0f, "temperature must be >= 0");
    gp->sampling = ember::SamplingParams();
    gp->sampling.temperature = p.temperature;
    gp->sampling.top_k = 0;
    gp->sampling.top_p = 1.0f;
    gp->sampling.min_p = 0.0f;
    gp->sampling.seed = p.seed;
  }
  return EMBER_OK;
}

void StatsToC(const ember::GenerateResult& r, const std::vector<std::string>& stop,
              ember_generate_stats* stats) {
  stats->n_prompt = static_cast<int32_t>(r.n_prompt);
  stats->n_reused = static_cast<int32_t>(r.n_reused);
  stats->n_gen = static_cast<int32_t>(r.tokens.size());
  stats->finish_reason = static_cast<ember_finish_reason>(r.finish);
  stats->stop_index = -1;
  for (size_t i = 0; i < stop.size(); ++i) {
    if (r.finish == ember::FinishReason::kStop && stop[i] == r.stop) {
      stats->stop_index = static_cast<int32_t>(i);
      break;
    }
  }
  stats->logprob = r.logprob;
  stats->prefill_seconds = r.prefill_seconds;
  stats->decode_seconds = r.decode_seconds;
  // Tokens found in the cache (reuse_prefix) were not computed.
  stats->prefill_tokens_per_second =
      r.prefill_seconds > 0 ? static_cast<double>(r.n_prompt - r.n_reused) / r.prefill_seconds
                            : 0.0;
  stats->decode_tokens_per_second =
      r.decode_seconds > 0 ? static_cast<double>(r.n_decode_evals) / r.decode_seconds : 0.0;
}

}  // namespace ember::capi

namespace {

// log softmax(logits)[id], in double until the end.
float LogProbOf(const float* logits, size_t n_vocab, int32_t id) {
  return static_cast<float>(static_cast<double>(logits[id]) -
                            ember::LogSumExp(logits, static_cast<int64_t>(n_vocab)));
}

// The body of ember_generate and ember_generate_text, after they checked the
// session and prompt and cleared any earlier cancel request. Runs inside Guard.
ember_status GenerateIds(ember_session* session, const int32_t* prompt, size_t n_prompt,
                         const ember_generate_params* params, ember_piece_fn on_piece,
                         void* user_data, ember_generate_stats* stats) {
  const ember_generate_params p = params ? *params : ember_generate_default_params();
  ember::GenerateParams gp;
  const ember_status parsed = GenerateParamsFromC(p, &gp);
  if (parsed != EMBER_OK) return parsed;
  std::string piece_copy;
  const ember::PieceFn fn = PieceFnFromC(on_piece, user_data, &piece_copy);
  ember::GenerateResult r;
  ember::TokenFn token_fn;
  if (p.on_token || p.on_token_info) {
    token_fn = [&](int32_t token) {
      if (p.on_token && !p.on_token(token, user_data)) return false;
      const size_t i = r.tokens.size() - 1;
      if (p.on_token_info && i < r.token_logprobs.size()) {  // not with beam search
        std::vector<ember_token_prob> top;
        if (i < r.top_probs.size()) {
          for (const ember::TokenProb& t : r.top_probs[i]) top.push_back({t.id, t.p});
        }
        ember_token_info info{token, r.token_logprobs[i], top.data(), top.size()};
        if (!p.on_token_info(&info, user_data)) return false;
      }
      return true;
    };
  }
  ember_status s = Report(ember::Generate(
      *session->session, std::vector<int32_t>(prompt, prompt + n_prompt), gp, fn, token_fn, &r));
  if (s != EMBER_OK) return s;
  if (stats) StatsToC(r, gp.stop, stats);
  return EMBER_OK;
}

}  // namespace

extern "C" {

const char* ember_status_str(ember_status status) {
  switch (EnumInt(status)) {
    case EMBER_OK:
      return "EMBER_OK";
    case EMBER_ERR_INVALID_ARGUMENT:
      return "EMBER_ERR_INVALID_ARGUMENT";
    case EMBER_ERR_IO:
      return "EMBER_ERR_IO";
    case EMBER_ERR_BAD_FORMAT:
      return "EMBER_ERR_BAD_FORMAT";
    case EMBER_ERR_UNSUPPORTED:
      return "EMBER_ERR_UNSUPPORTED";
    case EMBER_ERR_OUT_OF_MEMORY:
      return "EMBER_ERR_OUT_OF_MEMORY";
    case EMBER_ERR_CONTEXT_OVERFLOW:
      return "EMBER_ERR_CONTEXT_OVERFLOW";
    case EMBER_ERR_CANCELLED:
      return "EMBER_ERR_CANCELLED";
    case EMBER_ERR_BUFFER_TOO_SMALL:
      return "EMBER_ERR_BUFFER_TOO_SMALL";
    case EMBER_ERR_INTERNAL:
      return "EMBER_ERR_INTERNAL";
  }
  return "EMBER_ERR_UNKNOWN";
}

const char* ember_last_error(void) { return g_last_error.c_str(); }

const char* ember_version(void) { return EMBER_VERSION_STRING; }

int32_t ember_api_version(void) { return EMBER_API_VERSION; }

ember_model_params ember_model_default_params(void) {
  ember_model_params p;
  p.progress = nullptr;
  p.progress_user_data = nullptr;
  p.vocab_only = false;
  p.numerics = EMBER_NUMERICS_EMBER;
  p.float_weights = EMBER_FLOAT_WEIGHTS_FLOAT;
  p.mmap_mode = EMBER_MMAP_AUTO;
  return p;
}

// Fields added in what was padding keep the layout of API version 1.
static_assert(offsetof(ember_model_params, mmap_mode) == 2 * sizeof(void*) + 3 &&
                  sizeof(ember_model_params) == 3 * sizeof(void*),
              "ember_model_params must keep the size and layout of API version 1");
static_assert(offsetof(ember_session_params, swa_full) == 21 && sizeof(ember_session_params) == 28,
              "ember_session_params must keep the size and layout of API version 1");

ember_status ember_model_load(const char* path, const ember_model_params* params,
                              ember_model** out) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(out != nullptr, "ember_model_load: out is NULL");
    *out = nullptr;
    EMBER_REQUIRE_ARG(path != nullptr, "ember_model_load: path is NULL");
    ember_model_params p = params ? *params : ember_model_default_params();
    ember::LoadProgressFn progress;
    if (p.progress) {
      progress = [p](float f) { return p.progress(f, p.progress_user_data); };
    }
    if (p.numerics != EMBER_NUMERICS_EMBER && p.numerics != EMBER_NUMERICS_GGML) {
      return Fail(EMBER_ERR_INVALID_ARGUMENT, "ember_model_load: numerics " +
                                                  std::to_string(p.numerics) +
                                                  " is not an ember_numerics value");
    }
    if (p.float_weights != EMBER_FLOAT_WEIGHTS_FLOAT &&
        p.float_weights != EMBER_FLOAT_WEIGHTS_INT8) {
      return Fail(EMBER_ERR_INVALID_ARGUMENT, "ember_model_load: float_weights " +
                                                  std::to_string(p.float_weights) +
                                                  " is not an ember_float_weights value");
    }
    const ember::Numerics numerics =
        p.numerics == EMBER_NUMERICS_GGML ? ember::Numerics::kGgml : ember::Numerics::kEmber;
    if (p.mmap_mode > EMBER_MMAP_OFF) {
      return Fail(EMBER_ERR_INVALID_ARGUMENT, "ember_model_load: mmap_mode " +
                                                  std::to_string(p.mmap_mode) +
                                                  " is not an ember_mmap_mode value");
    }
    ember::LoadOptions o;
    o.vocab_only = p.vocab_only;
    o.numerics = numerics;
    o.float_weights = p.float_weights == EMBER_FLOAT_WEIGHTS_INT8 ? ember::FloatWeights::kInt8
                                                                  : ember::FloatWeights::kFloat;
    o.map_mode = p.mmap_mode == EMBER_MMAP_ON    ? ember::MapMode::kMap
                 : p.mmap_mode == EMBER_MMAP_OFF ? ember::MapMode::kCopy
                                                 : ember::MapMode::kAuto;
    auto m = std::make_unique<ember_model>();
    ember_status s = Report(ember::Model::Load(path, o, progress, &m->model));
    if (s != EMBER_OK) return s;
    *out = m.release();
    return EMBER_OK;
  });
}

void ember_model_free(ember_model* model) { delete model; }

ember_status ember_model_get_info(const ember_model* model, ember_model_info* out) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(model != nullptr && out != nullptr, "ember_model_get_info: NULL argument");
    const ember::ModelConfig& hp = model->model->config();
    const ember::VocabData& v = model->model->tokenizer().vocab();
    out->architecture = hp.arch.c_str();
    out->name = hp.name.c_str();
    out->n_vocab = static_cast<int32_t>(hp.n_vocab);
    out->n_embd = static_cast<int32_t>(hp.n_embd);
    out->n_layer = static_cast<int32_t>(hp.n_layer);
    out->n_head = static_cast<int32_t>(hp.n_head);
    out->n_head_kv = static_cast<int32_t>(hp.n_head_kv);
    out->head_dim = static_cast<int32_t>(hp.head_dim);
    out->n_ff = static_cast<int32_t>(hp.n_ff);
    out->n_ctx_train = static_cast<int32_t>(hp.n_ctx_train);
    out->rope_freq_base = hp.ropes.empty() ? 0.0f : hp.ropes[0].freq_base;
    out->rms_eps = hp.rms_eps;
    out->tied_output = hp.tied_output;
    uint64_t n_params = 0;
    for (const auto& t : model->model->gguf().tensors()) n_params += t.n_elements();
    out->n_params = n_params;
    out->weight_bytes = model->model->weight_bytes();
    out->loaded_bytes = model->model->loaded_weight_bytes();
    out->isa = ember::IsaName(ember::Active().isa);
    out->bos_token = v.bos_id;
    out->eos_token = v.eos_id;
    out->add_bos = v.add_bos;
    return EMBER_OK;
  });
}

ember_status ember_model_describe_tensors(const ember_model* model, char* buf, size_t buf_size,
                                          size_t* needed) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(model != nullptr, "ember_model_describe_tensors: model is NULL");
    EMBER_REQUIRE_ARG(buf != nullptr || buf_size == 0,
                      "ember_model_describe_tensors: buf is NULL but buf_size is not 0");
    std::string text;
    for (const auto& t : model->model->gguf().tensors()) {
      text += t.name + " " + ember::GgmlTypeName(t.type) + " [";
      for (uint32_t d = 0; d < t.n_dims; ++d) text += (d ? ", " : "") + std::to_string(t.ne[d]);
      text += "] " + std::to_string(t.n_bytes) + "\n";
    }
    if (needed) *needed = text.size() + 1;
    if (buf_size < text.size() + 1) {
      return Fail(EMBER_ERR_BUFFER_TOO_SMALL, "ember_model_describe_tensors: buffer too small");
    }
    std::memcpy(buf, text.c_str(), text.size() + 1);
    return EMBER_OK;
  });
}

ember_status ember_model_check_runnable(const ember_model* model) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(model != nullptr, "ember_model_check_runnable: model is NULL");
    return Report(model->model->runnable());
  });
}

ember_status ember_model_meta_string(const ember_model* model, const char* key, char* buf,
                                     size_t buf_size, size_t* needed) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(model != nullptr && key != nullptr,
                      "ember_model_meta_string: model or key is NULL");
    EMBER_REQUIRE_ARG(buf != nullptr || buf_size == 0,
                      "ember_model_meta_string: buf is NULL but buf_size is not 0");
    const ember::GgufValue* v = model->model->gguf().Find(key);
    if (v == nullptr || v->type != ember::GgufType::kString) {
      return Fail(EMBER_ERR_INVALID_ARGUMENT,
                  std::string("ember_model_meta_string: '") + key +
                      (v == nullptr ? "' is not in the file" : "' is not a string"));
    }
    if (needed) *needed = v->str.size() + 1;
    if (buf_size < v->str.size() + 1) {
      return Fail(EMBER_ERR_BUFFER_TOO_SMALL, "ember_model_meta_string: buffer too small");
    }
    std::memcpy(buf, v->str.data(), v->str.size());
    buf[v->str.size()] = '\0';
    return EMBER_OK;
  });
}

double ember_measure_read_bandwidth(int32_t n_threads) {
  try {
    // As many threads as a session may have (Session::Create's limit).
    return ember::MeasureReadBandwidth(n_threads < 1 ? 1 : n_threads > 1024 ? 1024 : n_threads);
  } catch (...) {
    return 0.0;
  }
}

ember_status ember_get_thread_plan(ember_thread_plan* out) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(out != nullptr, "ember_get_thread_plan: out is NULL");
    const ember::ThreadPlan& plan = ember::HostThreadPlan();
    out->n_threads = plan.n_threads;
    out->n_threads_batch = plan.n_threads_batch;
    out->n_cpus = plan.n_cpus;
    out->n_big = static_cast<int32_t>(plan.cpus.size());
    out->decode_read_gbps = plan.decode_gbps;
    out->peak_read_gbps = plan.peak_gbps;
    return EMBER_OK;
  });
}

ember_status ember_tokenize(const ember_model* model, const char* text, size_t text_len,
                            bool add_special, bool parse_special, int32_t* tokens, size_t capacity,
                            size_t* n_tokens) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(model != nullptr, "ember_tokenize: model is NULL");
    EMBER_REQUIRE_ARG(text != nullptr || text_len == 0, "ember_tokenize: text is NULL");
    EMBER_REQUIRE_ARG(n_tokens != nullptr, "ember_tokenize: n_tokens is NULL");
    EMBER_REQUIRE_ARG(tokens != nullptr || capacity == 0,
                      "ember_tokenize: tokens is NULL but capacity is not 0");
    std::vector<int32_t> ids = model->model->tokenizer().Encode(
        std::string_view(text ? text : "", text_len), add_special, parse_special);
    *n_tokens = ids.size();
    if (ids.size() > capacity) {
      return Fail(EMBER_ERR_BUFFER_TOO_SMALL,
                  "ember_tokenize: " + std::to_string(ids.size()) + " tokens need a larger buffer");
    }
    if (!ids.empty()) std::memcpy(tokens, ids.data(), ids.size() * sizeof(int32_t));
    return EMBER_OK;
  });
}

ember_status ember_token_to_piece(const ember_model* model, int32_t token, bool render_special,
                                  char* buf, size_t buf_size, size_t* n_bytes) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(model != nullptr, "ember_token_to_piece: model is NULL");
    EMBER_REQUIRE_ARG(n_bytes != nullptr, "ember_token_to_piece: n_bytes is NULL");
    EMBER_REQUIRE_ARG(buf != nullptr || buf_size == 0,
                      "ember_token_to_piece: buf is NULL but buf_size is not 0");
    const ember::Tokenizer& tok = model->model->tokenizer();
    if (token < 0 || token >= tok.n_vocab()) {
      return Fail(EMBER_ERR_INVALID_ARGUMENT,
                  "token id " + std::to_string(token) + " is outside the vocabulary");
    }
    std::string piece = tok.TokenToPiece(token, render_special);
    *n_bytes = piece.size();
    if (piece.size() > buf_size) {
      return Fail(
          EMBER_ERR_BUFFER_TOO_SMALL,
          "ember_token_to_piece: " + std::to_string(piece.size()) + " bytes need a larger buffer");
    }
    if (!piece.empty()) std::memcpy(buf, piece.data(), piece.size());
    return EMBER_OK;
  });
}

ember_status ember_detokenize(const ember_model* model, const int32_t* tokens, size_t n_tokens,
                              bool render_special, char* buf, size_t buf_size, size_t* needed) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(model != nullptr, "ember_detokenize: model is NULL");
    EMBER_REQUIRE_ARG(tokens != nullptr || n_tokens == 0, "ember_detokenize: tokens is NULL");
    EMBER_REQUIRE_ARG(needed != nullptr, "ember_detokenize: needed is NULL");
    EMBER_REQUIRE_ARG(buf != nullptr || buf_size == 0,
                      "ember_detokenize: buf is NULL but buf_size is not 0");
    const ember::Tokenizer& tok = model->model->tokenizer();
    for (size_t i = 0; i < n_tokens; ++i) {
      if (tokens[i] < 0 || tokens[i] >= tok.n_vocab()) {
        return Fail(EMBER_ERR_INVALID_ARGUMENT,
                    "ember_detokenize: token id " + std::to_string(tokens[i]) + " at index " +
                        std::to_string(i) + " is outside the vocabulary (0.." +
                        std::to_string(tok.n_vocab() - 1) + ")");
      }
    }
    const std::string text =
        tok.Decode(std::vector<int32_t>(tokens, tokens + n_tokens), render_special);
    *needed = text.size() + 1;
    if (buf_size >= text.size() + 1) {
      std::memcpy(buf, text.data(), text.size());
      buf[text.size()] = '\0';
      return EMBER_OK;
    }
    if (buf_size > 0) {
      // The longest prefix that fits, not ending inside a UTF-8 character:
      // back off over continuation bytes (at most three, as a character has
      // at most four bytes; longer runs are not UTF-8 and are cut anywhere).
      size_t n = buf_size - 1;
      for (int back = 0; back < 3 && n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80;
           ++back) {
        --n;
      }
      if (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) n = buf_size - 1;
      std::memcpy(buf, text.data(), n);
      buf[n] = '\0';
    }
    return Fail(EMBER_ERR_BUFFER_TOO_SMALL,
                "ember_detokenize: the text needs " + std::to_string(text.size() + 1) +
                    " bytes (with its NUL), the buffer has " + std::to_string(buf_size));
  });
}

ember_session_params ember_session_default_params(void) {
  ember_session_params p;
  p.n_ctx = 0;
  p.n_threads = 0;
  p.n_threads_batch = 0;
  p.n_batch = 0;  // the model's default: 256, or llama.cpp's 512 with ggml numerics
  p.kv_type = EMBER_KV_F16;
  p.context_shift = true;
  p.swa_full = false;
  p.n_keep = static_cast<int32_t>(ember::kDefaultKeep);
  return p;
}

namespace {

// ember_session_params -> SessionParams, checked.
ember_status SessionParamsFromC(const ember_model* model, const ember_session_params* params,
                                const char* fn, ember::SessionParams* sp) {
  ember_session_params p = params ? *params : ember_session_default_params();
  sp->n_ctx = p.n_ctx;
  sp->n_threads = p.n_threads;
  sp->n_threads_batch = p.n_threads_batch;
  if (p.n_batch == 0) {  // llama.cpp's n_ubatch decides its attention path: match it
    sp->n_batch =
        model->model->numerics() == ember::Numerics::kGgml ? 512 : ember::SessionParams{}.n_batch;
  } else {
    sp->n_batch = p.n_batch;
  }
  switch (EnumInt(p.kv_type)) {
    case EMBER_KV_F16:
      sp->kv_type = ember::KvType::kF16;
      break;
    case EMBER_KV_Q8:
      sp->kv_type = ember::KvType::kQ8;
      break;
    case EMBER_KV_F32:
      sp->kv_type = ember::KvType::kF32;
      break;
    default:
      return Fail(EMBER_ERR_INVALID_ARGUMENT, std::string(fn) + ": kv_type " +
                                                  std::to_string(EnumInt(p.kv_type)) +
                                                  " is not an ember_kv_type");
  }
  sp->context_shift = p.context_shift;
  sp->swa_full = p.swa_full;
  sp->n_keep = p.n_keep;
  return EMBER_OK;
}

}  // namespace

ember_session_limits ember_session_limits_default(void) {
  ember_session_limits l;
  l.max_memory = 0;
  return l;
}

ember_status ember_session_create_ex(const ember_model* model, const ember_session_params* params,
                                     const ember_session_limits* limits, ember_session** out) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(out != nullptr, "ember_session_create: out is NULL");
    *out = nullptr;
    EMBER_REQUIRE_ARG(model != nullptr, "ember_session_create: model is NULL");
    ember::SessionParams sp;
    ember_status st = SessionParamsFromC(model, params, "ember_session_create", &sp);
    if (st != EMBER_OK) return st;
    sp.max_memory = limits ? limits->max_memory : 0;
    auto s = std::make_unique<ember_session>();
    st = Report(ember::Session::Create(*model->model, sp, &s->session));
    if (st != EMBER_OK) return st;
    *out = s.release();
    return EMBER_OK;
  });
}

ember_status ember_session_create(const ember_model* model, const ember_session_params* params,
                                  ember_session** out) {
  return ember_session_create_ex(model, params, nullptr, out);
}

ember_status ember_session_memory_needed(const ember_model* model,
                                         const ember_session_params* params, uint64_t* kv_bytes,
                                         uint64_t* scratch_bytes) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(model != nullptr, "ember_session_memory_needed: model is NULL");
    ember::SessionParams sp;
    ember_status st = SessionParamsFromC(model, params, "ember_session_memory_needed", &sp);
    if (st != EMBER_OK) return st;
    ember::SessionPlan plan;
    st = Report(ember::Session::Plan(*model->model, sp, &plan));
    if (st != EMBER_OK) return st;
    if (kv_bytes) *kv_bytes = plan.kv_bytes;
    if (scratch_bytes) *scratch_bytes = plan.scratch_bytes;
    return EMBER_OK;
  });
}

void ember_session_free(ember_session* session) { delete session; }

ember_status ember_session_eval(ember_session* session, const int32_t* tokens, size_t n_tokens) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(session != nullptr, "ember_session_eval: session is NULL");
    EMBER_REQUIRE_ARG(tokens != nullptr && n_tokens > 0, "ember_session_eval: no tokens");
    session->session->ClearCancel();
    return Report(session->session->Decode(std::vector<int32_t>(tokens, tokens + n_tokens)));
  });
}

ember_status ember_session_embed(ember_session* session, const int32_t* tokens, size_t n_tokens,
                                 ember_pooling pooling, bool normalize, float* out,
                                 size_t out_len) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(session != nullptr, "ember_session_embed: session is NULL");
    EMBER_REQUIRE_ARG(tokens != nullptr && n_tokens > 0, "ember_session_embed: no tokens");
    EMBER_REQUIRE_ARG(out != nullptr, "ember_session_embed: out is NULL");
    static constexpr ember::Pooling kPoolings[] = {ember::Pooling::kModel, ember::Pooling::kMean,
                                                   ember::Pooling::kFirst, ember::Pooling::kLast,
                                                   ember::Pooling::kNone};
    const int p = EnumInt(pooling);  // a C caller may pass any int
    EMBER_REQUIRE_ARG(
        p >= EMBER_POOLING_MODEL && p <= EMBER_POOLING_NONE,
        "ember_session_embed: pooling " + std::to_string(p) + " is not an ember_pooling");
    ember::Session& s = *session->session;
    s.ClearCancel();
    std::vector<float> v;
    const ember_status st = Report(
        s.Embed(std::vector<int32_t>(tokens, tokens + n_tokens), kPoolings[p], normalize, &v));
    if (st != EMBER_OK) return st;
    if (out_len < v.size()) {
      return Fail(EMBER_ERR_INVALID_ARGUMENT,
                  "ember_session_embed: out holds " + std::to_string(out_len) +
                      " floats, the embedding needs " + std::to_string(v.size()));
    }
    std::copy(v.begin(), v.end(), out);
    return EMBER_OK;
  });
}

ember_status ember_session_embed_batch(ember_session* session, const int32_t* const* inputs,
                                       const size_t* n_tokens, size_t n_inputs,
                                       ember_pooling pooling, bool normalize, float* out,
                                       size_t out_len) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(session != nullptr, "ember_session_embed_batch: session is NULL");
    EMBER_REQUIRE_ARG(inputs != nullptr && n_tokens != nullptr && n_inputs > 0,
                      "ember_session_embed_batch: no inputs");
    EMBER_REQUIRE_ARG(out != nullptr, "ember_session_embed_batch: out is NULL");
    const int p = EnumInt(pooling);  // a C caller may pass any int
    EMBER_REQUIRE_ARG(p >= EMBER_POOLING_MODEL && p < EMBER_POOLING_NONE,
                      "ember_session_embed_batch: pooling " + std::to_string(p) +
                          " is not one vector per input (model, mean, first or last)");
    ember::Session& s = *session->session;
    const size_t n_embd = static_cast<size_t>(s.model().config().n_embd);
    if (out_len / n_embd < n_inputs) {
      return Fail(EMBER_ERR_INVALID_ARGUMENT,
                  "ember_session_embed_batch: out holds " + std::to_string(out_len) +
                      " floats, the embeddings need " + std::to_string(n_inputs * n_embd));
    }
    std::vector<std::vector<int32_t>> in(n_inputs);
    for (size_t i = 0; i < n_inputs; ++i) {
      if (inputs[i] == nullptr || n_tokens[i] == 0) {
        return Fail(EMBER_ERR_INVALID_ARGUMENT,
                    "ember_session_embed_batch: input " + std::to_string(i) + " has no tokens");
      }
      in[i].assign(inputs[i], inputs[i] + n_tokens[i]);
    }
    s.ClearCancel();
    static constexpr ember::Pooling kPoolings[] = {ember::Pooling::kModel, ember::Pooling::kMean,
                                                   ember::Pooling::kFirst, ember::Pooling::kLast};
    std::vector<std::vector<float>> v;
    const ember_status st = Report(s.EmbedMany(in, kPoolings[p], normalize, &v));
    if (st != EMBER_OK) return st;
    for (size_t i = 0; i < n_inputs; ++i) std::copy(v[i].begin(), v[i].end(), out + i * n_embd);
    return EMBER_OK;
  });
}

ember_status ember_session_score(ember_session* session, const int32_t* tokens, size_t n_tokens,
                                 float* logprobs) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(session != nullptr, "ember_session_score: session is NULL");
    EMBER_REQUIRE_ARG(tokens != nullptr && n_tokens > 0, "ember_session_score: no tokens");
    EMBER_REQUIRE_ARG(logprobs != nullptr, "ember_session_score: logprobs is NULL");
    ember::Session& s = *session->session;
    s.ClearCancel();
    const size_t n_vocab = s.logits().size();
    for (size_t i = 0; i < n_tokens; ++i) {
      if (tokens[i] < 0 || static_cast<size_t>(tokens[i]) >= n_vocab) {
        return Fail(EMBER_ERR_INVALID_ARGUMENT,
                    "ember_session_score: token " + std::to_string(tokens[i]) + " at index " +
                        std::to_string(i) + " is not in the vocabulary");
      }
    }
    // The token before the first is scored with the logits the session has.
    logprobs[0] = s.has_logits() ? LogProbOf(s.logits().data(), n_vocab, tokens[0])
                                 : std::numeric_limits<float>::quiet_NaN();
    std::vector<float> all;
    ember_status st = Report(s.Decode(std::vector<int32_t>(tokens, tokens + n_tokens), &all));
    if (st != EMBER_OK) return st;
    // all: [n_tokens, n_vocab]; row i predicts tokens[i + 1].
    for (size_t i = 0; i + 1 < n_tokens; ++i) {
      logprobs[i + 1] = LogProbOf(&all[i * n_vocab], n_vocab, tokens[i + 1]);
    }
    return EMBER_OK;
  });
}

const float* ember_session_logits(const ember_session* session) {
  if (session == nullptr || !session->session->has_logits()) return nullptr;
  return session->session->logits().data();
}

int32_t ember_session_n_threads(const ember_session* session) {
  return session ? session->session->n_threads() : 0;
}

int32_t ember_session_n_threads_batch(const ember_session* session) {
  return session ? session->session->n_threads_batch() : 0;
}

int32_t ember_session_n_past(const ember_session* session) {
  return session ? static_cast<int32_t>(session->session->n_past()) : 0;
}

int32_t ember_session_n_ctx(const ember_session* session) {
  return session ? static_cast<int32_t>(session->session->n_ctx()) : 0;
}

int32_t ember_session_n_dropped(const ember_session* session) {
  return session ? static_cast<int32_t>(session->session->n_dropped()) : 0;
}

size_t ember_session_kv_bytes(const ember_session* session) {
  return session ? session->session->kv_bytes() : 0;
}

ember_status ember_session_save(const ember_session* session, const char* path) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(session != nullptr, "ember_session_save: session is NULL");
    EMBER_REQUIRE_ARG(path != nullptr && *path != '\0',
                      "ember_session_save: path is NULL or empty");
    return Report(session->session->SaveState(path));
  });
}

ember_status ember_session_load(ember_session* session, const char* path) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(session != nullptr, "ember_session_load: session is NULL");
    EMBER_REQUIRE_ARG(path != nullptr && *path != '\0',
                      "ember_session_load: path is NULL or empty");
    return Report(session->session->LoadState(path));
  });
}

void ember_session_reset(ember_session* session) {
  if (session == nullptr) return;
  session->session->Reset();
}

void ember_session_cancel(ember_session* session) {
  if (session != nullptr) session->session->RequestCancel();
}

const char* ember_finish_reason_str(ember_finish_reason reason) {
  switch (EnumInt(reason)) {
    case EMBER_FINISH_LENGTH:
      return "length";
    case EMBER_FINISH_EOS:
      return "eos";
    case EMBER_FINISH_STOP:
      return "stop";
    case EMBER_FINISH_CANCELLED:
      return "cancelled";
    case EMBER_FINISH_GRAMMAR:
      return "grammar";
  }
  return "unknown";
}

ember_generate_params ember_generate_default_params(void) {
  ember_generate_params p;
  std::memset(&p, 0, sizeof(p));
  p.n_predict = 128;
  p.sampler = nullptr;
  p.temperature = 0.8f;
  p.length_penalty = 1.0f;
  p.logprobs = true;
  return p;
}

ember_status ember_generate(ember_session* session, const int32_t* prompt, size_t n_prompt,
                            const ember_generate_params* params, ember_piece_fn on_piece,
                            void* user_data, ember_generate_stats* stats) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(session != nullptr, "ember_generate: session is NULL");
    EMBER_REQUIRE_ARG(prompt != nullptr && n_prompt > 0, "ember_generate: the prompt is empty");
    session->session->ClearCancel();
    return GenerateIds(session, prompt, n_prompt, params, on_piece, user_data, stats);
  });
}

ember_status ember_generate_text(ember_session* session, const char* prompt,
                                 const ember_generate_params* params, ember_piece_fn on_piece,
                                 void* user_data, ember_generate_stats* stats) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(session != nullptr, "ember_generate_text: session is NULL");
    EMBER_REQUIRE_ARG(prompt != nullptr, "ember_generate_text: prompt is NULL");
    session->session->ClearCancel();
    std::vector<int32_t> ids =
        session->session->model().tokenizer().Encode(prompt, /*add_special=*/true, false);
    if (ids.empty()) return Fail(EMBER_ERR_INVALID_ARGUMENT, "the prompt has no tokens");
    return GenerateIds(session, ids.data(), ids.size(), params, on_piece, user_data, stats);
  });
}

ember_quantize_params ember_quantize_default_params(void) {
  ember_quantize_params p;
  std::memset(&p, 0, sizeof(p));
  p.type = "Q8_0";
  return p;
}

ember_status ember_quantize_ex(const char* in_path, const char* out_path,
                               const ember_quantize_params* params) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(in_path != nullptr && out_path != nullptr, "ember_quantize: NULL path");
    EMBER_REQUIRE_ARG(params != nullptr, "ember_quantize: params is NULL");
    EMBER_REQUIRE_ARG(params->type != nullptr, "ember_quantize: type is NULL");
    EMBER_REQUIRE_ARG(params->n_threads >= 0, "ember_quantize: n_threads is negative");
    ember::QuantizeOptions o;
    const ember::Status parsed = ember::ParseQuantizeOptions(params->type, &o);
    if (!parsed.ok()) return Report(parsed);
    o.pure = params->pure;
    o.n_threads = params->n_threads;
    void* user_data = params->user_data;
    if (params->on_tensor) {
      ember_quantize_tensor_fn fn = params->on_tensor;
      o.on_tensor = [fn, user_data](const std::string& name, ember::GgmlType t,
                                    const std::string& note) {
        fn(name.c_str(), ember::GgmlTypeName(t), note.c_str(), user_data);
      };
    }
    ember::QuantizeProgressFn progress;
    if (params->progress) {
      ember_quantize_progress_fn fn = params->progress;
      progress = [fn, user_data](float f, const std::string& name) {
        return fn(f, name.c_str(), user_data);
      };
    }
    ember::QuantizeReport report;
    return Report(ember::QuantizeModel(in_path, out_path, o, progress, &report));
  });
}

ember_status ember_quantize(const char* in_path, const char* out_path, const char* type,
                            ember_quantize_progress_fn progress, void* user_data) {
  ember_quantize_params p = ember_quantize_default_params();
  p.type = type;
  p.progress = progress;
  p.user_data = user_data;
  if (type == nullptr) {
    return Guard([&]() -> ember_status {
      return Fail(EMBER_ERR_INVALID_ARGUMENT, "ember_quantize: type is NULL");
    });
  }
  return ember_quantize_ex(in_path, out_path, &p);
}

}  // extern "C"
