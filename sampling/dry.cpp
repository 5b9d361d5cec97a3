// DRY, "Don't Repeat Yourself" (p-e-w, text-generation-webui pull request
// #5677, 2024): penalizes the token that would continue a sequence already
// seen in the history, by how long the repetition has become.
//
// Over the history h[0..L) (the last dry_penalty_last_n accepted tokens; -1:
// all since Reset; 0: off), for each earlier position i < L - 1 with
// h[i] == h[L-1], the match length is the largest m such that
// h[i-j] == h[L-1-j] for j = 0..m-1; the token that followed there, h[i+1],
// would extend the repeat to m + 1 tokens. Each such token t gets its longest m
// and, if m >= dry_allowed_length,
//
//   logit[t] -= dry_multiplier * dry_base ^ (m - dry_allowed_length).
//
// Sequence breakers end matches: a token is a breaker when its text
// (SamplerContext::token_piece) contains one of the breaker strings. No
// penalty applies when the last token is a breaker, a breaker never counts
// towards m, and a breaker is never penalized as the continuation. Without
// token_piece no token is a breaker.
//
// m is capped at kMaxMatch (as the reference implementation caps it at 50):
// the penalty is then already astronomic, and the cap bounds a token's cost at
// O(L * kMaxMatch) even for a history of one token repeated.
#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>

#include "sampling/sampler.h"

namespace ember {
namespace {

constexpr int32_t kMaxMatch = 50;

class DrySampler final : public Sampler {
 public:
  DrySampler(const SamplerSpec& s, std::shared_ptr<const std::vector<bool>> breakers)
      : multiplier_(s.dry_multiplier),
        base_(s.dry_base),
        allowed_(s.dry_allowed_length),
        last_n_(s.dry_penalty_last_n),
        breakers_(std::move(breakers)) {}

  SamplerKind kind() const override { return SamplerKind::kDry; }

  void Apply(Candidates& c, Rng& /*rng*/) override {
    const int64_t n = static_cast<int64_t>(history_.size());
    if (multiplier_ <= 0.0f || n < 2) return;
    const int32_t last = history_[n - 1];
    if (IsBreaker(last)) return;
    longest_.clear();
    for (int64_t i = n - 2; i >= 0; --i) {
      if (history_[i] != last) continue;
      const int32_t next = history_[i + 1];
      if (IsBreaker(next)) continue;
      int32_t m = 1;
      while (m < kMaxMatch && i - m >= 0) {
        const int32_t prev = history_[n - 1 - m];
        if (history_[i - m] != prev || IsBreaker(prev)) break;
        ++m;
      }
      int32_t& best = longest_[next];
      best = std::max(best, m);
    }
    bool changed = false;
    for (const auto& [token, m] : longest_) {
      if (m < allowed_) continue;
      const int64_t idx = c.IndexOf(token);
      if (idx < 0) continue;
      const double penalty = multiplier_ * std::pow(static_cast<double>(base_), m - allowed_);
      float& logit = c.items()[static_cast<size_t>(idx)].logit;
      logit = ShiftLogit(logit, -static_cast<float>(penalty));
      changed = true;
    }
    if (changed) {
      c.set_sorted(false);
      c.InvalidateProbs();
    }
  }

  bool Accept(int32_t token) override {
    if (last_n_ == 0) return true;
    history_.push_back(token);
    if (last_n_ > 0 && history_.size() > static_cast<size_t>(last_n_)) history_.pop_front();
    return true;
  }

  void Reset() override { history_.clear(); }

  std::unique_ptr<Sampler> Clone() const override { return std::make_unique<DrySampler>(*this); }

 private:
  bool IsBreaker(int32_t token) const {
    return breakers_ && token >= 0 && static_cast<size_t>(token) < breakers_->size() &&
           (*breakers_)[static_cast<size_t>(token)];
  }

  float multiplier_, base_;
  int32_t allowed_, last_n_;
  std::shared_ptr<const std::vector<bool>> breakers_;  // [n_vocab] or null; shared by clones
  std::deque<int32_t> history_;
  std::unordered_map<int32_t, int32_t> longest_;  // scratch: continuation -> longest match
};

}  // namespace

std::unique_ptr<Sampler> NewDrySampler(const SamplerSpec& spec, const SamplerContext& ctx) {
  std::shared_ptr<const std::vector<bool>> breakers;
  if (ctx.token_piece && !spec.dry_sequence_breakers.empty()) {
    auto b = std::make_shared<std::vector<bool>>(static_cast<size_t>(ctx.n_vocab), false);
    for (size_t t = 0; t < b->size(); ++t) {
      const std::string_view piece = ctx.token_piece(static_cast<int32_t>(t));
      for (const std::string& s : spec.dry_sequence_breakers) {
        if (piece.find(s) != std::string_view::npos) {
          (*b)[t] = true;
          break;
        }
      }
    }
    breakers = std::move(b);
  }
  return std::make_unique<DrySampler>(spec, std::move(breakers));
}

}  // namespace ember
