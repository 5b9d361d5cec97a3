// Penalties over the last N accepted tokens (N = penalty_last_n; -1: every
// token since Reset; 0: off). For a token seen n >= 1 times in that window:
//
//   repetition (Keskar et al. 2019, CTRL, section 4.1): logit / penalty if the
//     logit is > 0, logit * penalty otherwise, so penalty > 1 always makes the
//     token less likely (CTRL divides every logit; dividing a negative one
//     would raise it, hence the sign rule, as llama.cpp and HF transformers do);
//   presence (OpenAI API):  logit -= presence_penalty          (once)
//   frequency (OpenAI API): logit -= frequency_penalty * n
//
// in that order. Example: penalty 1.3 takes 2.0 to 1.5385 and -2.0 to -2.6.
// The window is a FIFO of token ids with a count per distinct id, so a token
// costs O(distinct ids in the window) while the candidates are in id order.
#include <cmath>
#include <deque>
#include <memory>
#include <unordered_map>

#include "sampling/sampler.h"

namespace ember {
namespace {

class PenaltiesSampler final : public Sampler {
 public:
  explicit PenaltiesSampler(const SamplerSpec& s)
      : last_n_(s.penalty_last_n),
        repeat_(s.repeat_penalty),
        presence_(s.presence_penalty),
        frequency_(s.frequency_penalty) {}

  SamplerKind kind() const override { return SamplerKind::kPenalties; }

  void Apply(Candidates& c, Rng& /*rng*/) override {
    if (!Active()) return;
    for (const auto& [id, n] : counts_) {
      const int64_t i = c.IndexOf(id);
      if (i < 0) continue;
      float& logit = c.items()[static_cast<size_t>(i)].logit;
      logit = Penalized(logit, n);
    }
    c.set_sorted(false);
    c.InvalidateProbs();
  }

  bool EditsLogitsSparsely() const override { return true; }
  void ApplyToLogits(float* logits, int64_t n_vocab) override {
    if (!Active()) return;
    for (const auto& [id, n] : counts_) {
      if (id < 0 || id >= n_vocab) continue;
      const float logit = logits[id];
      logits[id] = Penalized(std::isnan(logit) ? -INFINITY : logit, n);
    }
  }

  bool Accept(int32_t token) override {
    if (last_n_ == 0) return true;
    window_.push_back(token);
    ++counts_[token];
    if (last_n_ > 0 && window_.size() > static_cast<size_t>(last_n_)) {
      const int32_t old = window_.front();
      window_.pop_front();
      if (--counts_[old] == 0) counts_.erase(old);
    }
    return true;
  }

  void Reset() override {
    window_.clear();
    counts_.clear();
  }

  std::unique_ptr<Sampler> Clone() const override {
    return std::make_unique<PenaltiesSampler>(*this);
  }

 private:
  bool Active() const {
    return !counts_.empty() && (repeat_ != 1.0f || presence_ != 0.0f || frequency_ != 0.0f);
  }
  // The logit of a token seen n times in the window.
  float Penalized(float logit, int32_t n) const {
    logit = logit > 0.0f ? logit / repeat_ : logit * repeat_;
    return ShiftLogit(logit, -(presence_ + frequency_ * static_cast<float>(n)));
  }

  int32_t last_n_;
  float repeat_, presence_, frequency_;
  std::deque<int32_t> window_;                   // the last last_n_ accepted tokens
  std::unordered_map<int32_t, int32_t> counts_;  // id -> occurrences in window_
};

}  // namespace

std::unique_ptr<Sampler> NewPenaltiesSampler(const SamplerSpec& spec) {
  return std::make_unique<PenaltiesSampler>(spec);
}

}  // namespace ember
