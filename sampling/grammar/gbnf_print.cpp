// PrintGbnf: a parsed grammar as GBNF text (gbnf.h), rules in the order they
// were defined. Parsing the output gives the same tree.
#include <algorithm>
#include <cstdio>
#include <string>

#include "sampling/grammar/gbnf.h"

namespace ember::grammar {
namespace {

// A code point inside "..." (in_class false) or [...] (true).
std::string Escaped(uint32_t c, bool in_class) {
  switch (c) {
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    case '\\':
      return "\\\\";
    case '"':
      return "\\\"";
    default:
      break;
  }
  char buf[16];
  if (in_class && (c == ']' || c == '-' || c == '['))
    return std::string("\\") + static_cast<char>(c);
  if (in_class && c == '^') return "\\x5E";
  if (c < 0x20 || c == 0x7F) {
    std::snprintf(buf, sizeof(buf), "\\x%02X", c);
    return buf;
  }
  if (c < 0x80) return std::string(1, static_cast<char>(c));
  if (c <= 0xFFFF) {
    std::snprintf(buf, sizeof(buf), "\\u%04X", c);
  } else {
    std::snprintf(buf, sizeof(buf), "\\U%08X", c);
  }
  return buf;
}

bool IsSingleChar(const GbnfExpr& e) {
  return e.kind == GbnfExpr::Kind::kChars && e.chars.ranges().size() == 1 &&
         e.chars.ranges()[0].lo == e.chars.ranges()[0].hi;
}

void Print(const GbnfGrammar& g, const GbnfExpr& e, bool grouped, std::string* out) {
  switch (e.kind) {
    case GbnfExpr::Kind::kChars:
      *out += PrintCharSet(e.chars);
      return;
    case GbnfExpr::Kind::kRef:
      *out += g.rules[e.rule].name;
      return;
    case GbnfExpr::Kind::kRepeat: {
      Print(g, e.items[0], true, out);
      if (e.min == 0 && e.max == kUnbounded) {
        *out += "*";
      } else if (e.min == 1 && e.max == kUnbounded) {
        *out += "+";
      } else if (e.min == 0 && e.max == 1) {
        *out += "?";
      } else if (e.max == kUnbounded) {
        *out += "{" + std::to_string(e.min) + ",}";
      } else if (e.min == e.max) {
        *out += "{" + std::to_string(e.min) + "}";
      } else {
        *out += "{" + std::to_string(e.min) + "," + std::to_string(e.max) + "}";
      }
      return;
    }
    case GbnfExpr::Kind::kSeq:
    case GbnfExpr::Kind::kAlt: {
      const bool alt = e.kind == GbnfExpr::Kind::kAlt;
      if (!alt && std::all_of(e.items.begin(), e.items.end(), IsSingleChar)) {
        *out += "\"";  // a literal (also the empty one)
        for (const GbnfExpr& c : e.items) *out += Escaped(c.chars.ranges()[0].lo, false);
        *out += "\"";
        return;
      }
      const bool paren = grouped && (alt || e.items.size() > 1);
      if (paren) *out += "(";
      for (size_t i = 0; i < e.items.size(); ++i) {
        if (i > 0) *out += alt ? " | " : " ";
        Print(g, e.items[i], !alt, out);
      }
      if (paren) *out += ")";
      return;
    }
  }
}

}  // namespace

std::string PrintCharSet(const CharSet& s) {
  const auto& r = s.ranges();
  if (r.size() == 1 && r[0].lo == r[0].hi) return "\"" + Escaped(r[0].lo, false) + "\"";
  if (s == CharSet::Any()) return ".";
  std::string out = "[";
  for (const CodeRange& x : r) {
    out += Escaped(x.lo, true);
    if (x.hi != x.lo) out += "-" + Escaped(x.hi, true);
  }
  return out + "]";
}

std::string PrintGbnf(const GbnfGrammar& g) {
  std::vector<const GbnfRule*> order;
  for (const GbnfRule& r : g.rules) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(),
                   [](const GbnfRule* a, const GbnfRule* b) { return a->line < b->line; });
  std::string out;
  for (const GbnfRule* rule : order) {
    const GbnfRule& r = *rule;
    out += r.name + " ::= ";
    Print(g, r.body, false, &out);
    out += "\n";
  }
  return out;
}

}  // namespace ember::grammar
