#include "sampling/grammar/mask_tables.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <unordered_map>

#include "platform/clock.h"
#include "sampling/grammar/walker.h"

namespace ember::grammar {
namespace {

// Where a position lies: its place in the grammar without the copy counts of
// the repetitions around it (positions of different copies share it), and
// those counts, innermost repetition first.
struct Place {
  std::string key;
  std::vector<std::pair<uint32_t, uint32_t>> counts;  // (required, allowed) per repetition
};

Place PlaceOf(const CompiledGrammar& g, uint32_t pos) {
  const Position& p = g.positions[pos];
  Place out;
  if (p.instance == kNoInstance) {
    out.key = "p" + std::to_string(pos);
    return out;
  }
  std::string suffix = "@" + std::to_string(p.offset);
  for (uint32_t i = p.instance; i != kNoInstance;) {
    const RepInstance& r = g.instances[i];
    if (r.nullable_body) {  // a copy may be empty: counts are not bounded by code points
      out.key = "p" + std::to_string(pos);
      out.counts.clear();
      return out;
    }
    out.counts.emplace_back(r.required, r.allowed);
    if (r.parent == kNoInstance) {
      out.key = "s" + std::to_string(r.site) + suffix;
      break;
    }
    suffix = "@" + std::to_string(r.rep_offset) + suffix;
    i = r.parent;
  }
  return out;
}

// The most code points of a token that cannot tell the two places apart: a
// walk of c code points sees a difference in an "allowed" count only past the
// smaller one, and in a "required" count likewise.
uint32_t Horizon(const Place& a, const Place& b) {
  uint32_t h = UINT32_MAX;
  for (size_t i = 0; i < a.counts.size(); ++i) {
    const auto [ra, aa] = a.counts[i];
    const auto [rb, ab] = b.counts[i];
    if (ra != rb) h = std::min({h, ra, rb});
    if (aa != ab) h = std::min({h, aa, ab});
  }
  return h;
}

struct Remainder {
  std::string_view bytes;
  int32_t token;
};

// What one walk finds, and scratch shared by the walks of one Build.
struct Walk {
  std::vector<int32_t> ws;         // walk state per trie depth
  std::vector<uint32_t> stamp;     // [token index in order]: the last table that accepted it
  std::vector<uint32_t> accepted;  // token indices (in order) accepted
  std::vector<uint32_t> escapes;   // nodes where a path has popped below the position's frame
};

// Walks the trie from [kUnknown, pos], looking only at tokens of at least
// min_cp code points (subtrees without any are skipped). Fills w->accepted
// (stamping them with `table`) and w->escapes.
void WalkFrom(Walker& walker, StackStepper& st, const TokenTrie& trie, uint32_t pos, uint32_t table,
              uint32_t min_cp, Walk* w) {
  const std::vector<TrieNode>& nodes = trie.nodes();
  const std::vector<uint16_t>& cp = trie.order_code_points();
  const std::vector<uint16_t>& sub_cp = trie.subtree_code_points();
  ByteState start;
  start.stacks = {st.arena().Push(pos, StackArena::kUnknown)};
  w->ws[0] = static_cast<int32_t>(walker.Intern(start));
  w->accepted.clear();
  w->escapes.clear();
  for (uint32_t i = 1; i < nodes.size();) {
    const TrieNode& n = nodes[i];
    if (sub_cp[i] < min_cp) {
      i = n.skip;
      continue;
    }
    const int32_t ws = walker.Next(static_cast<uint32_t>(w->ws[n.depth - 1]), n.byte);
    if (ws == Walker::kDead) {
      i = n.skip;
      continue;
    }
    w->ws[n.depth] = ws;
    for (uint32_t k = n.tok_begin; k < n.own_end; ++k) {
      if (cp[k] < min_cp) continue;
      w->accepted.push_back(k);
      w->stamp[k] = table;
    }
    if (walker.can_escape(static_cast<uint32_t>(ws)) && n.skip > i + 1) w->escapes.push_back(i);
    ++i;
  }
}

// A table from its accepted tokens and remainders.
class TableBuilder {
 public:
  TableBuilder(const TokenTrie& trie, MaskTableStats* stats) : trie_(trie), stats_(stats) {}

  void Accept(uint32_t k) { accepted_.push_back(k); }
  void Remainder(std::string_view rest, int32_t token) { rem_.push_back({rest, token}); }
  void Escape(uint32_t node, uint16_t min_cp, uint16_t max_cp) {
    escapes_.push_back({node, min_cp, max_cp});
  }
  // Sets the accepted tokens directly (instead of Accept): a bitset or ids.
  void SetAccepted(std::vector<uint64_t> bits, std::vector<int32_t> ids) {
    preset_ = true;
    bits_ = std::move(bits);
    ids_ = std::move(ids);
  }
  // The remainders below escape node e for tokens of [min_cp, max_cp] code
  // points that are not accepted (accepted(k) false for token index k);
  // false once there are too many to list.
  template <class Accepted>
  bool AddRemainders(uint32_t e, uint32_t min_cp, uint32_t max_cp, const Accepted& accepted) {
    const TrieNode& n = trie_.nodes()[e];
    const auto& cp = trie_.order_code_points();
    for (uint32_t k = n.own_end; k < n.tok_end; ++k) {
      if (cp[k] < min_cp || cp[k] > max_cp || accepted(k)) continue;
      const int32_t t = trie_.order()[k];
      rem_.push_back({trie_.bytes(t).substr(n.depth), t});
    }
    return rem_.size() <= Limit();
  }
  size_t Limit() const { return std::max<size_t>(4096, static_cast<size_t>(trie_.n_vocab()) / 16); }
  bool listing() const { return escapes_.empty(); }

  void Finish(PositionTable* out) {
    const auto n_vocab = static_cast<size_t>(trie_.n_vocab());
    const std::vector<int32_t>& order = trie_.order();
    if (preset_) {
      stats_->dense += !bits_.empty();
      out->accepted_bits = std::move(bits_);
      out->accepted_ids = std::move(ids_);
    } else if (accepted_.size() * 32 > n_vocab) {  // ids or a bitset, whichever is smaller
      out->accepted_bits.assign((n_vocab + 63) / 64, 0);
      for (const uint32_t k : accepted_) {
        const auto id = static_cast<size_t>(order[k]);
        out->accepted_bits[id >> 6] |= uint64_t{1} << (id & 63);
      }
      ++stats_->dense;
    } else {
      for (const uint32_t k : accepted_) out->accepted_ids.push_back(order[k]);
      std::sort(out->accepted_ids.begin(), out->accepted_ids.end());
    }
    if (!escapes_.empty()) {
      out->escape_nodes = std::move(escapes_);
      ++stats_->escape_lists;
      return;
    }
    stats_->remainders += rem_.size();
    if (rem_.empty()) return;
    std::sort(rem_.begin(), rem_.end(), [](const struct Remainder& a, const struct Remainder& b) {
      return a.bytes < b.bytes || (a.bytes == b.bytes && a.token < b.token);
    });
    std::vector<std::string_view> strings;
    strings.reserve(rem_.size());
    for (const struct Remainder& r : rem_) {
      strings.push_back(r.bytes);
      out->rem_tokens.push_back(r.token);
    }
    out->rem_nodes = BuildPreorderTrie(strings);
  }

  // Drops the listed remainders for escape nodes instead (too many to list).
  void SwitchToEscapes() { rem_.clear(); }

 private:
  const TokenTrie& trie_;
  MaskTableStats* stats_;
  std::vector<uint32_t> accepted_;
  bool preset_ = false;
  std::vector<uint64_t> bits_;
  std::vector<int32_t> ids_;
  std::vector<struct Remainder> rem_;
  std::vector<PositionTable::EscapeNode> escapes_;
};

// A built table other copies' tables may be derived from.
struct Source {
  uint32_t pos = 0;    // a position the table is exact for (its counts)
  uint32_t table = 0;  // in MaskTables::tables_
  // Where paths escape, for tokens of min_cp..max_cp code points.
  std::shared_ptr<const std::vector<PositionTable::EscapeNode>> escapes;
  uint32_t longest = 0;  // code points of the longest token it accepts or may let escape
};

}  // namespace

Status MaskTables::Build(std::shared_ptr<const CompiledGrammar> grammar,
                         std::shared_ptr<const TokenTrie> trie,
                         std::shared_ptr<const MaskTables>* out) {
  const auto t0 = std::chrono::steady_clock::now();
  auto m = std::make_shared<MaskTables>();
  m->grammar_ = std::move(grammar);
  m->trie_ = std::move(trie);
  const CompiledGrammar& g = *m->grammar_;
  const TokenTrie& tr = *m->trie_;
  const auto& cp = tr.order_code_points();
  const uint32_t max_cp = tr.max_code_points();
  // One arena and one walker for every table: walks from neighbouring
  // positions (the copies of a repetition, say) meet the same states.
  StackArena arena;
  StackStepper st(g, &arena);
  Walker walker(&st);
  Walk w;
  uint32_t max_depth = 0;
  for (const TrieNode& n : tr.nodes()) max_depth = std::max<uint32_t>(max_depth, n.depth);
  w.ws.resize(max_depth + 1);
  w.stamp.assign(tr.order().size(), 0);  // (table 0 accepts nothing)
  std::vector<uint16_t> cp_of_id(static_cast<size_t>(tr.n_vocab()), 0);
  for (size_t k = 0; k < tr.order().size(); ++k)
    cp_of_id[static_cast<size_t>(tr.order()[k])] = cp[k];

  // Positions by place; each place's first position gets the base table.
  std::vector<std::string> order;
  std::unordered_map<std::string, std::vector<uint32_t>> groups;
  std::vector<Place> places(g.positions.size());
  m->table_of_.assign(g.positions.size(), 0);
  m->tables_.emplace_back();  // table 0: positions without char edges (never on top)
  for (uint32_t p = 0; p < g.positions.size(); ++p) {
    if (!g.positions[p].has_chars()) continue;
    ++m->stats_.positions;
    places[p] = PlaceOf(g, p);
    auto [it, added] = groups.emplace(places[p].key, std::vector<uint32_t>());
    if (added) order.push_back(places[p].key);
    it->second.push_back(p);
  }
  const auto new_table = [&]() {
    m->tables_.emplace_back();
    return static_cast<uint32_t>(m->tables_.size() - 1);
  };
  // tokens_by_cp[c]: the token ids of c code points.
  std::vector<std::vector<int32_t>> tokens_by_cp(max_cp + 1);
  for (size_t k = 0; k < tr.order().size(); ++k) tokens_by_cp[cp[k]].push_back(tr.order()[k]);

  for (const std::string& key : order) {
    const std::vector<uint32_t>& members = groups[key];
    // The group's first position: a full walk.
    Source base;
    base.pos = members[0];
    base.table = new_table();
    m->table_of_[base.pos] = base.table;
    WalkFrom(walker, st, tr, base.pos, base.table, 0, &w);
    {
      auto escapes = std::make_shared<std::vector<PositionTable::EscapeNode>>();
      TableBuilder b(tr, &m->stats_);
      for (const uint32_t k : w.accepted) {
        b.Accept(k);
        base.longest = std::max<uint32_t>(base.longest, cp[k]);
      }
      bool listing = true;
      const auto accepted = [&](uint32_t k) { return w.stamp[k] == base.table; };
      for (const uint32_t e : w.escapes) {
        escapes->push_back({e, 0, UINT16_MAX});
        base.longest = std::max<uint32_t>(base.longest, tr.subtree_code_points()[e]);
        if (listing) listing = b.AddRemainders(e, 0, UINT16_MAX, accepted);
      }
      if (!listing) {
        b.SwitchToEscapes();
        for (const PositionTable::EscapeNode& e : *escapes) b.Escape(e.node, e.min_cp, e.max_cp);
      }
      b.Finish(&m->tables_[base.table]);
      base.escapes = std::move(escapes);
    }
    // Every other copy: from the nearest table built so far (the one whose
    // counts leave the largest horizon: the base, or one of the last few, say
    // the same inner copy in the previous outer copy), walking only the
    // tokens past that horizon. Copies whose counts are equal once clipped at
    // the longest token are alike for every token: one table.
    constexpr size_t kRecent = 16;
    std::vector<Source> recent = {base};  // the base first, then the latest
    const auto remember = [&](Source s) {
      if (recent.size() == kRecent) recent.erase(recent.begin() + 1);
      recent.push_back(std::move(s));
    };
    std::map<std::vector<uint32_t>, uint32_t> by_counts;
    for (size_t i = 1; i < members.size(); ++i) {
      const uint32_t p = members[i];
      size_t best = 0;
      uint32_t h = 0;
      for (size_t r = 0; r < recent.size(); ++r) {
        const uint32_t hr = Horizon(places[p], places[recent[r].pos]);
        if (r == 0 || hr >= h) {
          h = hr;
          best = r;
        }
      }
      const Source src = recent[best];
      if (h >= max_cp) {  // no token can tell them apart
        m->table_of_[p] = src.table;
        Source same = src;
        same.pos = p;
        remember(std::move(same));
        continue;
      }
      std::vector<uint32_t> clipped;
      for (const auto& [req, allowed] : places[p].counts) {
        clipped.push_back(std::min(req, max_cp));
        clipped.push_back(std::min(allowed, max_cp));
      }
      auto found = by_counts.find(clipped);
      if (found != by_counts.end()) {
        m->table_of_[p] = found->second;
        continue;
      }
      const uint32_t table = static_cast<uint32_t>(m->tables_.size());
      WalkFrom(walker, st, tr, p, table, h + 1, &w);
      if (h >= src.longest && w.accepted.empty() && w.escapes.empty()) {
        m->table_of_[p] = src.table;  // nothing past the horizon on either side
        by_counts[clipped] = src.table;
        Source same = src;
        same.pos = p;
        remember(std::move(same));
        continue;
      }
      new_table();
      by_counts[clipped] = table;
      m->table_of_[p] = table;
      ++m->stats_.derived;
      // Accepted: the source's up to h code points, and what p's walk found past h.
      const PositionTable& st_src = m->tables_[src.table];
      Source next;
      next.pos = p;
      next.table = table;
      std::vector<uint64_t> bits;
      std::vector<int32_t> ids;
      if (!st_src.accepted_bits.empty()) {
        bits = st_src.accepted_bits;
        for (uint32_t c = h + 1; c <= max_cp; ++c) {
          for (const int32_t t : tokens_by_cp[c]) {
            bits[static_cast<size_t>(t) >> 6] &= ~(uint64_t{1} << (t & 63));
          }
        }
        for (const uint32_t k : w.accepted) {
          const auto id = static_cast<size_t>(tr.order()[k]);
          bits[id >> 6] |= uint64_t{1} << (id & 63);
        }
      } else {
        std::vector<int32_t> longer;
        for (const uint32_t k : w.accepted) longer.push_back(tr.order()[k]);
        std::sort(longer.begin(), longer.end());
        std::vector<int32_t> shorter;
        for (const int32_t t : st_src.accepted_ids) {
          if (cp_of_id[static_cast<size_t>(t)] <= h) shorter.push_back(t);
        }
        ids.resize(shorter.size() + longer.size());
        std::merge(shorter.begin(), shorter.end(), longer.begin(), longer.end(), ids.begin());
      }
      next.longest = std::min(src.longest, h);
      for (const uint32_t k : w.accepted) next.longest = std::max<uint32_t>(next.longest, cp[k]);
      const auto accepted = [&](uint32_t k) {
        const int32_t t = tr.order()[k];
        return bits.empty() ? std::binary_search(ids.begin(), ids.end(), t)
                            : ((bits[static_cast<size_t>(t) >> 6] >> (t & 63)) & 1) != 0;
      };
      // Escapes: the source's up to h code points, p's past h.
      auto escapes = std::make_shared<std::vector<PositionTable::EscapeNode>>();
      const auto h16 = static_cast<uint16_t>(std::min<uint32_t>(h, UINT16_MAX - 1));
      for (const PositionTable::EscapeNode& e : *src.escapes) {
        if (e.min_cp <= h16) escapes->push_back({e.node, e.min_cp, std::min(e.max_cp, h16)});
      }
      for (const uint32_t e : w.escapes) {
        escapes->push_back({e, static_cast<uint16_t>(h16 + 1), UINT16_MAX});
        next.longest = std::max<uint32_t>(next.longest, tr.subtree_code_points()[e]);
      }
      TableBuilder b(tr, &m->stats_);
      bool listing = true;
      for (size_t j = 0; listing && j < escapes->size(); ++j) {
        const PositionTable::EscapeNode& e = (*escapes)[j];
        listing = b.AddRemainders(e.node, e.min_cp, e.max_cp, accepted);
      }
      if (!listing) {
        b.SwitchToEscapes();
        for (const PositionTable::EscapeNode& e : *escapes) b.Escape(e.node, e.min_cp, e.max_cp);
      }
      b.SetAccepted(std::move(bits), std::move(ids));
      b.Finish(&m->tables_[table]);
      next.escapes = std::move(escapes);
      remember(std::move(next));
    }
  }
  m->stats_.tables = m->tables_.size() - 1;
  m->stats_.seconds = SecondsSince(t0);
  *out = std::move(m);
  return Status::Ok();
}

}  // namespace ember::grammar
