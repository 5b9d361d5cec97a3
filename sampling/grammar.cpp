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
    size_t m = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      const auto id = static_cast<uint32_t>(v[i].id);
      if ((mask_[id >> 6] >> (id & 63)) & 1) v[m++] = v[i];
    }
    if (m == v.size()) return;
    v.resize(m);  // order kept: sorted() stays what it was
    if (m > 0) c.RenormalizeProbs();
  }

  bool Accept(int32_t token) override { return matcher_.Accept(token); }
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
