// The GBNF parser (gbnf.h): recursive descent over the text, one function per
// construct, as llama.cpp's grammar syntax defines them (facts taken from its
// parser: which escapes exist, where newlines may appear, what a name is).
#include <string>
#include <unordered_map>

#include "sampling/grammar/gbnf.h"

namespace ember::grammar {
namespace {

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Parentheses nest at most this deep (the parser recurses per level).
constexpr int kMaxNesting = 256;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Status Run(std::string_view root, GbnfGrammar* out) {
    g_ = out;
    *g_ = GbnfGrammar();
    SkipSpace(true);
    while (!AtEnd()) EMBER_RETURN_IF_ERROR(ParseRule());
    if (defined_count_ == 0) return InvalidArgument("the grammar has no rules");
    for (size_t i = 0; i < g_->rules.size(); ++i) {
      if (g_->rules[i].line == 0) {
        return InvalidArgument(At(first_use_[i]) + "undefined rule '" + g_->rules[i].name + "'");
      }
    }
    const int64_t r = g_->Find(root);
    if (r < 0) {
      return InvalidArgument("the grammar has no start rule '" + std::string(root) +
                             "' (it must define " + std::string(root) + " ::= ...)");
    }
    g_->root = static_cast<uint32_t>(r);
    return Status::Ok();
  }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }

  // "line L, column C" for a byte offset; columns count characters.
  std::string LineCol(size_t offset) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < offset && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else if ((static_cast<unsigned char>(text_[i]) & 0xC0) != 0x80) {
        ++col;
      }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(col);
  }
  std::string At(size_t offset) const { return LineCol(offset) + ": "; }
  Status Error(const std::string& what) const { return Error(pos_, what); }
  Status Error(size_t offset, const std::string& what) const {
    return InvalidArgument(At(offset) + what);
  }
  // What the text holds at the cursor, for messages: 'x', "end of input" or "end of line".
  std::string Here() const {
    if (AtEnd()) return "end of input";
    const char c = Peek();
    if (c == '\n' || c == '\r') return "end of line";
    size_t n = 1;
    while (pos_ + n < text_.size() && (static_cast<unsigned char>(text_[pos_ + n]) & 0xC0) == 0x80)
      ++n;
    return "'" + std::string(text_.substr(pos_, n)) + "'";
  }
  uint32_t LineOf(size_t offset) const {
    uint32_t line = 1;
    for (size_t i = 0; i < offset && i < text_.size(); ++i) line += text_[i] == '\n';
    return line;
  }

  // Spaces, tabs and comments; newlines too when newline_ok.
  void SkipSpace(bool newline_ok) {
    while (!AtEnd()) {
      const char c = Peek();
      if (c == ' ' || c == '\t' || (newline_ok && (c == '\n' || c == '\r'))) {
        ++pos_;
      } else if (c == '#') {
        while (!AtEnd() && Peek() != '\n' && Peek() != '\r') ++pos_;
      } else {
        break;
      }
    }
  }

  uint32_t RuleId(std::string_view name, size_t used_at) {
    auto [it, added] = ids_.emplace(std::string(name), static_cast<uint32_t>(g_->rules.size()));
    if (added) {
      g_->rules.push_back(GbnfRule{std::string(name), GbnfExpr(), 0});
      first_use_.push_back(used_at);
    }
    return it->second;
  }

  Status ParseRule() {
    const size_t start = pos_;
    if (!IsWordChar(Peek())) {
      return Error("expecting a rule name (letters, digits, '-'), found " + Here());
    }
    while (IsWordChar(Peek())) ++pos_;
    const std::string_view name = text_.substr(start, pos_ - start);
    SkipSpace(false);
    if (text_.substr(pos_, 3) != "::=") {
      return Error("expecting '::=' after the rule name '" + std::string(name) + "', found " +
                   Here());
    }
    pos_ += 3;
    SkipSpace(true);
    const uint32_t id = RuleId(name, start);
    GbnfRule& rule = g_->rules[id];
    if (rule.line != 0) {
      return Error(start, "rule '" + std::string(name) + "' is defined twice (first on line " +
                              std::to_string(rule.line) + ")");
    }
    g_->rules[id].line = LineOf(start);
    ++defined_count_;
    GbnfExpr body;
    EMBER_RETURN_IF_ERROR(ParseAlternates(false, &body));
    g_->rules[id].body = std::move(body);
    if (!AtEnd()) {
      if (Peek() == '\r') {
        ++pos_;
        if (Peek() == '\n') ++pos_;
      } else if (Peek() == '\n') {
        ++pos_;
      } else if (Peek() == ')') {
        return Error("')' without a matching '('");
      } else {
        return Error("unexpected " + Here() + " in the rule '" + std::string(name) + "'");
      }
    }
    SkipSpace(true);
    return Status::Ok();
  }

  Status ParseAlternates(bool nested, GbnfExpr* out) {
    GbnfExpr alt;
    alt.kind = GbnfExpr::Kind::kAlt;
    for (;;) {
      GbnfExpr seq;
      EMBER_RETURN_IF_ERROR(ParseSequence(nested, &seq));
      alt.items.push_back(std::move(seq));
      if (Peek() != '|') break;
      ++pos_;
      SkipSpace(true);
    }
    *out = alt.items.size() == 1 ? std::move(alt.items[0]) : std::move(alt);
    return Status::Ok();
  }

  Status ParseSequence(bool nested, GbnfExpr* out) {
    out->kind = GbnfExpr::Kind::kSeq;
    out->items.clear();
    int stacked = 0;  // repetition operators on the last item
    for (;;) {
      const char c = Peek();
      const size_t at = pos_;
      GbnfExpr item;
      if (c == '"') {
        EMBER_RETURN_IF_ERROR(ParseLiteral(&item));
      } else if (c == '[') {
        EMBER_RETURN_IF_ERROR(ParseClass(&item));
      } else if (c == '.') {
        ++pos_;
        item.kind = GbnfExpr::Kind::kChars;
        item.chars = CharSet::Any();
      } else if (c == '(') {
        if (++depth_ > kMaxNesting) {
          return Error("groups nest deeper than " + std::to_string(kMaxNesting) + " levels");
        }
        ++pos_;
        SkipSpace(true);
        EMBER_RETURN_IF_ERROR(ParseAlternates(true, &item));
        if (Peek() != ')') {
          return Error("expecting ')' to close the group opened at " + LineCol(at) + ", found " +
                       Here());
        }
        ++pos_;
        --depth_;
      } else if (c == '<' || (c == '!' && Peek(1) == '<')) {
        return Error("token references (<...>) are not supported; write the token's text");
      } else if (IsWordChar(c)) {
        while (IsWordChar(Peek())) ++pos_;
        item.kind = GbnfExpr::Kind::kRef;
        item.rule = RuleId(text_.substr(at, pos_ - at), at);
      } else if (c == '*' || c == '+' || c == '?' || c == '{') {
        if (out->items.empty()) return Error("'" + std::string(1, c) + "' has nothing to repeat");
        if (++stacked > 8) return Error("more than 8 repetition operators in a row");
        // A repetition of the item before it (repetitions may stack: x{2}?).
        EMBER_RETURN_IF_ERROR(ParseRepetition(&out->items.back()));
        SkipSpace(nested);
        continue;
      } else {
        break;
      }
      stacked = 0;
      out->items.push_back(std::move(item));
      SkipSpace(nested);
    }
    if (out->items.size() == 1) {
      GbnfExpr only = std::move(out->items[0]);
      *out = std::move(only);
    }
    return Status::Ok();
  }

  Status ParseRepetition(GbnfExpr* item) {
    GbnfExpr rep;
    rep.kind = GbnfExpr::Kind::kRepeat;
    const char c = Peek();
    const size_t at = pos_;
    ++pos_;
    if (c == '*') {
      rep.min = 0;
      rep.max = kUnbounded;
    } else if (c == '+') {
      rep.min = 1;
      rep.max = kUnbounded;
    } else if (c == '?') {
      rep.min = 0;
      rep.max = 1;
    } else {  // {m} {m,} {m,n}
      SkipSpace(true);
      EMBER_RETURN_IF_ERROR(ParseCount(&rep.min));
      SkipSpace(true);
      if (Peek() == '}') {
        rep.max = rep.min;
      } else if (Peek() == ',') {
        ++pos_;
        SkipSpace(true);
        rep.max = kUnbounded;
        if (IsDigit(Peek())) {
          EMBER_RETURN_IF_ERROR(ParseCount(&rep.max));
          SkipSpace(true);
        }
        if (Peek() != '}') return Error("expecting '}' to end the repetition, found " + Here());
      } else {
        return Error("expecting ',' or '}' in the repetition, found " + Here());
      }
      ++pos_;
      if (rep.max < rep.min) {
        return Error(at, "repetition {" + std::to_string(rep.min) + "," + std::to_string(rep.max) +
                             "}: the maximum is below the minimum");
      }
    }
    rep.items.push_back(std::move(*item));
    *item = std::move(rep);
    return Status::Ok();
  }

  Status ParseCount(uint32_t* out) {
    if (!IsDigit(Peek())) return Error("expecting a number in the repetition, found " + Here());
    const size_t at = pos_;
    uint64_t v = 0;
    while (IsDigit(Peek())) {
      v = v * 10 + static_cast<uint64_t>(Peek() - '0');
      if (v > kMaxRepetition) {
        return Error(at, "repetition count above " + std::to_string(kMaxRepetition));
      }
      ++pos_;
    }
    *out = static_cast<uint32_t>(v);
    return Status::Ok();
  }

  // One code point of a literal or class: an escape or UTF-8.
  Status ParseChar(uint32_t* out) {
    const size_t at = pos_;
    if (AtEnd()) return Error("unexpected end of input");
    if (Peek() == '\\') {
      const char e = Peek(1);
      pos_ += 2;
      switch (e) {
        case 'x':
          return ParseHex(2, at, out);
        case 'u':
          return ParseHex(4, at, out);
        case 'U':
          return ParseHex(8, at, out);
        case 't':
          *out = '\t';
          return Status::Ok();
        case 'r':
          *out = '\r';
          return Status::Ok();
        case 'n':
          *out = '\n';
          return Status::Ok();
        case '\\':
        case '"':
        case '[':
        case ']':
        case '-':
          *out = static_cast<unsigned char>(e);
          return Status::Ok();
        default:
          pos_ = at;
          return Error("unknown escape " + std::string(1, '\\') +
                       (e == '\0' ? std::string("at the end") : std::string(1, e)) +
                       " (known: \\x.. \\u.... \\U........ \\t \\r \\n \\\\ \\\" \\[ \\] \\-)");
      }
    }
    uint32_t v = 0;
    const int n = DecodeUtf8Char(text_, pos_, &v);
    if (n == 0) {
      return Error("invalid UTF-8 (a malformed, overlong or truncated sequence, or a surrogate)");
    }
    pos_ += static_cast<size_t>(n);
    *out = v;
    return Status::Ok();
  }

  Status ParseHex(int digits, size_t at, uint32_t* out) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      const char c = Peek();
      int d = -1;
      if (c >= '0' && c <= '9') d = c - '0';
      if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
      if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
      if (d < 0) {
        return Error(at, "expecting " + std::to_string(digits) + " hex digits after \\" +
                             std::string(1, text_[at + 1]));
      }
      v = v * 16 + static_cast<uint32_t>(d);
      ++pos_;
    }
    if (v > kMaxCodePoint) return Error(at, "code point above U+10FFFF");
    *out = v;
    return Status::Ok();
  }

  Status ParseLiteral(GbnfExpr* out) {
    const size_t at = pos_;
    ++pos_;  // "
    out->kind = GbnfExpr::Kind::kSeq;
    while (Peek() != '"') {
      if (AtEnd()) {
        return Error(at, "unterminated string literal");
      }
      uint32_t c = 0;
      EMBER_RETURN_IF_ERROR(ParseChar(&c));
      GbnfExpr ch;
      ch.kind = GbnfExpr::Kind::kChars;
      ch.chars = CharSet::Single(c);
      out->items.push_back(std::move(ch));
    }
    ++pos_;
    if (out->items.size() == 1) {
      GbnfExpr only = std::move(out->items[0]);
      *out = std::move(only);
    }
    return Status::Ok();
  }

  Status ParseClass(GbnfExpr* out) {
    const size_t at = pos_;
    ++pos_;  // [
    bool negated = false;
    if (Peek() == '^') {
      negated = true;
      ++pos_;
    }
    CharSet set;
    while (Peek() != ']') {
      if (AtEnd()) return Error(at, "unterminated character class");
      uint32_t lo = 0;
      EMBER_RETURN_IF_ERROR(ParseChar(&lo));
      uint32_t hi = lo;
      if (Peek() == '-' && Peek(1) != ']' && pos_ + 1 < text_.size()) {
        const size_t range_at = pos_;
        ++pos_;
        EMBER_RETURN_IF_ERROR(ParseChar(&hi));
        if (hi < lo) {
          return Error(range_at, "character range is backwards (end below start)");
        }
      }
      set.Add(lo, hi);
    }
    ++pos_;
    out->kind = GbnfExpr::Kind::kChars;
    out->chars = negated ? set.Complement() : set;
    return Status::Ok();
  }

  std::string_view text_;
  size_t pos_ = 0;
  GbnfGrammar* g_ = nullptr;
  std::unordered_map<std::string, uint32_t> ids_;  // rule name -> index in g_->rules
  std::vector<size_t> first_use_;                  // per rule: where it was first named
  size_t defined_count_ = 0;
  int depth_ = 0;  // open parentheses
};

}  // namespace

int64_t GbnfGrammar::Find(std::string_view name) const {
  for (size_t i = 0; i < rules.size(); ++i) {
    if (rules[i].name == name) return static_cast<int64_t>(i);
  }
  return -1;
}

Status ParseGbnf(std::string_view text, std::string_view root, GbnfGrammar* out) {
  return Parser(text).Run(root, out);
}

}  // namespace ember::grammar
