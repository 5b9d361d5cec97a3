#include "sampling/grammar/matcher.h"

#include <algorithm>

namespace ember::grammar {
namespace {

// Arena nodes beyond which the matcher keeps only its live stacks.
constexpr size_t kCompactAt = size_t{1} << 16;

}  // namespace

GrammarMatcher::GrammarMatcher(std::shared_ptr<const MaskTables> tables)
    : tables_(std::move(tables)) {
  Reset();
}

GrammarMatcher::GrammarMatcher(const GrammarMatcher& o) { *this = o; }

GrammarMatcher& GrammarMatcher::operator=(const GrammarMatcher& o) {
  if (this == &o) return *this;
  // The copy gets an arena of its own holding only the live stacks (cheap,
  // however long the original has been running).
  tables_ = o.tables_;
  state_ = o.state_;
  finished_ = o.finished_;
  Compact(*o.arena_);
  return *this;
}

void GrammarMatcher::Reset() {
  arena_ = std::make_unique<StackArena>();
  stepper_ = std::make_unique<StackStepper>(tables_->grammar(), arena_.get());
  remainder_cache_.clear();
  state_ = ByteState();
  state_.stacks = StartStacks(*stepper_, tables_->grammar().root, StackArena::kEmpty);
  finished_ = false;
}

bool GrammarMatcher::Accept(int32_t token) {
  const TokenTrie& trie = tables_->trie();
  if (finished_) return false;
  if (trie.is_eog(token)) {
    if (!::ember::grammar::CanEnd(state_)) return false;
    finished_ = true;
    return true;
  }
  ByteState next;
  if (!Advance(token, &next)) return false;
  state_ = std::move(next);
  if (arena_->size() > kCompactAt) Compact(*arena_);
  return true;
}

bool GrammarMatcher::Advance(int32_t token, ByteState* out) {
  const TokenTrie& trie = tables_->trie();
  if (!trie.in_trie(token)) return false;
  *out = state_;
  ByteState next;
  bool escaped = false;
  for (const char c : trie.bytes(token)) {
    if (!AdvanceByte(*stepper_, *out, static_cast<uint8_t>(c), &next, &escaped)) return false;
    std::swap(*out, next);
  }
  return true;
}

void GrammarMatcher::Compact(const StackArena& from) {
  auto fresh = std::make_unique<StackArena>();
  std::vector<uint32_t> stacks;
  for (const uint32_t s : state_.stacks) {
    if (StackArena::IsBottom(s)) {
      stacks.push_back(s);
      continue;
    }
    const std::vector<uint32_t> frames = from.Frames(s);  // top first
    uint32_t node = StackArena::kEmpty;
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) node = fresh->Push(*it, node);
    stacks.push_back(node);
  }
  std::sort(stacks.begin(), stacks.end());
  arena_ = std::move(fresh);
  stepper_ = std::make_unique<StackStepper>(tables_->grammar(), arena_.get());
  state_.stacks = std::move(stacks);
  remainder_cache_.clear();
}

void GrammarMatcher::FillMask(std::vector<uint64_t>* bits) {
  const TokenTrie& trie = tables_->trie();
  bits->assign((static_cast<size_t>(trie.n_vocab()) + 63) / 64, 0);
  if (finished_) return;
  if (state_.partial.left != 0) {  // an unfinished character: no table applies
    WalkAll(state_, bits);
    return;
  }
  for (const uint32_t s : state_.stacks) {
    if (s == StackArena::kEmpty) {
      for (const int32_t t : trie.eog()) SetBit(bits, t);
      continue;
    }
    const uint32_t pos = arena_->pos(s);
    const PositionTable& table = tables_->table(pos);
    if (!table.accepted_bits.empty()) {
      for (size_t w = 0; w < bits->size(); ++w) (*bits)[w] |= table.accepted_bits[w];
    } else {
      for (const int32_t t : table.accepted_ids) SetBit(bits, t);
    }
    const uint32_t below = arena_->parent(s);
    if ((table.rem_tokens.empty() && table.escape_nodes.empty()) || below == StackArena::kEmpty) {
      continue;
    }
    for (const int32_t t : Remainders(pos, below)) SetBit(bits, t);
  }
}

const std::vector<int32_t>& GrammarMatcher::Remainders(uint32_t pos, uint32_t below) {
  const uint64_t key = (uint64_t{pos} << 32) | below;
  auto it = remainder_cache_.find(key);
  if (it != remainder_cache_.end()) return it->second;
  std::vector<int32_t>& out = remainder_cache_[key];
  const PositionTable& table = tables_->table(pos);
  // The stacks below, expanded: what follows once pos's frame has ended.
  ByteState from;
  stepper_->BeginSet();
  stepper_->Expand(below, &from.stacks);
  std::sort(from.stacks.begin(), from.stacks.end());
  Walker walker(stepper_.get());
  const uint32_t start = walker.Intern(from);
  if (table.escape_nodes.empty()) {
    Walk(walker, start, table.rem_nodes, 0, static_cast<uint32_t>(table.rem_nodes.size()),
         table.rem_tokens, nullptr, 0, 0, &out);
  } else {
    const TokenTrie& trie = tables_->trie();
    for (const PositionTable::EscapeNode& e : table.escape_nodes) {
      Walk(walker, start, trie.nodes(), e.node, trie.nodes()[e.node].skip, trie.order(),
           &trie.order_code_points(), e.min_cp, e.max_cp, &out);
    }
  }
  return out;
}

void GrammarMatcher::Walk(Walker& walker, uint32_t start, const std::vector<TrieNode>& nodes,
                          uint32_t root, uint32_t end, const std::vector<int32_t>& tokens,
                          const std::vector<uint16_t>* cp, uint16_t min_cp, uint16_t max_cp,
                          std::vector<int32_t>* out) {
  // The subtree of `root` (nodes (root, end)), from walk state `start`.
  const uint32_t base = nodes[root].depth;
  ws_.assign(1, static_cast<int32_t>(start));
  for (uint32_t i = root + 1; i < end;) {
    const TrieNode& n = nodes[i];
    const uint32_t d = n.depth - base;
    const int32_t w = walker.Next(static_cast<uint32_t>(ws_[d - 1]), n.byte);
    if (w == Walker::kDead) {
      i = n.skip;
      continue;
    }
    if (ws_.size() <= d) ws_.resize(d + 1);
    ws_[d] = w;
    for (uint32_t k = n.tok_begin; k < n.own_end; ++k) {
      if (cp == nullptr || ((*cp)[k] >= min_cp && (*cp)[k] <= max_cp)) out->push_back(tokens[k]);
    }
    ++i;
  }
}

void GrammarMatcher::WalkAll(const ByteState& from, std::vector<uint64_t>* bits) {
  const TokenTrie& trie = tables_->trie();
  Walker walker(stepper_.get());
  std::vector<int32_t> tokens;
  Walk(walker, walker.Intern(from), trie.nodes(), 0, static_cast<uint32_t>(trie.nodes().size()),
       trie.order(), nullptr, 0, 0, &tokens);
  for (const int32_t t : tokens) SetBit(bits, t);
}

void GrammarMatcher::FillMaskBruteForce(std::vector<uint64_t>* bits) {
  const TokenTrie& trie = tables_->trie();
  bits->assign((static_cast<size_t>(trie.n_vocab()) + 63) / 64, 0);
  if (finished_) return;
  ByteState unused;
  for (int32_t t = 0; t < trie.n_vocab(); ++t) {
    if (trie.is_eog(t) ? ::ember::grammar::CanEnd(state_) : Advance(t, &unused)) SetBit(bits, t);
  }
}

Status BuildGrammarTables(std::string_view gbnf, std::string_view root,
                          std::shared_ptr<const TokenTrie> trie,
                          std::shared_ptr<const MaskTables>* out) {
  auto g = std::make_shared<CompiledGrammar>();
  EMBER_RETURN_IF_ERROR(CompileGbnf(gbnf, root, g.get()));
  return MaskTables::Build(std::move(g), std::move(trie), out);
}

}  // namespace ember::grammar
