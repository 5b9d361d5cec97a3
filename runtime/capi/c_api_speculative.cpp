// The C API's speculative decoding (include/ember.h, "Speculative decoding").
#include <cstring>
#include <memory>
#include <string>

#include "ember.h"
#include "runtime/capi/c_api_internal.h"
#include "runtime/decoding/speculative.h"

using namespace ember::capi;

namespace ember::capi {

ember_status DraftSourceFromC(const ember_speculative_params& p, const ember::Tokenizer& target,
                              std::unique_ptr<ember::DraftSource>* out,
                              ember::SpeculativeParams* sp) {
  EMBER_REQUIRE_ARG(p.draft != nullptr || (p.lookup >= 1 && p.lookup <= 8),
                    "speculative decoding needs a draft model session or lookup in [1, 8] (got " +
                        std::to_string(p.lookup) + ")");
  sp->draft_max = p.draft_max;
  sp->draft_min = p.draft_min;
  sp->adaptive = p.adaptive;
  if (p.draft != nullptr) {
    std::unique_ptr<ember::DraftModel> d;
    const ember_status s = Report(ember::DraftModel::Create(p.draft->session.get(), target, &d));
    if (s != EMBER_OK) return s;
    *out = std::move(d);
  } else {
    *out = std::make_unique<ember::LookupDraft>(p.lookup);
  }
  return EMBER_OK;
}

void SpeculativeStatsToC(const ember::SpeculativeStats& s, int64_t n_gen,
                         ember_speculative_stats* out) {
  out->n_steps = static_cast<int32_t>(s.n_steps);
  out->n_drafted = static_cast<int32_t>(s.n_drafted);
  out->n_accepted = static_cast<int32_t>(s.n_accepted);
  out->acceptance = s.acceptance();
  out->tokens_per_step =
      s.n_steps > 0 ? static_cast<double>(n_gen) / static_cast<double>(s.n_steps) : 0.0;
  out->draft_seconds = s.draft_seconds;
  out->verify_seconds = s.verify_seconds;
}

}  // namespace ember::capi

extern "C" {

ember_speculative_params ember_speculative_default_params(void) {
  ember_speculative_params p;
  std::memset(&p, 0, sizeof p);
  p.draft_max = 8;
  p.adaptive = true;
  return p;
}

ember_status ember_generate_speculative(ember_session* session, const int32_t* prompt,
                                        size_t n_prompt, const ember_generate_params* params,
                                        const ember_speculative_params* spec,
                                        ember_piece_fn on_piece, void* user_data,
                                        ember_generate_stats* stats,
                                        ember_speculative_stats* spec_stats) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(session != nullptr, "ember_generate_speculative: session is NULL");
    EMBER_REQUIRE_ARG(prompt != nullptr && n_prompt > 0,
                      "ember_generate_speculative: the prompt is empty");
    EMBER_REQUIRE_ARG(spec != nullptr, "ember_generate_speculative: spec is NULL");
    ember::Session& s = *session->session;
    s.ClearCancel();
    const ember_generate_params p = params ? *params : ember_generate_default_params();
    ember::GenerateParams gp;
    ember_status st = GenerateParamsFromC(p, &gp);
    if (st != EMBER_OK) return st;
    std::unique_ptr<ember::DraftSource> draft;
    ember::SpeculativeParams sp;
    st = DraftSourceFromC(*spec, s.model().tokenizer(), &draft, &sp);
    if (st != EMBER_OK) return st;
    std::string piece_copy;
    const ember::PieceFn fn = PieceFnFromC(on_piece, user_data, &piece_copy);
    ember::TokenFn token_fn;
    if (p.on_token) token_fn = [&](int32_t token) { return p.on_token(token, user_data); };
    ember::GenerateResult r;
    ember::SpeculativeStats ss;
    st = Report(ember::GenerateSpeculative(
        s, *draft, std::vector<int32_t>(prompt, prompt + n_prompt), gp, sp, fn, token_fn, &r, &ss));
    if (st != EMBER_OK) return st;
    if (stats) StatsToC(r, gp.stop, stats);
    if (spec_stats) SpeculativeStatsToC(ss, static_cast<int64_t>(r.tokens.size()), spec_stats);
    return EMBER_OK;
  });
}

}  // extern "C"
