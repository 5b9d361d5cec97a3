// RegexToGbnf: a recursive-descent parser over the pattern that writes GBNF
// as it goes. Every character set of the regex (a literal, a class, ., \d) is
// emitted as the JSON encodings of its members: the members JSON writes raw
// as one class, and each member JSON must escape as its escape sequence.
#include "runtime/constrain/regex_gbnf.h"

#include <cctype>
#include <cstdio>
#include <vector>

#include "sampling/grammar/char_set.h"
#include "sampling/grammar/gbnf.h"

namespace ember {
namespace {

using grammar::CharSet;

CharSet Digits() { return CharSet::Range('0', '9'); }
CharSet Word() {
  CharSet s = CharSet::Range('a', 'z');
  s.Add('A', 'Z');
  s.Add('0', '9');
  s.Add('_', '_');
  return s;
}
CharSet Space() {  // ECMAScript \s: white space and line terminators
  CharSet s;
  for (uint32_t c : {0x09u, 0x0Au, 0x0Bu, 0x0Cu, 0x0Du, 0x20u, 0xA0u, 0x1680u, 0x2028u, 0x2029u,
                     0x202Fu, 0x205Fu, 0x3000u, 0xFEFFu}) {
    s.Add(c, c);
  }
  s.Add(0x2000, 0x200A);
  return s;
}
CharSet Dot() {  // any character but a line terminator
  CharSet s;
  for (uint32_t c : {0x0Au, 0x0Du, 0x2028u, 0x2029u}) s.Add(c, c);
  return s.Complement();
}

}  // namespace

std::string JsonEncodedGbnf(const CharSet& set) {
  // Raw in a JSON string: U+0020 and above, except " and \.
  CharSet raw_ok = CharSet::Range(0x20, grammar::kMaxCodePoint);
  CharSet raw;
  for (const grammar::CodeRange& r : set.ranges()) {
    for (const grammar::CodeRange& ok : raw_ok.ranges()) {
      const uint32_t lo = std::max(r.lo, ok.lo), hi = std::min(r.hi, ok.hi);
      if (lo <= hi) raw.Add(lo, hi);
    }
  }
  CharSet specials = CharSet::Single('"');
  specials.Add('\\', '\\');
  raw = raw.Complement();
  raw.Add(specials);
  raw = raw.Complement();  // raw minus " and backslash
  std::vector<std::string> alts;
  if (!raw.empty()) alts.push_back(grammar::PrintCharSet(raw));
  if (set.Contains('"')) alts.push_back("\"\\\\\\\"\"");
  if (set.Contains('\\')) alts.push_back("\"\\\\\\\\\"");
  for (uint32_t c = 0; c < 0x20; ++c) {
    if (!set.Contains(c)) continue;
    switch (c) {
      case '\n':
        alts.push_back("\"\\\\n\"");
        break;
      case '\r':
        alts.push_back("\"\\\\r\"");
        break;
      case '\t':
        alts.push_back("\"\\\\t\"");
        break;
      case '\b':
        alts.push_back("\"\\\\b\"");
        break;
      case '\f':
        alts.push_back("\"\\\\f\"");
        break;
      default: {
        char buf[24];
        std::snprintf(buf, sizeof(buf), "\"\\\\u%04x\"", c);
        alts.push_back(buf);
      }
    }
  }
  if (alts.empty()) return "[]";  // matches nothing
  if (alts.size() == 1) return alts[0];
  std::string out = "(";
  for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
  return out + ")";
}

namespace {

class RegexParser {
 public:
  RegexParser(std::string_view p, const std::string& any) : p_(p), any_(any) {}

  Status Run(std::string* out) {
    std::vector<std::string> alts;
    for (;;) {
      // Anchors: ^ opens a branch, $ closes it; elsewhere they are errors.
      const bool start = Peek() == '^';
      if (start) ++pos_;
      std::string seq;
      EMBER_RETURN_IF_ERROR(ParseSeq(&seq));
      const bool end = Peek() == '$';
      if (end) ++pos_;
      std::string branch = start ? "" : any_ + "*";
      if (!seq.empty()) branch += (branch.empty() ? "" : " ") + seq;
      if (!end) branch += (branch.empty() ? "" : " ") + any_ + "*";
      alts.push_back(branch.empty() ? "\"\"" : branch);
      if (Peek() != '|') break;
      ++pos_;
    }
    if (pos_ < p_.size()) {
      return Err(Peek() == ')' ? "')' without a matching '('"
                               : "'$' before the end of the pattern");
    }
    *out = alts.size() == 1 ? alts[0] : "(" + Join(alts, " | ") + ")";
    return Status::Ok();
  }

 private:
  static std::string Join(const std::vector<std::string>& v, const char* sep) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
    return out;
  }
  char Peek() const { return pos_ < p_.size() ? p_[pos_] : '\0'; }
  Status Err(const std::string& what) const {
    return Status(Code::kUnsupported, "pattern '" + std::string(p_) + "': " + what +
                                          " (at offset " + std::to_string(pos_) + ")");
  }

  Status ParseAlt(std::string* out) {
    std::vector<std::string> alts;
    for (;;) {
      std::string seq;
      EMBER_RETURN_IF_ERROR(ParseSeq(&seq));
      alts.push_back(seq.empty() ? "\"\"" : seq);
      if (Peek() != '|') break;
      ++pos_;
    }
    *out = alts.size() == 1 ? alts[0] : "(" + Join(alts, " | ") + ")";
    return Status::Ok();
  }

  Status ParseSeq(std::string* out) {
    std::vector<std::string> items;
    while (pos_ < p_.size()) {
      const char c = Peek();
      if (c == '|' || c == ')') break;
      if (c == '$') {
        if (depth_ == 0 && (pos_ + 1 == p_.size() || p_[pos_ + 1] == '|')) break;  // branch end
        return Err("'$' is supported only at the end of the pattern");
      }
      if (c == '^') return Err("'^' is supported only at the start of the pattern");
      std::string atom;
      EMBER_RETURN_IF_ERROR(ParseAtom(&atom));
      EMBER_RETURN_IF_ERROR(ParseQuantifier(&atom));
      items.push_back(atom);
    }
    *out = Join(items, " ");
    return Status::Ok();
  }

  Status ParseQuantifier(std::string* atom) {
    const char c = Peek();
    std::string q;
    if (c == '*' || c == '+' || c == '?') {
      q = std::string(1, c);
      ++pos_;
    } else if (c == '{' && pos_ + 1 < p_.size() &&
               isdigit(static_cast<unsigned char>(p_[pos_ + 1]))) {
      const size_t at = pos_;
      ++pos_;
      uint64_t lo = 0, hi = 0;
      bool has_hi = true;
      EMBER_RETURN_IF_ERROR(Count(&lo));
      if (Peek() == ',') {
        ++pos_;
        if (Peek() == '}') {
          has_hi = false;
        } else {
          EMBER_RETURN_IF_ERROR(Count(&hi));
        }
      } else {
        hi = lo;
      }
      if (Peek() != '}') {
        pos_ = at;
        return Err("a '{' that is not a quantifier {n}, {n,} or {n,m}");
      }
      ++pos_;
      if (has_hi && hi < lo) return Err("quantifier {n,m} with m < n");
      q = "{" + std::to_string(lo) + (has_hi ? (hi == lo ? "" : "," + std::to_string(hi)) : ",") +
          "}";
    } else {
      return Status::Ok();
    }
    if (Peek() == '?') ++pos_;  // lazy: the same strings
    const char n = Peek();
    if (n == '*' || n == '+' || n == '?' ||
        (n == '{' && pos_ + 1 < p_.size() && isdigit(static_cast<unsigned char>(p_[pos_ + 1])))) {
      return Err("a quantifier after a quantifier");
    }
    *atom = "(" + *atom + ")" + q;
    return Status::Ok();
  }

  Status Count(uint64_t* out) {
    if (!isdigit(static_cast<unsigned char>(Peek())))
      return Err("expecting a number in a quantifier");
    uint64_t v = 0;
    while (isdigit(static_cast<unsigned char>(Peek()))) {
      v = v * 10 + static_cast<uint64_t>(Peek() - '0');
      if (v > 100000) return Err("a quantifier count above 100000");
      ++pos_;
    }
    *out = v;
    return Status::Ok();
  }

  Status ParseAtom(std::string* out) {
    const char c = Peek();
    if (c == '(') {
      ++pos_;
      if (Peek() == '?') {
        if (p_.substr(pos_, 2) == "?:") {
          pos_ += 2;
        } else if (p_.substr(pos_, 2) == "?<" && pos_ + 2 < p_.size() && p_[pos_ + 2] != '=' &&
                   p_[pos_ + 2] != '!') {
          const size_t close = p_.find('>', pos_);
          if (close == std::string_view::npos) return Err("an unterminated group name");
          pos_ = close + 1;
        } else {
          return Err("lookaround and other (?...) groups are not supported");
        }
      }
      if (++depth_ > 100) return Err("groups nest deeper than 100 levels");
      EMBER_RETURN_IF_ERROR(ParseAlt(out));
      --depth_;
      if (Peek() != ')') return Err("a '(' without its ')'");
      ++pos_;
      *out = "(" + *out + ")";
      return Status::Ok();
    }
    if (c == '*' || c == '+' || c == '?' || c == '{') {
      if (c != '{' || (pos_ + 1 < p_.size() && isdigit(static_cast<unsigned char>(p_[pos_ + 1])))) {
        return Err(std::string("'") + c + "' has nothing to repeat");
      }
    }
    CharSet set;
    if (c == '[') {
      EMBER_RETURN_IF_ERROR(ParseClass(&set));
    } else if (c == '.') {
      ++pos_;
      set = Dot();
    } else if (c == '\\') {
      EMBER_RETURN_IF_ERROR(ParseEscape(false, &set));
    } else {
      uint32_t cp = 0;
      EMBER_RETURN_IF_ERROR(Utf8(&cp));
      set = CharSet::Single(cp);
    }
    *out = JsonEncodedGbnf(set);
    return Status::Ok();
  }

  Status Utf8(uint32_t* cp) {
    const int n = grammar::DecodeUtf8Char(p_, pos_, cp);
    if (n == 0) return Err("invalid UTF-8");
    pos_ += static_cast<size_t>(n);
    return Status::Ok();
  }

  Status Hex(int digits, uint32_t* out) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      const char h = Peek();
      int d = -1;
      if (h >= '0' && h <= '9') d = h - '0';
      if (h >= 'a' && h <= 'f') d = h - 'a' + 10;
      if (h >= 'A' && h <= 'F') d = h - 'A' + 10;
      if (d < 0) return Err("expecting hex digits");
      v = v * 16 + static_cast<uint32_t>(d);
      ++pos_;
    }
    *out = v;
    return Status::Ok();
  }

  // After a backslash (at pos_); in_class: inside [...] (where \b is a backspace).
  Status ParseEscape(bool in_class, CharSet* out) {
    ++pos_;
    if (pos_ >= p_.size()) return Err("a '\\' at the end");
    const char e = p_[pos_++];
    switch (e) {
      case 'd':
        *out = Digits();
        return Status::Ok();
      case 'D':
        *out = Digits().Complement();
        return Status::Ok();
      case 'w':
        *out = Word();
        return Status::Ok();
      case 'W':
        *out = Word().Complement();
        return Status::Ok();
      case 's':
        *out = Space();
        return Status::Ok();
      case 'S':
        *out = Space().Complement();
        return Status::Ok();
      case 'n':
        *out = CharSet::Single('\n');
        return Status::Ok();
      case 'r':
        *out = CharSet::Single('\r');
        return Status::Ok();
      case 't':
        *out = CharSet::Single('\t');
        return Status::Ok();
      case 'f':
        *out = CharSet::Single('\f');
        return Status::Ok();
      case 'v':
        *out = CharSet::Single('\v');
        return Status::Ok();
      case '0':
        *out = CharSet::Single(0);
        return Status::Ok();
      case 'x':
      case 'u': {
        uint32_t v = 0;
        EMBER_RETURN_IF_ERROR(Hex(e == 'x' ? 2 : 4, &v));
        *out = CharSet::Single(v);
        return Status::Ok();
      }
      case 'b':
        if (in_class) {
          *out = CharSet::Single('\b');
          return Status::Ok();
        }
        return Err("word boundaries (\\b) are not supported");
      default:
        break;
    }
    if ((e >= '1' && e <= '9') || e == 'k') return Err("backreferences are not supported");
    if (e == 'B') return Err("\\B is not supported");
    if (e == 'p' || e == 'P') return Err("Unicode property escapes (\\p{...}) are not supported");
    if (e == 'c') return Err("control escapes (\\c) are not supported");
    if (isalnum(static_cast<unsigned char>(e))) return Err(std::string("unknown escape \\") + e);
    --pos_;  // an escaped punctuation character or other non-letter: itself
    uint32_t cp = 0;
    EMBER_RETURN_IF_ERROR(Utf8(&cp));
    *out = CharSet::Single(cp);
    return Status::Ok();
  }

  Status ParseClass(CharSet* out) {
    ++pos_;  // [
    bool negated = false;
    if (Peek() == '^') {
      negated = true;
      ++pos_;
    }
    CharSet set;
    while (pos_ < p_.size() && p_[pos_] != ']') {  // ([] is an empty class, as in ECMAScript)
      CharSet item;
      bool single = false;
      uint32_t lo = 0;
      EMBER_RETURN_IF_ERROR(ClassAtom(&item, &single, &lo));
      if (single && Peek() == '-' && pos_ + 1 < p_.size() && p_[pos_ + 1] != ']') {
        ++pos_;
        CharSet hi_item;
        bool hi_single = false;
        uint32_t hi = 0;
        EMBER_RETURN_IF_ERROR(ClassAtom(&hi_item, &hi_single, &hi));
        if (!hi_single) return Err("a class range ending in a class escape");
        if (hi < lo) return Err("a class range out of order");
        set.Add(lo, hi);
      } else {
        set.Add(item);
      }
    }
    if (pos_ >= p_.size()) return Err("a '[' without its ']'");
    ++pos_;
    *out = negated ? set.Complement() : set;
    return Status::Ok();
  }

  Status ClassAtom(CharSet* out, bool* single, uint32_t* cp) {
    if (Peek() == '\\') {
      EMBER_RETURN_IF_ERROR(ParseEscape(true, out));
    } else {
      uint32_t c = 0;
      EMBER_RETURN_IF_ERROR(Utf8(&c));
      *out = CharSet::Single(c);
    }
    const auto& r = out->ranges();
    *single = r.size() == 1 && r[0].lo == r[0].hi;
    *cp = *single ? r[0].lo : 0;
    return Status::Ok();
  }

  std::string_view p_;
  const std::string& any_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

Status RegexToGbnf(std::string_view pattern, const std::string& any_char, std::string* gbnf) {
  return RegexParser(pattern, any_char).Run(gbnf);
}

}  // namespace ember
