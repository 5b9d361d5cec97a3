// The Jinja lexer (jinja_lexer.h states the whitespace rules).
#include "runtime/chat/jinja_lexer.h"

#include <algorithm>
#include <cstring>

#include "platform/ascii.h"
#include "runtime/chat/jinja_value.h"

namespace ember::jinja {

std::string Where(std::string_view name, uint32_t line, uint32_t column) {
  std::string w = std::string(name) + ":" + std::to_string(line);
  if (column) w += ":" + std::to_string(column);
  return w + ": ";
}

namespace {

bool IsSpaceByte(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || IsAsciiDigit(c); }

// Python's str.rstrip(): all (Unicode) whitespace off the end.
void RStripWhitespace(std::string* s) {
  // Walk the code points, remembering where the trailing whitespace run starts.
  size_t keep = 0;
  for (size_t pos = 0; pos < s->size();) {
    const uint32_t cp = NextCodePoint(*s, &pos);
    if (!IsPyWhitespace(cp)) keep = pos;
  }
  s->resize(keep);
}

// Length of the whitespace run at s[pos] (Unicode whitespace, as Python's \s).
size_t WhitespaceRun(std::string_view s, size_t pos) {
  size_t p = pos;
  while (p < s.size()) {
    size_t q = p;
    if (!IsPyWhitespace(NextCodePoint(s, &q))) break;
    p = q;
  }
  return p - pos;
}

// Whether s holds only whitespace (no newline: s is the tail of a line).
bool AllWhitespace(std::string_view s) { return WhitespaceRun(s, 0) == s.size(); }

class Lexer {
 public:
  Lexer(std::string_view name, const LexOptions& opts) : name_(name), opts_(opts) {}

  Status Run(std::string_view raw, std::vector<Token>* out) {
    out_ = out;
    Normalize(raw);
    const std::string_view s = src_;
    size_t pos = 0;
    bool line_starting = true;  // the previous match ended with a newline
    while (pos < s.size()) {
      const size_t start = FindTagStart(s, pos);
      if (start == std::string_view::npos) {
        Emit(TokenKind::kData, std::string(s.substr(pos)), pos);
        break;
      }
      const char type = s[start + 1];  // '{', '%' or '#'
      const char sign = start + 2 < s.size() ? s[start + 2] : '\0';
      std::string text(s.substr(pos, start - pos));
      const bool raw = type == '%' && IsRawTag(s, start);
      ApplyLeftStrip(sign, type != '{', line_starting, &text);
      if (!text.empty()) Emit(TokenKind::kData, std::move(text), pos);
      if (type == '#') {
        EMBER_RETURN_IF_ERROR(Comment(s, start, &pos));
      } else if (raw) {
        EMBER_RETURN_IF_ERROR(Raw(s, start, &pos));
      } else {
        EMBER_RETURN_IF_ERROR(Tag(s, start, type, &pos));
      }
      line_starting = pos > 0 && s[pos - 1] == '\n';
    }
    Emit(TokenKind::kEof, "", s.size());
    return Status::Ok();
  }

 private:
  // "\r\n" and "\r" -> "\n"; one trailing newline dropped. Line starts recorded.
  void Normalize(std::string_view raw) {
    src_.reserve(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\r') {
        if (i + 1 < raw.size() && raw[i + 1] == '\n') ++i;
        src_ += '\n';
      } else {
        src_ += raw[i];
      }
    }
    if (!src_.empty() && src_.back() == '\n') src_.pop_back();
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i) {
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  void Position(size_t offset, uint32_t* line, uint32_t* column) const {
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    const size_t l = static_cast<size_t>(it - line_starts_.begin());  // 1-based
    *line = static_cast<uint32_t>(l);
    *column = static_cast<uint32_t>(offset - line_starts_[l - 1] + 1);
  }

  Status Error(size_t offset, const std::string& what) const {
    uint32_t line, column;
    Position(offset, &line, &column);
    return BadFormat(Where(name_, line, column) + what);
  }

  void Emit(TokenKind kind, std::string value, size_t offset) {
    Token t;
    t.kind = kind;
    t.value = std::move(value);
    Position(offset, &t.line, &t.column);
    out_->push_back(std::move(t));
  }

  static size_t FindTagStart(std::string_view s, size_t pos) {
    for (size_t p = s.find('{', pos); p != std::string_view::npos; p = s.find('{', p + 1)) {
      if (p + 1 < s.size() && (s[p + 1] == '{' || s[p + 1] == '%' || s[p + 1] == '#')) return p;
    }
    return std::string_view::npos;
  }

  // {% raw %}, {%- raw -%}, {%+ raw %}
  static bool IsRawTag(std::string_view s, size_t start) {
    size_t p = start + 2;
    if (p < s.size() && (s[p] == '-' || s[p] == '+')) ++p;
    while (p < s.size() && IsSpaceByte(s[p])) ++p;
    if (s.compare(p, 3, "raw") != 0) return false;
    p += 3;
    return p < s.size() && (IsSpaceByte(s[p]) || s[p] == '-' || s[p] == '%');
  }

  // Whitespace control of the text before a tag (jinja_lexer.h).
  void ApplyLeftStrip(char sign, bool block_or_comment, bool line_starting,
                      std::string* text) const {
    if (sign == '-') {
      RStripWhitespace(text);
    } else if (sign != '+' && opts_.lstrip_blocks && block_or_comment) {
      const size_t nl = text->rfind('\n');
      const size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
      if ((l_pos > 0 || line_starting) && AllWhitespace(std::string_view(*text).substr(l_pos))) {
        text->resize(l_pos);
      }
    }
  }

  // After a tag's end marker: "-" strips all whitespace, else trim_blocks one newline.
  size_t AfterTag(std::string_view s, size_t pos, bool strip, bool trim) const {
    if (strip) return pos + WhitespaceRun(s, pos);
    if (trim && opts_.trim_blocks && pos < s.size() && s[pos] == '\n') return pos + 1;
    return pos;
  }

  Status Comment(std::string_view s, size_t start, size_t* pos) {
    const size_t end = s.find("#}", start + 2);
    if (end == std::string_view::npos) return Error(start, "missing end of comment tag '#}'");
    const bool strip = end > start + 2 && s[end - 1] == '-';
    *pos = AfterTag(s, end + 2, strip, /*trim=*/true);
    return Status::Ok();
  }

  // {% raw %} ... {% endraw %}: the text between is data.
  Status Raw(std::string_view s, size_t start, size_t* pos) {
    size_t p = s.find("%}", start);
    if (p == std::string_view::npos) return Error(start, "unterminated 'raw' tag");
    const bool strip_after_begin = s[p - 1] == '-';
    size_t body = AfterTag(s, p + 2, strip_after_begin, s[p - 1] != '+');
    // Find {% endraw %} (with optional - / +).
    for (size_t q = s.find("{%", body); q != std::string_view::npos; q = s.find("{%", q + 2)) {
      size_t r = q + 2;
      const char sign = r < s.size() ? s[r] : '\0';
      if (sign == '-' || sign == '+') ++r;
      while (r < s.size() && IsSpaceByte(s[r])) ++r;
      if (s.compare(r, 6, "endraw") != 0) continue;
      r += 6;
      while (r < s.size() && IsSpaceByte(s[r])) ++r;
      char end_sign = '\0';
      if (r < s.size() && (s[r] == '-' || s[r] == '+')) end_sign = s[r++];
      if (s.compare(r, 2, "%}") != 0) continue;
      std::string text(s.substr(body, q - body));
      ApplyLeftStrip(sign, true, body > 0 && s[body - 1] == '\n', &text);
      if (!text.empty()) Emit(TokenKind::kData, std::move(text), body);
      *pos = AfterTag(s, r + 2, end_sign == '-', end_sign != '+');
      return Status::Ok();
    }
    return Error(start, "missing '{% endraw %}' for this 'raw' tag");
  }

  // {{ ... }} or {% ... %}: the tokens inside.
  Status Tag(std::string_view s, size_t start, char type, size_t* pos) {
    const bool block = type == '%';
    Emit(block ? TokenKind::kBlockBegin : TokenKind::kVarBegin, block ? "{%" : "{{", start);
    size_t p = start + 2;
    if (p < s.size() && (s[p] == '-' || s[p] == '+')) ++p;
    int brackets = 0;
    while (true) {
      p += WhitespaceRun(s, p);
      if (p >= s.size()) {
        return Error(start, block ? "unexpected end of template: the tag opened here needs '%}'"
                                  : "unexpected end of template: the tag opened here needs '}}'");
      }
      if (brackets == 0) {
        const char* end = block ? "%}" : "}}";
        if ((s[p] == '-' || (block && s[p] == '+')) && s.compare(p + 1, 2, end) == 0) {
          Emit(block ? TokenKind::kBlockEnd : TokenKind::kVarEnd, end, p);
          // "-%}" / "-}}" strip what follows; "+%}" keeps even the newline.
          *pos = AfterTag(s, p + 3, /*strip=*/s[p] == '-', /*trim=*/false);
          return Status::Ok();
        }
        if (s.compare(p, 2, end) == 0) {
          Emit(block ? TokenKind::kBlockEnd : TokenKind::kVarEnd, end, p);
          *pos = AfterTag(s, p + 2, false, block);
          return Status::Ok();
        }
      }
      EMBER_RETURN_IF_ERROR(ExprToken(s, &p, &brackets));
    }
  }

  Status ExprToken(std::string_view s, size_t* pp, int* brackets) {
    size_t p = *pp;
    const char c = s[p];
    if (IsAsciiDigit(c)) return Number(s, pp);
    if (IsNameStart(c)) {
      size_t q = p;
      while (q < s.size() && IsNameChar(s[q])) ++q;
      Emit(TokenKind::kName, std::string(s.substr(p, q - p)), p);
      *pp = q;
      return Status::Ok();
    }
    if (c == '\'' || c == '"') return StringLiteral(s, pp);
    static const char* const kTwo[] = {"**", "//", "==", "!=", "<=", ">="};
    for (const char* op : kTwo) {
      if (s.compare(p, 2, op) == 0) {
        Emit(TokenKind::kOperator, op, p);
        *pp = p + 2;
        return Status::Ok();
      }
    }
    if (std::strchr("+-*/%~<>=.,:|()[]{};", c) != nullptr && c != '\0') {
      if (c == '(' || c == '[' || c == '{') ++*brackets;
      if (c == ')' || c == ']' || c == '}') {
        if (*brackets == 0) return Error(p, std::string("unexpected '") + c + "'");
        --*brackets;
      }
      Emit(TokenKind::kOperator, std::string(1, c), p);
      *pp = p + 1;
      return Status::Ok();
    }
    return Error(p, std::string("unexpected character '") + c + "'");
  }

  // Integers (1_000, 0x1F, 0o17, 0b101) and floats (1.5, 1e3, 1.5e-3).
  Status Number(std::string_view s, size_t* pp) {
    const size_t p = *pp;
    size_t q = p;
    auto digits = [&](auto is_digit) {
      const size_t from = q;
      while (q < s.size() && (is_digit(s[q]) || (s[q] == '_' && q > from && q + 1 < s.size() &&
                                                 is_digit(s[q + 1])))) {
        ++q;
      }
      return q > from;
    };
    auto strip = [](std::string_view t) {
      std::string r;
      for (char ch : t) {
        if (ch != '_') r += ch;
      }
      return r;
    };
    if (s[p] == '0' && p + 1 < s.size() && std::strchr("xXoObB", s[p + 1]) && s[p + 1] != '\0') {
      const char base = static_cast<char>(s[p + 1] | 0x20);
      q = p + 2;
      const bool ok = digits([base](char ch) {
        if (base == 'b') return ch == '0' || ch == '1';
        if (base == 'o') return ch >= '0' && ch <= '7';
        return IsAsciiDigit(ch) || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f');
      });
      if (!ok) return Error(p, "malformed number");
      const std::string body = strip(s.substr(p + 2, q - p - 2));
      unsigned long long v = 0;
      for (char ch : body) {
        const int d = IsAsciiDigit(ch) ? ch - '0' : (ch | 0x20) - 'a' + 10;
        const int radix = base == 'b' ? 2 : base == 'o' ? 8 : 16;
        if (v > (0x7FFFFFFFFFFFFFFFull - static_cast<unsigned>(d)) / radix) {
          return Error(p, "integer literal too large");
        }
        v = v * radix + static_cast<unsigned>(d);
      }
      Emit(TokenKind::kInt, std::to_string(v), p);
      *pp = q;
      return Status::Ok();
    }
    digits(IsAsciiDigit);
    bool is_float = false;
    // A fraction, unless this number follows a '.' (foo.0.1 is two subscripts).
    const bool after_dot = p > 0 && s[p - 1] == '.';
    if (!after_dot && q + 1 < s.size() && s[q] == '.' && IsAsciiDigit(s[q + 1])) {
      ++q;
      digits(IsAsciiDigit);
      is_float = true;
    }
    if (!after_dot && q < s.size() && (s[q] == 'e' || s[q] == 'E')) {
      size_t r = q + 1;
      if (r < s.size() && (s[r] == '+' || s[r] == '-')) ++r;
      if (r < s.size() && IsAsciiDigit(s[r])) {
        q = r;
        digits(IsAsciiDigit);
        is_float = true;
      }
    }
    Emit(is_float ? TokenKind::kFloat : TokenKind::kInt, strip(s.substr(p, q - p)), p);
    *pp = q;
    return Status::Ok();
  }

  // A quoted string with Python's escapes (jinja2 decodes them as unicode-escape).
  Status StringLiteral(std::string_view s, size_t* pp) {
    const size_t p = *pp;
    const char quote = s[p];
    std::string v;
    size_t q = p + 1;
    while (true) {
      if (q >= s.size()) return Error(p, "unterminated string literal");
      const char c = s[q];
      if (c == quote) break;
      if (c != '\\') {
        v += c;
        ++q;
        continue;
      }
      if (q + 1 >= s.size()) return Error(p, "unterminated string literal");
      const char e = s[q + 1];
      q += 2;
      auto hex = [&](int n, uint32_t* cp) {
        *cp = 0;
        for (int i = 0; i < n; ++i) {
          if (q >= s.size()) return false;
          const char h = s[q];
          int d;
          if (IsAsciiDigit(h)) {
            d = h - '0';
          } else if ((h | 0x20) >= 'a' && (h | 0x20) <= 'f') {
            d = (h | 0x20) - 'a' + 10;
          } else {
            return false;
          }
          *cp = *cp * 16 + static_cast<uint32_t>(d);
          ++q;
        }
        return true;
      };
      uint32_t cp = 0;
      switch (e) {
        case '\n':
          break;  // line continuation
        case '\\':
        case '\'':
        case '"':
          v += e;
          break;
        case 'n':
          v += '\n';
          break;
        case 't':
          v += '\t';
          break;
        case 'r':
          v += '\r';
          break;
        case 'a':
          v += '\a';
          break;
        case 'b':
          v += '\b';
          break;
        case 'f':
          v += '\f';
          break;
        case 'v':
          v += '\v';
          break;
        case 'x':
        case 'u':
        case 'U':
          if (!hex(e == 'x' ? 2 : e == 'u' ? 4 : 8, &cp) || cp > 0x10FFFF) {
            return Error(q, std::string("malformed \\") + e + " escape in a string literal");
          }
          AppendUtf8(cp, &v);
          break;
        default:
          if (e >= '0' && e <= '7') {
            cp = static_cast<uint32_t>(e - '0');
            for (int i = 0; i < 2 && q < s.size() && s[q] >= '0' && s[q] <= '7'; ++i, ++q) {
              cp = cp * 8 + static_cast<uint32_t>(s[q] - '0');
            }
            AppendUtf8(cp, &v);
          } else {
            v += '\\';  // unknown escapes stay as written
            v += e;
          }
      }
    }
    Emit(TokenKind::kString, std::move(v), p);
    *pp = q + 1;
    return Status::Ok();
  }

  std::string_view name_;
  LexOptions opts_;
  std::string src_;
  std::vector<size_t> line_starts_;
  std::vector<Token>* out_ = nullptr;
};

}  // namespace

Status Lex(std::string_view source, std::string_view name, const LexOptions& opts,
           std::vector<Token>* out) {
  out->clear();
  return Lexer(name, opts).Run(source, out);
}

}  // namespace ember::jinja
