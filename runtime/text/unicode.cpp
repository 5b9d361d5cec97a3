#include "runtime/text/unicode.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <utility>

#include "platform/utf8.h"

namespace ember::unicode {

namespace {
#include "runtime/text/unicode_data.inc"

constexpr uint8_t kCategoryBits = 0x07;
constexpr uint8_t kWhitespaceBit = 0x08;

uint8_t LookupFlags(uint32_t cp) {
  if (cp >= 0x110000) return 0;  // unassigned
  // The last entry starting at or before cp.
  const uint32_t key = (cp << 8) | 0xFF;
  const uint32_t* it = std::upper_bound(std::begin(kUnicodeRanges), std::end(kUnicodeRanges), key);
  return static_cast<uint8_t>(*(it - 1) & 0xFF);
}

// ASCII is most of most text: answer it from a small table.
struct AsciiFlags {
  std::array<uint8_t, 128> flags;
  AsciiFlags() {
    for (uint32_t c = 0; c < 128; ++c) flags[c] = LookupFlags(c);
  }
};

uint8_t Flags(uint32_t cp) {
  static const AsciiFlags ascii;
  return cp < 128 ? ascii.flags[cp] : LookupFlags(cp);
}

}  // namespace

Category GetCategory(uint32_t cp) { return static_cast<Category>(Flags(cp) & kCategoryBits); }
bool IsWhitespace(uint32_t cp) { return (Flags(cp) & kWhitespaceBit) != 0; }
const char* UnicodeVersion() { return EMBER_UNICODE_VERSION; }

// ---------------------------------------------------------------------------------------------
// UTF-8

size_t Utf8SeqLen(uint8_t lead) {
  static constexpr uint8_t kLen[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLen[lead >> 4];
}

std::vector<uint32_t> DecodeUtf8Lenient(std::string_view s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  auto cont = [&](size_t j) { return j < s.size() && (static_cast<uint8_t>(s[j]) & 0xC0) == 0x80; };
  auto bits = [&](size_t j) { return static_cast<uint32_t>(static_cast<uint8_t>(s[j]) & 0x3F); };
  size_t i = 0;
  while (i < s.size()) {
    const uint8_t b = static_cast<uint8_t>(s[i]);
    uint32_t cp = kReplacementChar;
    size_t len = 1;
    if (b < 0x80) {
      cp = b;
    } else if ((b & 0xE0) == 0xC0) {
      if (cont(i + 1)) {
        cp = ((b & 0x1Fu) << 6) | bits(i + 1);
        len = 2;
      }
    } else if ((b & 0xF0) == 0xE0) {
      if (cont(i + 1) && cont(i + 2)) {
        cp = ((b & 0x0Fu) << 12) | (bits(i + 1) << 6) | bits(i + 2);
        len = 3;
      }
    } else if ((b & 0xF8) == 0xF0) {
      if (cont(i + 1) && cont(i + 2) && cont(i + 3)) {
        cp = ((b & 0x07u) << 18) | (bits(i + 1) << 12) | (bits(i + 2) << 6) | bits(i + 3);
        len = 4;
        // llama.cpp would throw re-encoding these; one replacement character is kinder.
        if (cp > 0x10FFFF) {
          cp = kReplacementChar;
          len = 1;
        }
      }
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

int CheckUtf8(std::string_view s, size_t i) { return utf8::Check(s, i); }

// ---------------------------------------------------------------------------------------------
// GPT-2 bytes

namespace {
struct Gpt2Map {
  std::array<uint32_t, 256> byte_to_char;
  std::array<int16_t, 256 + 68> char_to_byte;  // the characters are all below U+0144
  Gpt2Map() {
    char_to_byte.fill(-1);
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      byte_to_char[b] = printable ? b : next++;
      char_to_byte[byte_to_char[b]] = static_cast<int16_t>(b);
    }
  }
};
const Gpt2Map& Gpt2() {
  static const Gpt2Map map;
  return map;
}
}  // namespace

uint32_t ByteToGpt2Char(uint8_t b) { return Gpt2().byte_to_char[b]; }

int Gpt2CharToByte(uint32_t cp) {
  return cp < Gpt2().char_to_byte.size() ? Gpt2().char_to_byte[cp] : -1;
}

// ---------------------------------------------------------------------------------------------
// Regex

namespace {

constexpr uint32_t kInf = std::numeric_limits<uint32_t>::max();
constexpr size_t kNoMatch = std::numeric_limits<size_t>::max();

struct CharClass {
  std::vector<std::pair<uint32_t, uint32_t>> ranges;  // inclusive literal ranges
  uint8_t categories = 0;                             // bit per Category
  bool space = false, not_space = false;
  bool digit = false, not_digit = false;
  bool word = false, not_word = false;
  bool any_but_newline = false;  // '.'
  bool negated = false;
  std::vector<CharClass> also;  // folded lookaheads: each must match as well

  bool Plain() const { return !negated && also.empty(); }

  bool Matches(uint32_t cp) const {
    const uint8_t f = Flags(cp);
    const bool ws = (f & kWhitespaceBit) != 0;
    // llama.cpp runs these regexes on text where each non-ASCII whitespace character was
    // replaced by U+000B (and every other non-ASCII character by a stand-in for its category),
    // so a literal range sees non-ASCII whitespace as U+000B and no category matches it.
    const uint32_t lit = (cp > 0x7F && ws) ? 0x0B : cp;
    const bool is_digit = cp >= '0' && cp <= '9';
    const bool is_word =
        is_digit || (cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z') || cp == '_';
    bool m = (space && ws) || (not_space && !ws) || (digit && is_digit) ||
             (not_digit && !is_digit) || (word && is_word) || (not_word && !is_word) ||
             (any_but_newline && cp != '\n' && cp != '\r' && cp != 0x2028 && cp != 0x2029);
    if (!m && categories != 0 && !(cp > 0x7F && ws)) {
      m = (categories >> (f & kCategoryBits)) & 1;
    }
    for (size_t k = 0; !m && k < ranges.size(); ++k) {
      m = lit >= ranges[k].first && lit <= ranges[k].second;
    }
    if (m == negated) return false;
    for (const CharClass& c : also) {
      if (!c.Matches(cp)) return false;
    }
    return true;
  }

  void Union(const CharClass& o) {
    ranges.insert(ranges.end(), o.ranges.begin(), o.ranges.end());
    categories |= o.categories;
    space |= o.space;
    not_space |= o.not_space;
    digit |= o.digit;
    not_digit |= o.not_digit;
    word |= o.word;
    not_word |= o.not_word;
    any_but_newline |= o.any_but_newline;
  }
};

enum class Kind : uint8_t {
  kClass,
  kGroup,
  kLookahead,
  kNegLookahead,
  kBegin,
  kEnd,
  kWordBoundary,
  kNotWordBoundary,
};

struct Node {
  Kind kind = Kind::kClass;
  uint32_t min = 1, max = 1;
  CharClass cls;                        // kClass
  std::vector<std::vector<Node>> alts;  // kGroup and lookaheads
};

bool IsWordChar(const uint32_t* cps, size_t n, size_t i) {
  if (i >= n) return false;
  const uint32_t c = cps[i];
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

// Recursive-descent parser over the pattern's code points.
class Parser {
 public:
  explicit Parser(std::string_view pattern) : pattern_(pattern), p_(DecodeUtf8Lenient(pattern)) {}

  Status Parse(Node* root) {
    root->kind = Kind::kGroup;
    if (!ParseAlts(&root->alts)) return Error();
    if (i_ != p_.size()) {
      Fail("unbalanced ')'");
      return Error();
    }
    if (!Simplify(root)) return Error();
    if (root->kind != Kind::kGroup || root->min != 1 || root->max != 1) {
      // Simplify folded the whole pattern into one node; the matcher starts from a group.
      Node inner = std::move(*root);
      *root = Node();
      root->kind = Kind::kGroup;
      root->alts.emplace_back();
      root->alts[0].push_back(std::move(inner));
    }
    return Status::Ok();
  }

 private:
  Status Error() const {
    return InvalidArgument("regex \"" + std::string(pattern_) + "\": " + err_ + " at character " +
                           std::to_string(i_));
  }
  bool Fail(const std::string& m) {
    if (err_.empty()) err_ = m;
    return false;
  }
  bool AtEnd() const { return i_ >= p_.size(); }
  uint32_t Peek(size_t k = 0) const { return i_ + k < p_.size() ? p_[i_ + k] : 0; }

  bool ParseAlts(std::vector<std::vector<Node>>* alts) {
    alts->emplace_back();
    while (!AtEnd() && Peek() != ')') {
      if (Peek() == '|') {
        ++i_;
        alts->emplace_back();
        continue;
      }
      Node n;
      if (!ParseAtom(&n) || !ParseQuantifier(&n)) return false;
      alts->back().push_back(std::move(n));
    }
    return true;
  }

  bool ParseAtom(Node* n) {
    const uint32_t c = p_[i_++];
    switch (c) {
      case '(': {
        n->kind = Kind::kGroup;
        if (Peek() == '?') {
          if (Peek(1) == ':') {
            i_ += 2;
          } else if (Peek(1) == '=') {
            n->kind = Kind::kLookahead, i_ += 2;
          } else if (Peek(1) == '!') {
            n->kind = Kind::kNegLookahead, i_ += 2;
          } else {
            return Fail("unsupported group syntax '(?'");
          }
        }
        if (!ParseAlts(&n->alts)) return false;
        if (Peek() != ')') return Fail("missing ')'");
        ++i_;
        return true;
      }
      case '[':
        return ParseClass(&n->cls);
      case '.':
        n->cls.any_but_newline = true;
        return true;
      case '^':
        n->kind = Kind::kBegin;
        return true;
      case '$':
        n->kind = Kind::kEnd;
        return true;
      case '\\':
        if (Peek() == 'b' || Peek() == 'B') {
          n->kind = Peek() == 'b' ? Kind::kWordBoundary : Kind::kNotWordBoundary;
          ++i_;
          return true;
        }
        return ParseEscape(&n->cls);
      case '*':
      case '+':
      case '?':
      case '{':
      case '}':
      case ']':
      case ')':
        --i_;
        return Fail("unexpected '" + std::string(1, static_cast<char>(c)) + "'");
      default:
        n->cls.ranges.emplace_back(c, c);
        return true;
    }
  }

  bool ParseNumber(uint32_t* v) {
    if (AtEnd() || Peek() < '0' || Peek() > '9') return Fail("expected a number");
    uint64_t x = 0;
    while (!AtEnd() && Peek() >= '0' && Peek() <= '9') {
      x = x * 10 + (p_[i_++] - '0');
      if (x > 100000) return Fail("repetition count too large");
    }
    *v = static_cast<uint32_t>(x);
    return true;
  }

  bool ParseQuantifier(Node* n) {
    if (AtEnd()) return true;
    uint32_t lo = 0, hi = kInf;
    switch (Peek()) {
      case '*':
        ++i_;
        break;
      case '+':
        lo = 1;
        ++i_;
        break;
      case '?':
        hi = 1;
        ++i_;
        break;
      case '{':
        ++i_;
        if (!ParseNumber(&lo)) return false;
        hi = lo;
        if (Peek() == ',') {
          ++i_;
          hi = kInf;
          if (Peek() != '}' && !ParseNumber(&hi)) return false;
        }
        if (Peek() != '}') return Fail("missing '}'");
        ++i_;
        if (hi < lo) return Fail("bad repetition range");
        break;
      default:
        return true;  // no quantifier
    }
    if (Peek() == '?' || Peek() == '+') {
      return Fail("lazy and possessive quantifiers are not supported");
    }
    if (n->kind != Kind::kClass && n->kind != Kind::kGroup) return Fail("quantified assertion");
    n->min = lo, n->max = hi;
    return true;
  }

  bool ParseHex(int digits, uint32_t* v) {
    *v = 0;
    for (int k = 0; k < digits; ++k) {
      const uint32_t c = Peek();
      int d = c >= '0' && c <= '9'   ? static_cast<int>(c - '0')
              : c >= 'a' && c <= 'f' ? static_cast<int>(c - 'a' + 10)
              : c >= 'A' && c <= 'F' ? static_cast<int>(c - 'A' + 10)
                                     : -1;
      if (d < 0) return Fail("bad hex escape");
      *v = *v * 16 + d;
      ++i_;
    }
    return true;
  }

  // After a backslash. Adds the escape's characters to `cls`; `*single` gets the code point when
  // the escape stands for one character (so it can start a range inside [..]).
  bool ParseEscape(CharClass* cls, uint32_t* single = nullptr) {
    if (AtEnd()) return Fail("trailing backslash");
    const uint32_t c = p_[i_++];
    uint32_t lit;
    switch (c) {
      case 's':
        cls->space = true;
        return true;
      case 'S':
        cls->not_space = true;
        return true;
      case 'd':
        cls->digit = true;
        return true;
      case 'D':
        cls->not_digit = true;
        return true;
      case 'w':
        cls->word = true;
        return true;
      case 'W':
        cls->not_word = true;
        return true;
      case 'p':
        return ParseProperty(cls);
      case 'r':
        lit = '\r';
        break;
      case 'n':
        lit = '\n';
        break;
      case 't':
        lit = '\t';
        break;
      case 'f':
        lit = '\f';
        break;
      case 'v':
        lit = '\v';
        break;
      case '0':
        lit = 0;
        break;
      case 'x':
        if (!ParseHex(2, &lit)) return false;
        break;
      case 'u':
        if (!ParseHex(4, &lit)) return false;
        break;
      default:
        // Escaped punctuation stands for itself; escaped letters we do not know are errors.
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
          return Fail("unsupported escape '\\" + std::string(1, static_cast<char>(c)) + "'");
        }
        lit = c;
    }
    cls->ranges.emplace_back(lit, lit);
    if (single) *single = lit;
    return true;
  }

  bool ParseProperty(CharClass* cls) {
    if (Peek() != '{') return Fail("expected '{' after \\p");
    std::string name;
    size_t j = i_ + 1;
    while (j < p_.size() && p_[j] != '}' && name.size() < 16)
      name.push_back(static_cast<char>(p_[j++]));
    if (j >= p_.size() || p_[j] != '}') return Fail("unterminated \\p{");
    Category cat;
    // llama.cpp maps the letter subcategories onto \p{L} (unicode.cpp k_ucat_enum); so do we, so
    // that the same regexes split the same way.
    if (name == "L" || name == "Lu" || name == "Ll" || name == "Lt" || name == "Lm" ||
        name == "Lo") {
      cat = Category::kLetter;
    } else if (name == "N") {
      cat = Category::kNumber;
    } else if (name == "P") {
      cat = Category::kPunctuation;
    } else if (name == "S") {
      cat = Category::kSymbol;
    } else if (name == "M") {
      cat = Category::kMark;
    } else {
      return Fail("unsupported property \\p{" + name + "}");
    }
    cls->categories |= static_cast<uint8_t>(1u << static_cast<uint8_t>(cat));
    i_ = j + 1;
    return true;
  }

  bool ParseClass(CharClass* cls) {
    if (Peek() == '^') {
      cls->negated = true;
      ++i_;
    }
    while (true) {
      if (AtEnd()) return Fail("missing ']'");
      uint32_t c = p_[i_++];
      if (c == ']') return true;
      uint32_t lo;
      if (c == '\\') {
        lo = kInf;
        if (!ParseEscape(cls, &lo)) return false;
        if (lo == kInf) continue;  // a class escape such as \s or \p{L}
        cls->ranges.pop_back();    // re-added below, maybe as a range
      } else if (c == '[') {
        return Fail("nested classes are not supported");
      } else {
        lo = c;
      }
      uint32_t hi = lo;
      if (Peek() == '-' && Peek(1) != ']' && i_ + 1 < p_.size()) {
        ++i_;
        uint32_t h = p_[i_++];
        if (h == '\\') {
          h = kInf;
          CharClass tmp;
          if (!ParseEscape(&tmp, &h)) return false;
          if (h == kInf) return Fail("bad range end");
        }
        hi = h;
        if (hi < lo) return Fail("bad range");
      }
      cls->ranges.emplace_back(lo, hi);
    }
  }

  // Turns group `n` into the class `cls`, keeping its quantifier.
  static void BecomeClass(Node* n, CharClass cls) {
    n->kind = Kind::kClass;
    n->cls = std::move(cls);
    n->alts.clear();
  }

  // Folds groups that always consume exactly one character into character classes, so that
  // repeating them needs no recursion, and rejects unbounded repetition of anything else.
  bool Simplify(Node* n) {
    for (auto& alt : n->alts) {
      for (Node& child : alt) {
        if (!Simplify(&child)) return false;
      }
    }
    if (n->kind != Kind::kGroup) return true;
    // (X) with one alternative of one node: the node itself, quantifiers combined.
    if (n->alts.size() == 1 && n->alts[0].size() == 1) {
      Node& c = n->alts[0][0];
      if (n->min == 1 && n->max == 1) {
        Node tmp = std::move(c);
        *n = std::move(tmp);
        return true;
      }
      if (c.kind == Kind::kClass && c.min == 1 && c.max == 1) {
        BecomeClass(n, std::move(c.cls));
        return true;
      }
    }
    // (a|b|[cd]): one class.
    bool all_plain = !n->alts.empty();
    for (const auto& alt : n->alts) {
      all_plain = all_plain && alt.size() == 1 && alt[0].kind == Kind::kClass && alt[0].min == 1 &&
                  alt[0].max == 1 && alt[0].cls.Plain();
    }
    if (all_plain) {
      CharClass cls;
      for (const auto& alt : n->alts) cls.Union(alt[0].cls);
      BecomeClass(n, std::move(cls));
      return true;
    }
    // ((?=A)(?!B)C): one class that is C and A and not B.
    if (n->alts.size() == 1 && n->alts[0].size() >= 2) {
      auto& seq = n->alts[0];
      const Node& last = seq.back();
      bool foldable = last.kind == Kind::kClass && last.min == 1 && last.max == 1;
      for (size_t k = 0; foldable && k + 1 < seq.size(); ++k) {
        const Node& la = seq[k];
        foldable = (la.kind == Kind::kLookahead || la.kind == Kind::kNegLookahead) &&
                   la.alts.size() == 1 && la.alts[0].size() == 1 &&
                   la.alts[0][0].kind == Kind::kClass && la.alts[0][0].min == 1 &&
                   la.alts[0][0].max == 1 &&
                   (la.kind == Kind::kLookahead || la.alts[0][0].cls.also.empty());
      }
      if (foldable) {
        CharClass cls = last.cls;
        for (size_t k = 0; k + 1 < seq.size(); ++k) {
          CharClass c = seq[k].alts[0][0].cls;
          if (seq[k].kind == Kind::kNegLookahead) c.negated = !c.negated;
          cls.also.push_back(std::move(c));
        }
        BecomeClass(n, std::move(cls));
        return true;
      }
    }
    if (n->max == kInf) return Fail("unbounded repetition of a group is not supported");
    return true;
  }

  std::string_view pattern_;
  std::vector<uint32_t> p_;
  size_t i_ = 0;
  std::string err_;
};

// What to do after the current node: continue a sequence (seq, idx) or, for a repetition
// frame (rep != nullptr), go on repeating `rep` after `count` iterations, the last of which
// began at `start`. `up` is the continuation after that.
struct Frame {
  const std::vector<Node>* seq;
  size_t idx;
  const Frame* up;
  const Node* rep;
  uint32_t count;
  size_t start;
};

// Backtracking matcher: Run returns true as soon as the whole pattern matched (first
// alternative first, greedy quantifiers longest first), leaving the match end in `end`.
class Matcher {
 public:
  Matcher(const uint32_t* cps, size_t n) : cps_(cps), n_(n) {}

  bool Run(const Frame* f, size_t pos) {
    if (f == nullptr) {
      end = pos;
      return true;
    }
    if (f->rep != nullptr) return Repeat(*f->rep, f->count, pos, f->start, f->up);
    if (f->idx == f->seq->size()) return Run(f->up, pos);
    const Node& node = (*f->seq)[f->idx];
    const Frame next{f->seq, f->idx + 1, f->up, nullptr, 0, 0};
    switch (node.kind) {
      case Kind::kClass: {
        const size_t room = n_ - pos;
        const size_t lim = node.max < room ? node.max : room;
        size_t k = 0;
        while (k < lim && node.cls.Matches(cps_[pos + k])) ++k;
        if (k < node.min) return false;
        for (size_t j = k;; --j) {
          if (Run(&next, pos + j)) return true;
          if (j == node.min) return false;
        }
      }
      case Kind::kGroup:
        return Repeat(node, 0, pos, pos, &next);
      case Kind::kLookahead:
      case Kind::kNegLookahead: {
        bool found = false;
        for (const auto& alt : node.alts) {
          const Frame a{&alt, 0, nullptr, nullptr, 0, 0};
          if (Run(&a, pos)) {
            found = true;
            break;
          }
        }
        return found == (node.kind == Kind::kLookahead) && Run(&next, pos);
      }
      case Kind::kBegin:
        return pos == 0 && Run(&next, pos);
      case Kind::kEnd:
        return pos == n_ && Run(&next, pos);
      case Kind::kWordBoundary:
      case Kind::kNotWordBoundary: {
        const bool at = (pos > 0 && IsWordChar(cps_, n_, pos - 1)) != IsWordChar(cps_, n_, pos);
        return at == (node.kind == Kind::kWordBoundary) && Run(&next, pos);
      }
    }
    return false;
  }

  bool Repeat(const Node& g, uint32_t count, size_t pos, size_t iter_start, const Frame* up) {
    // As in ECMAScript, an iteration past the minimum that matched nothing does not loop again.
    const bool may_iterate = count < g.max && !(count > g.min && pos == iter_start);
    if (may_iterate) {
      const Frame again{nullptr, 0, up, &g, count + 1, pos};
      for (const auto& alt : g.alts) {
        const Frame a{&alt, 0, &again, nullptr, 0, 0};
        if (Run(&a, pos)) return true;
      }
    }
    return count >= g.min && Run(up, pos);
  }

  size_t end = 0;

 private:
  const uint32_t* cps_;
  size_t n_;
};

}  // namespace

struct Regex::Program {
  Node root;
};

Regex::Regex() = default;
Regex::~Regex() = default;
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;

Status Regex::Compile(std::string_view pattern, Regex* out) {
  auto prog = std::make_unique<Program>();
  Parser parser(pattern);
  EMBER_RETURN_IF_ERROR(parser.Parse(&prog->root));
  out->prog_ = std::move(prog);
  return Status::Ok();
}

size_t Regex::MatchAt(const uint32_t* cps, size_t n, size_t pos) const {
  if (!prog_ || pos > n) return kNoMatch;
  Matcher m(cps, n);
  return m.Repeat(prog_->root, 0, pos, pos, nullptr) ? m.end : kNoMatch;
}

std::vector<size_t> Regex::Split(const std::vector<uint32_t>& cps,
                                 const std::vector<size_t>& lengths) const {
  std::vector<size_t> out;
  out.reserve(lengths.size() * 2);
  size_t start = 0;
  for (const size_t len : lengths) {
    const uint32_t* base = cps.data() + start;
    size_t pos = 0, gap = 0;
    while (pos < len) {
      const size_t e = MatchAt(base, len, pos);
      if (e != kNoMatch && e > pos) {
        if (gap < pos) out.push_back(pos - gap);
        out.push_back(e - pos);
        pos = gap = e;
      } else {
        ++pos;
      }
    }
    if (gap < len) out.push_back(len - gap);
    start += len;
  }
  return out;
}

}  // namespace ember::unicode
