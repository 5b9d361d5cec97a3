#include "sampling/grammar/mask_tables.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <unordered_map>

#include "sampling/grammar/walker.h"

namespace ember::grammar {
namespace {

// Positions with equal keys have equal tables (mask_tables.h): a position
// outside repetitions is its own key; inside one, the key is the copy's
// place (its enclosing copies' places, their offsets) with the copy counts
// clipped at `clip`.
class Keys {
 public:
  Keys(const CompiledGrammar& g, uint32_t clip)
      : g_(g), clip_(clip), instance_keys_(g.instances.size()) {}

  std::string Of(uint32_t pos) {
    const Position& p = g_.positions[pos];
    if (p.instance == kNoInstance) return "p" + std::to_string(pos);
    return Instance(p.instance) + "@" + std::to_string(p.offset);
  }

 private:
  const std::string& Instance(uint32_t i) {
    std::string& key = instance_keys_[i];
    if (!key.empty()) return key;
    const RepInstance& r = g_.instances[i];
    const auto c = [&](uint32_t v) { return r.nullable_body ? v : std::min(v, clip_); };
    std::string head = r.parent == kNoInstance
                           ? "s" + std::to_string(r.site)
                           : Instance(r.parent) + "@" + std::to_string(r.offset);
    key = head + "[" + std::to_string(c(r.required)) + "," + std::to_string(c(r.allowed)) + "]";
    return key;
  }

  const CompiledGrammar& g_;
  uint32_t clip_;
  std::vector<std::string> instance_keys_;
};

struct Remainder {
  std::string_view bytes;
  int32_t token;
};

void BuildTable(StackStepper& st, const TokenTrie& trie, uint32_t pos, std::vector<int32_t>* ws,
                std::vector<uint8_t>* accepted, PositionTable* out, MaskTableStats* stats) {
  const std::vector<TrieNode>& nodes = trie.nodes();
  const std::vector<int32_t>& order = trie.order();
  Walker walker(&st);
  ByteState start;
  start.stacks = {st.arena().Push(pos, StackArena::kUnknown)};
  (*ws)[0] = static_cast<int32_t>(walker.Intern(start));
  accepted->assign(order.size(), 0);
  std::vector<uint32_t> escapes;  // nodes where a path has popped below pos's frame
  size_t n_accepted = 0;
  for (uint32_t i = 1; i < nodes.size();) {
    const TrieNode& n = nodes[i];
    const int32_t w = walker.Next(static_cast<uint32_t>((*ws)[n.depth - 1]), n.byte);
    if (w == Walker::kDead) {
      i = n.skip;
      continue;
    }
    (*ws)[n.depth] = w;
    for (uint32_t k = n.tok_begin; k < n.own_end; ++k) (*accepted)[k] = 1;
    n_accepted += n.own_end - n.tok_begin;
    if (walker.can_escape(static_cast<uint32_t>(w)) && n.skip > i + 1) escapes.push_back(i);
    ++i;
  }
  // Accepted tokens, as ids or as a bitset, whichever is smaller.
  const auto n_vocab = static_cast<size_t>(trie.n_vocab());
  if (n_accepted * 32 > n_vocab) {
    out->accepted_bits.assign((n_vocab + 63) / 64, 0);
    for (size_t k = 0; k < order.size(); ++k) {
      if ((*accepted)[k]) {
        const auto id = static_cast<size_t>(order[k]);
        out->accepted_bits[id >> 6] |= uint64_t{1} << (id & 63);
      }
    }
    ++stats->dense;
  } else {
    for (size_t k = 0; k < order.size(); ++k) {
      if ((*accepted)[k]) out->accepted_ids.push_back(order[k]);
    }
    std::sort(out->accepted_ids.begin(), out->accepted_ids.end());
  }
  // The escaping tokens: below each escape node, the rest of every token
  // that was not accepted anyway.
  std::vector<Remainder> rem;
  const size_t limit = std::max<size_t>(4096, n_vocab / 16);
  for (const uint32_t e : escapes) {
    const TrieNode& n = nodes[e];
    for (uint32_t k = n.own_end; k < n.tok_end; ++k) {
      if ((*accepted)[k]) continue;
      rem.push_back({trie.bytes(order[k]).substr(n.depth), order[k]});
    }
    if (rem.size() > limit) {
      out->escape_nodes = std::move(escapes);
      ++stats->escape_lists;
      return;
    }
  }
  stats->remainders += rem.size();
  if (rem.empty()) return;
  std::sort(rem.begin(), rem.end(), [](const Remainder& a, const Remainder& b) {
    return a.bytes < b.bytes || (a.bytes == b.bytes && a.token < b.token);
  });
  std::vector<std::string_view> strings;
  strings.reserve(rem.size());
  for (const Remainder& r : rem) {
    strings.push_back(r.bytes);
    out->rem_tokens.push_back(r.token);
  }
  out->rem_nodes = BuildPreorderTrie(strings);
}

}  // namespace

Status MaskTables::Build(std::shared_ptr<const CompiledGrammar> grammar,
                         std::shared_ptr<const TokenTrie> trie,
                         std::shared_ptr<const MaskTables>* out) {
  const auto t0 = std::chrono::steady_clock::now();
  auto m = std::make_shared<MaskTables>();
  m->grammar_ = std::move(grammar);
  m->trie_ = std::move(trie);
  const CompiledGrammar& g = *m->grammar_;
  const TokenTrie& trie_ref = *m->trie_;
  StackArena arena;
  StackStepper st(g, &arena);
  uint32_t max_depth = 0;
  for (const TrieNode& n : trie_ref.nodes()) max_depth = std::max<uint32_t>(max_depth, n.depth);
  std::vector<int32_t> ws(max_depth + 1);
  std::vector<uint8_t> accepted;
  Keys keys(g, trie_ref.max_code_points() + 1);
  std::unordered_map<std::string, uint32_t> table_ids;
  m->table_of_.assign(g.positions.size(), UINT32_MAX);
  m->tables_.emplace_back();  // table 0: positions without char edges (never on top)
  for (uint32_t p = 0; p < g.positions.size(); ++p) {
    if (!g.positions[p].has_chars()) {
      m->table_of_[p] = 0;
      continue;
    }
    ++m->stats_.positions;
    auto [it, added] = table_ids.emplace(keys.Of(p), static_cast<uint32_t>(m->tables_.size()));
    m->table_of_[p] = it->second;
    if (!added) continue;
    m->tables_.emplace_back();
    BuildTable(st, trie_ref, p, &ws, &accepted, &m->tables_.back(), &m->stats_);
  }
  m->stats_.tables = m->tables_.size() - 1;
  m->stats_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  *out = std::move(m);
  return Status::Ok();
}

}  // namespace ember::grammar
