// What the C API's translation units share: the handle structs and the
// error plumbing (Guard catches everything so no exception crosses the C
// boundary; Fail/Report set the calling thread's last error).
#pragma once

#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "ember.h"
#include "platform/status.h"
#include "runtime/decoding/generate.h"
#include "runtime/decoding/speculative.h"
#include "runtime/model/model.h"
#include "runtime/session/session.h"
#include "sampling/chain.h"

struct ember_model {
  std::unique_ptr<ember::Model> model;
};

struct ember_session {
  std::unique_ptr<ember::Session> session;
};

struct ember_sampler {
  std::unique_ptr<ember::SamplerChain> chain;
  std::vector<ember::TraceStage> trace;  // of the last traced sample
};

namespace ember::capi {

inline ember::SamplerChain* SamplerChainOf(ember_sampler* s) { return s->chain.get(); }

// The integer in a C enum argument or field. C callers may put any int there,
// but C++ may assume an enum holds only values in its enumerators' range
// (UBSan's -fsanitize=enum reports such loads): read it as its integer.
template <typename E>
int EnumInt(const E& e) {
  std::underlying_type_t<E> v;
  std::memcpy(&v, &e, sizeof v);
  return static_cast<int>(v);
}

inline thread_local std::string g_last_error;

inline ember_status ToC(ember::Code code) {
  switch (code) {
    case ember::Code::kOk:
      return EMBER_OK;
    case ember::Code::kInvalidArgument:
      return EMBER_ERR_INVALID_ARGUMENT;
    case ember::Code::kIoError:
      return EMBER_ERR_IO;
    case ember::Code::kBadFormat:
      return EMBER_ERR_BAD_FORMAT;
    case ember::Code::kUnsupported:
      return EMBER_ERR_UNSUPPORTED;
    case ember::Code::kOutOfMemory:
      return EMBER_ERR_OUT_OF_MEMORY;
    case ember::Code::kContextOverflow:
      return EMBER_ERR_CONTEXT_OVERFLOW;
    case ember::Code::kCancelled:
      return EMBER_ERR_CANCELLED;
    case ember::Code::kInternal:
      return EMBER_ERR_INTERNAL;
  }
  return EMBER_ERR_INTERNAL;
}

inline ember_status Fail(ember_status s, std::string message) {
  g_last_error = std::move(message);
  return s;
}

inline ember_status Report(const ember::Status& s) {
  if (s.ok()) return EMBER_OK;
  return Fail(ToC(s.code()), s.message());
}

// Sets the last error from inside a catch handler, where nothing may throw:
// if the message cannot be built (no memory), the message is "".
inline ember_status FailNoThrow(ember_status s, const char* prefix, const char* what) noexcept {
  try {
    g_last_error = std::string(prefix) + what;
  } catch (...) {
    g_last_error.clear();
  }
  return s;
}

// Runs f, turning exceptions into statuses.
template <typename F>
ember_status Guard(F&& f) {
  try {
    g_last_error.clear();
    return f();
  } catch (const std::bad_alloc&) {
    return FailNoThrow(EMBER_ERR_OUT_OF_MEMORY, "out of memory", "");
  } catch (const std::exception& e) {
    return FailNoThrow(EMBER_ERR_INTERNAL, "internal error: ", e.what());
  } catch (...) {
    return FailNoThrow(EMBER_ERR_INTERNAL, "internal error", "");
  }
}

#define EMBER_REQUIRE_ARG(cond, what) \
  if (!(cond)) return Fail(EMBER_ERR_INVALID_ARGUMENT, what)

// ember_generate_params -> GenerateParams (stop strings, sampler or the plain
// temperature draw), checked; the caller runs it inside Guard.
ember_status GenerateParamsFromC(const ember_generate_params& p, ember::GenerateParams* gp);
// A generation's outcome as ember_generate_stats (stop: the stop strings, for
// stop_index).
void StatsToC(const ember::GenerateResult& r, const std::vector<std::string>& stop,
              ember_generate_stats* stats);
// The caller's piece callback as a PieceFn: each piece copied into *copy so
// that it ends with the NUL the header promises.
inline ember::PieceFn PieceFnFromC(ember_piece_fn fn, void* user_data, std::string* copy) {
  return [fn, user_data, copy](std::string_view piece, int32_t token) {
    if (fn == nullptr) return true;
    copy->assign(piece);
    return fn(copy->c_str(), copy->size(), token, user_data);
  };
}
// ember_speculative_params -> a draft source (a draft model's session checked
// against `target`'s vocabulary, or prompt lookup) and its settings.
ember_status DraftSourceFromC(const ember_speculative_params& p, const ember::Tokenizer& target,
                              std::unique_ptr<ember::DraftSource>* out,
                              ember::SpeculativeParams* sp);
void SpeculativeStatsToC(const ember::SpeculativeStats& s, int64_t n_gen,
                         ember_speculative_stats* out);

}  // namespace ember::capi
