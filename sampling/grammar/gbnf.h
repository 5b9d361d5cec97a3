// GBNF grammars in llama.cpp's syntax (docs/GRAMMAR.md), parsed into a tree.
//
//   # a comment
//   root   ::= "{" ws pair ("," ws pair)* "}"     rules: name ::= alternatives
//   pair   ::= key ":" ws value                     sequences, rule references
//   key    ::= [a-z]+ | "\"" [^"\\]* "\""           char classes, negation, literals
//   value  ::= [0-9]{1,3} | "null" | . ?           {m,n} {m,} {m} * + ?  and . (any)
//   ws     ::= | " " | "\n" [ \t]{0,20}            an empty alternative
//
// Names are [a-zA-Z0-9-]+. Escapes in literals and classes: \x.. \u.... \U........
// \t \r \n \\ \" \[ \] \-. A rule ends at the end of its line, except after "|"
// and inside parentheses. Rules may be used before they are defined; a
// reference to a rule that is never defined is an error, a rule nobody uses is
// not. Errors say where: "line 3, column 12: ...".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "platform/status.h"
#include "sampling/grammar/char_set.h"

namespace ember::grammar {

constexpr uint32_t kUnbounded = UINT32_MAX;  // GbnfExpr::max of x*, x+, x{m,}
// The largest count a repetition may name ({m,n}): a bound, not a style rule,
// since repetitions are unrolled (docs/GRAMMAR.md).
constexpr uint32_t kMaxRepetition = 100000;

struct GbnfExpr {
  enum class Kind : uint8_t {
    kSeq,     // items in order (an empty sequence matches the empty string)
    kAlt,     // one of items
    kChars,   // one code point from `chars`
    kRef,     // the rule `rule`
    kRepeat,  // items[0], at least min and at most max times
  };
  Kind kind = Kind::kSeq;
  std::vector<GbnfExpr> items;
  CharSet chars;
  uint32_t rule = 0;
  uint32_t min = 0;
  uint32_t max = 0;
};

struct GbnfRule {
  std::string name;
  GbnfExpr body;
  uint32_t line = 0;  // where it is defined (0: only referenced, never defined)
};

struct GbnfGrammar {
  std::vector<GbnfRule> rules;  // every name defined or referenced
  uint32_t root = 0;            // the start rule
  // The rule named `name`, or -1.
  int64_t Find(std::string_view name) const;
};

// Parses `text`; the start rule is `root` (llama.cpp's "root" by default).
// Errors: syntax (with line and column), a rule defined twice, an undefined
// rule (with where it is used), no start rule, a repetition count above
// kMaxRepetition, code points above U+10FFFF.
Status ParseGbnf(std::string_view text, std::string_view root, GbnfGrammar* out);

// The grammar as GBNF text again (rules in their order; for messages and tests).
std::string PrintGbnf(const GbnfGrammar& g);
// A set of code points as a GBNF element: "c" for one, . for all, else [...].
std::string PrintCharSet(const CharSet& s);

}  // namespace ember::grammar
