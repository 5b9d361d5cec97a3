// Grammar: keep only the candidates a grammar allows next (constrained
// decoding; docs/GRAMMAR.md). A mask, not sample-check-resample: the token
// the chain ends up with always continues a parse, whatever the other
// samplers do, because they only ever see the admitted tokens.
//
// The mask is the matcher's (grammar/matcher.h): bit t is set exactly for the
// tokens whose bytes keep at least one parse alive, plus the end-of-generation
// tokens where the grammar may end. Candidates outside it are dropped (not
// given -inf: a truncating sampler's min_keep must not bring them back). When
// the grammar admits nothing, the candidates become empty and the chain
// returns no token (SamplerChain::Sample gives -1; generation ends with
// finish reason "grammar").
//
// Accept advances the parse by the chosen token (a token outside the mask is
// refused, the state unchanged); AcceptPrompt (a new generation) starts the
// grammar over, since the prompt is not generated text.
#include <memory>
#include <vector>

#include "sampling/grammar/matcher.h"
#include "sampling/sampler.h"

namespace ember {
namespace {

class GrammarSampler final : public Sampler {
 public:
  explicit GrammarSampler(std::shared_ptr<const grammar::MaskTables> tables)
      : matcher_(std::move(tables)) {}

  SamplerKind kind() const override { return SamplerKind::kGrammar; }

  void Apply(Candidates& c, Rng& /*rng*/) override {
    matcher_.FillMask(&mask_);
    std::vector<Candidate>& v = c.items();
    const size_t n = v.size();
    size_t m = 0, admitted = 0;
    for (const uint64_t w : mask_) admitted += static_cast<size_t>(__builtin_popcountll(w));
    if (admitted < n / 4 && AtOwnIndex(v)) {
      // Every admitted token sits at the index of its id (the whole vocabulary
      // in id order: the stage runs before anything drops or reorders): visit
      // the mask's set bits in order, in place (reads at id >= writes at m).
      for (size_t w = 0; w < mask_.size(); ++w) {
        for (uint64_t bits = mask_[w]; bits != 0; bits &= bits - 1) {
          v[m++] = v[w * 64 + static_cast<size_t>(__builtin_ctzll(bits))];
        }
      }
    } else {
      for (size_t i = 0; i < n; ++i) {  // (branch-free: keep i if its bit is set)
        const auto id = static_cast<uint32_t>(v[i].id);
        v[m] = v[i];
        m += (mask_[id >> 6] >> (id & 63)) & 1;
      }
    }
    if (m == n) return;
    v.resize(m);  // order kept: sorted() stays what it was
    if (m > 0) c.RenormalizeProbs();
  }

  bool Accept(int32_t token) override { return matcher_.Accept(token); }

  // Whether each token the mask admits is at v[its id]. Then the admitted
  // items, in the order they stand, are exactly v[id] for the set bits in
  // ascending order (ids are unique among the candidates).
  bool AtOwnIndex(const std::vector<Candidate>& v) const {
    for (size_t w = 0; w < mask_.size(); ++w) {
      for (uint64_t bits = mask_[w]; bits != 0; bits &= bits - 1) {
        const size_t id = w * 64 + static_cast<size_t>(__builtin_ctzll(bits));
        if (id >= v.size() || v[id].id != static_cast<int32_t>(id)) return false;
      }
    }
    return true;
  }
  void AcceptPrompt(const std::vector<int32_t>& /*prompt*/) override { matcher_.Reset(); }
  void Reset() override { matcher_.Reset(); }

  std::unique_ptr<Sampler> Clone() const override {
    return std::make_unique<GrammarSampler>(*this);
  }

 private:
  grammar::GrammarMatcher matcher_;
  std::vector<uint64_t> mask_;  // scratch: n_vocab bits
};

}  // namespace

std::unique_ptr<Sampler> NewGrammarSampler(const SamplerSpec& spec) {
  return std::make_unique<GrammarSampler>(spec.grammar_tables);
}

}  // namespace ember
