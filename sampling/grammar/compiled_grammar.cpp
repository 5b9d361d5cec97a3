// CompileGrammar: a GBNF tree to per-rule automata (compiled_grammar.h).
//
// Each compiled rule is built as an epsilon-NFA (Thompson's construction:
// sequences chain fragments, alternatives branch, repetitions unroll their
// copies or loop), then the epsilon moves are removed: a position's edges are
// those of every state its epsilon closure reaches, and it is final when the
// closure reaches the rule's end.
#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>

#include "sampling/grammar/compiled_grammar.h"
#include "sampling/grammar/gbnf_analysis.h"

namespace ember::grammar {
namespace {

// A rule that is not recursive is inlined where it is used when it is used
// once, or when its expansion has at most this many states.
constexpr uint64_t kInlineSmall = 48;
// Inlining nests at most this deep (deeper uses stay references).
constexpr int kMaxInlineDepth = 200;

void SetBit(std::array<uint64_t, 4>* bits, uint32_t b) {
  (*bits)[b >> 6] |= uint64_t{1} << (b & 63);
}

uint32_t LeadByte(uint32_t c) {
  if (c < 0x80) return c;
  if (c < 0x800) return 0xC0 | (c >> 6);
  if (c < 0x10000) return 0xE0 | (c >> 12);
  return 0xF0 | (c >> 18);
}

CharClass MakeClass(const CharSet& set) {
  CharClass cls;
  cls.set = set;
  for (const CodeRange& r : set.ranges()) {
    for (uint32_t c = r.lo; c <= std::min<uint32_t>(r.hi, 127); ++c) {
      cls.ascii[c >> 6] |= uint64_t{1} << (c & 63);
    }
    // Split at the UTF-8 length boundaries; within one length the first byte
    // grows with the code point.
    static constexpr uint32_t kBounds[] = {0, 0x80, 0x800, 0x10000, kMaxCodePoint + 1};
    for (int k = 0; k < 4; ++k) {
      const uint32_t a = std::max(r.lo, kBounds[k]);
      const uint32_t b = std::min(r.hi, kBounds[k + 1] - 1);
      if (a > b) continue;
      for (uint32_t lead = LeadByte(a); lead <= LeadByte(b); ++lead) SetBit(&cls.lead_bytes, lead);
    }
  }
  return cls;
}

std::string ClassKey(const CharSet& s) {
  std::string k;
  for (const CodeRange& r : s.ranges()) {
    k.append(reinterpret_cast<const char*>(&r.lo), sizeof r.lo);
    k.append(reinterpret_cast<const char*>(&r.hi), sizeof r.hi);
  }
  return k;
}

struct EState {
  std::vector<uint32_t> eps;
  std::vector<CharEdge> chars;
  std::vector<RefEdge> refs;
  uint32_t instance = kNoInstance;
  uint32_t offset = 0;
};

struct Frag {
  uint32_t start, end;
};

class Builder {
 public:
  Builder(const GbnfGrammar& g, const GbnfFacts& facts, CompiledGrammar* out)
      : g_(g), facts_(facts), out_(out) {}

  Status Run() {
    size_memo_.assign(g_.rules.size(), UINT64_MAX);
    compiled_id_.assign(g_.rules.size(), UINT32_MAX);
    // A grammar whose expansion is far too large fails before it is built
    // (Thompson's construction makes about two states per element).
    uint64_t estimate = 0;
    for (uint32_t r = 0; r < g_.rules.size(); ++r) {
      estimate += ShouldInline(r, 0) ? 0 : 2 * RuleSize(r, 0);
    }
    if (estimate > 2 * kMaxPositions) return TooBig();
    out_->root = RuleFor(g_.root);
    while (!queue_.empty()) {
      const uint32_t r = queue_.back();
      queue_.pop_back();
      EMBER_RETURN_IF_ERROR(CompileRule(r));
    }
    out_->lead_bytes.resize(out_->positions.size());
    for (size_t p = 0; p < out_->positions.size(); ++p) {
      const Position& pos = out_->positions[p];
      for (uint32_t e = pos.chars_begin; e < pos.chars_end; ++e) {
        const auto& lb = out_->classes[out_->char_edges[e].cls].lead_bytes;
        for (int w = 0; w < 4; ++w) out_->lead_bytes[p][w] |= lb[w];
      }
    }
    return Status::Ok();
  }

 private:
  // Estimated states of a rule's expansion (with its own inlining), capped.
  uint64_t RuleSize(uint32_t r, int depth) {
    if (size_memo_[r] != UINT64_MAX) return size_memo_[r];
    size_memo_[r] = 1;  // (a guard; recursive rules are never inlined)
    const uint64_t s = Size(g_.rules[r].body, depth + 1);
    size_memo_[r] = s;
    return s;
  }
  uint64_t Size(const GbnfExpr& e, int depth) {
    constexpr uint64_t kCap = uint64_t{1} << 40;
    uint64_t s = 0;
    switch (e.kind) {
      case GbnfExpr::Kind::kChars:
        return 1;
      case GbnfExpr::Kind::kRef:
        return ShouldInline(e.rule, depth) ? RuleSize(e.rule, depth) : 1;
      case GbnfExpr::Kind::kRepeat: {
        const uint64_t copies = e.max == kUnbounded ? uint64_t{e.min} + 1 : e.max;
        return std::min(kCap, Size(e.items[0], depth) * copies + 2);
      }
      case GbnfExpr::Kind::kSeq:
      case GbnfExpr::Kind::kAlt:
        for (const GbnfExpr& x : e.items) s = std::min(kCap, s + Size(x, depth));
        return s + 1;
    }
    return s;
  }
  bool ShouldInline(uint32_t r, int depth) {
    if (facts_.recursive[r] || r == g_.root || depth >= kMaxInlineDepth) return false;
    return facts_.uses[r] <= 1 || RuleSize(r, depth) <= kInlineSmall;
  }

  uint32_t RuleFor(uint32_t r) {
    if (compiled_id_[r] == UINT32_MAX) {
      compiled_id_[r] = static_cast<uint32_t>(out_->rules.size());
      out_->rules.push_back(CompiledRule{g_.rules[r].name, 0});
      queue_.push_back(r);
    }
    return compiled_id_[r];
  }

  uint32_t ClassId(const CharSet& s) {
    auto [it, added] = class_ids_.emplace(ClassKey(s), static_cast<uint32_t>(out_->classes.size()));
    if (added) out_->classes.push_back(MakeClass(s));
    return it->second;
  }

  uint32_t NewState() {
    EState s;
    s.instance = instance_;
    s.offset = static_cast<uint32_t>(states_.size()) - base_;
    states_.push_back(std::move(s));
    return static_cast<uint32_t>(states_.size() - 1);
  }
  void Eps(uint32_t from, uint32_t to) { states_[from].eps.push_back(to); }

  Status Build(const GbnfExpr& e, int depth, Frag* out) {
    if (states_.size() > kMaxPositions) return TooBig();
    switch (e.kind) {
      case GbnfExpr::Kind::kChars: {
        out->start = NewState();
        out->end = NewState();
        states_[out->start].chars.push_back({ClassId(e.chars), out->end});
        return Status::Ok();
      }
      case GbnfExpr::Kind::kRef: {
        if (ShouldInline(e.rule, depth)) return Build(g_.rules[e.rule].body, depth + 1, out);
        out->start = NewState();
        out->end = NewState();
        states_[out->start].refs.push_back({RuleFor(e.rule), out->end});
        return Status::Ok();
      }
      case GbnfExpr::Kind::kSeq: {
        out->start = out->end = NewState();
        for (const GbnfExpr& x : e.items) {
          Frag f;
          EMBER_RETURN_IF_ERROR(Build(x, depth, &f));
          Eps(out->end, f.start);
          out->end = f.end;
        }
        return Status::Ok();
      }
      case GbnfExpr::Kind::kAlt: {
        out->start = NewState();
        std::vector<uint32_t> ends;
        for (const GbnfExpr& x : e.items) {
          Frag f;
          EMBER_RETURN_IF_ERROR(Build(x, depth, &f));
          Eps(out->start, f.start);
          ends.push_back(f.end);
        }
        out->end = NewState();
        for (uint32_t x : ends) Eps(x, out->end);
        return Status::Ok();
      }
      case GbnfExpr::Kind::kRepeat:
        return BuildRepeat(e, depth, out);
    }
    return Status::Ok();
  }

  // x{m,n}: m copies, then n - m optional ones (each may be the last), or for
  // n unbounded one copy in a loop. Every copy is a RepInstance.
  Status BuildRepeat(const GbnfExpr& e, int depth, Frag* out) {
    const GbnfExpr& item = e.items[0];
    const bool nullable_body = IsNullable(item, facts_.nullable);
    const uint32_t site = next_site_++;
    out->start = NewState();
    const uint32_t rep_offset = states_[out->start].offset;
    uint32_t at = out->start;  // where the next copy begins
    std::vector<uint32_t> exits;
    const bool unbounded = e.max == kUnbounded;
    const uint32_t copies = unbounded ? e.min : e.max;
    for (uint32_t i = 0; i < copies; ++i) {
      if (i >= e.min) exits.push_back(at);  // enough copies: may stop here
      Frag f;
      EMBER_RETURN_IF_ERROR(BuildCopy(item, depth, site, rep_offset, e.min > i ? e.min - 1 - i : 0,
                                      unbounded ? kUnbounded : e.max - 1 - i, nullable_body, &f));
      Eps(at, f.start);
      at = f.end;
    }
    if (unbounded) {
      // The loop: at -> copy -> back to at.
      Frag f;
      EMBER_RETURN_IF_ERROR(
          BuildCopy(item, depth, site, rep_offset, 0, kUnbounded, nullable_body, &f));
      Eps(at, f.start);
      Eps(f.end, at);
    }
    exits.push_back(at);
    out->end = NewState();
    for (uint32_t x : exits) Eps(x, out->end);
    return Status::Ok();
  }

  Status BuildCopy(const GbnfExpr& item, int depth, uint32_t site, uint32_t rep_offset,
                   uint32_t required, uint32_t allowed, bool nullable_body, Frag* out) {
    RepInstance inst;
    inst.site = site;
    inst.required = required;
    inst.allowed = allowed;
    inst.nullable_body = nullable_body;
    inst.parent = instance_;
    inst.rep_offset = rep_offset;
    const uint32_t saved_instance = instance_, saved_base = base_;
    instance_ = static_cast<uint32_t>(out_->instances.size());
    base_ = static_cast<uint32_t>(states_.size());
    out_->instances.push_back(inst);
    Status s = Build(item, depth, out);
    instance_ = saved_instance;
    base_ = saved_base;
    return s;
  }

  Status TooBig() const {
    return InvalidArgument("the grammar is too large: more than " + std::to_string(kMaxPositions) +
                           " states once its repetitions are unrolled (lower the {m,n} counts)");
  }

  Status CompileRule(uint32_t r) {
    states_.clear();
    instance_ = kNoInstance;
    base_ = 0;
    Frag f;
    EMBER_RETURN_IF_ERROR(Build(g_.rules[r].body, 0, &f));
    const uint32_t rule = compiled_id_[r];
    // Positions: the start and every state an edge leads to.
    std::vector<uint32_t> pos_of(states_.size(), UINT32_MAX);
    std::vector<uint32_t> order;
    const size_t base = out_->positions.size();
    auto position = [&](uint32_t s) {
      if (pos_of[s] == UINT32_MAX) {
        pos_of[s] = static_cast<uint32_t>(base + order.size());
        order.push_back(s);
      }
      return pos_of[s];
    };
    out_->rules[rule].start = position(f.start);
    std::vector<uint32_t> stamp(states_.size(), UINT32_MAX), todo, closure;
    for (size_t k = 0; k < order.size(); ++k) {
      if (base + order.size() > kMaxPositions) return TooBig();
      const uint32_t s = order[k];
      // The epsilon closure of s.
      closure.clear();
      todo.assign(1, s);
      stamp[s] = static_cast<uint32_t>(k);
      while (!todo.empty()) {
        const uint32_t x = todo.back();
        todo.pop_back();
        closure.push_back(x);
        for (uint32_t y : states_[x].eps) {
          if (stamp[y] != k) {
            stamp[y] = static_cast<uint32_t>(k);
            todo.push_back(y);
          }
        }
      }
      // Char edges merged by target (one class per target), refs deduplicated.
      std::map<uint32_t, CharSet> by_target;
      std::vector<RefEdge> refs;
      bool final = false;
      for (uint32_t x : closure) {
        final = final || x == f.end;
        for (const CharEdge& c : states_[x].chars)
          by_target[c.target].Add(out_->classes[c.cls].set);
        for (const RefEdge& rf : states_[x].refs) {
          RefEdge e{rf.rule, position(rf.target)};
          if (std::none_of(refs.begin(), refs.end(), [&](const RefEdge& o) {
                return o.rule == e.rule && o.target == e.target;
              })) {
            refs.push_back(e);
          }
        }
      }
      Position p;
      p.rule = rule;
      p.final = final;
      p.instance = states_[s].instance;
      p.offset = states_[s].offset;
      p.chars_begin = static_cast<uint32_t>(out_->char_edges.size());
      for (const auto& [target, set] : by_target) {
        out_->char_edges.push_back({ClassId(set), position(target)});
      }
      p.chars_end = static_cast<uint32_t>(out_->char_edges.size());
      p.refs_begin = static_cast<uint32_t>(out_->ref_edges.size());
      out_->ref_edges.insert(out_->ref_edges.end(), refs.begin(), refs.end());
      p.refs_end = static_cast<uint32_t>(out_->ref_edges.size());
      out_->positions.push_back(p);
    }
    return Status::Ok();
  }

  const GbnfGrammar& g_;
  const GbnfFacts& facts_;
  CompiledGrammar* out_;
  std::vector<uint64_t> size_memo_;
  std::vector<uint32_t> compiled_id_;  // gbnf rule -> compiled rule
  std::vector<uint32_t> queue_;        // gbnf rules still to compile
  std::unordered_map<std::string, uint32_t> class_ids_;
  std::vector<EState> states_;  // the rule being compiled
  uint32_t instance_ = kNoInstance;
  uint32_t base_ = 0;  // first state of the current copy
  uint32_t next_site_ = 0;
};

}  // namespace

Status CompileGrammar(const GbnfGrammar& g, CompiledGrammar* out) {
  GbnfFacts facts;
  EMBER_RETURN_IF_ERROR(AnalyzeGbnf(g, &facts));
  CompiledGrammar c;
  EMBER_RETURN_IF_ERROR(Builder(g, facts, &c).Run());
  *out = std::move(c);
  return Status::Ok();
}

Status CompileGbnf(std::string_view text, std::string_view root, CompiledGrammar* out) {
  GbnfGrammar g;
  EMBER_RETURN_IF_ERROR(ParseGbnf(text, root, &g));
  return CompileGrammar(g, out);
}

}  // namespace ember::grammar
