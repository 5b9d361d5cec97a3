// JSON schema "pattern" regexes as GBNF (docs/GRAMMAR.md, "The regex subset").
//
// Supported (ECMAScript syntax, as JSON schema specifies): literals and
// escaped punctuation, ., classes [...] [^...] with ranges, \d \D \w \W \s \S
// (also inside classes), \n \r \t \f \v \0 \xHH \uHHHH, groups (...) (?:...)
// (?<name>...), alternation |, quantifiers * + ? {n} {n,} {n,m} (a lazy ?
// after one is accepted: it matches the same strings), ^ at the start and $
// at the end. A pattern is a search, as JSON schema says: without ^ any text
// may come before the match, without $ any text after it.
// Not supported (an error naming it): backreferences, lookaround, \b \B,
// \p{...}, \c, anchors inside the pattern.
#pragma once

#include <string>
#include <string_view>

#include "platform/status.h"
#include "sampling/grammar/char_set.h"

namespace ember {

// The JSON encodings of the characters of `set` as one GBNF element: the
// characters JSON writes raw as a class, each one it must escape as its
// escape sequence (\" \\ \n ..., \u00XX for other controls). "[]" (nothing)
// for an empty set.
std::string JsonEncodedGbnf(const grammar::CharSet& set);

// A GBNF expression (no rules of its own) for the JSON-encoded contents of a
// string (without its quotes) whose value the regex matches: characters that
// JSON must escape appear escaped (\" \\ \n, \u00XX for other controls).
// `any_char` is the name of a rule matching one JSON string character in
// either form (used for the unanchored sides and for .*-like spans).
Status RegexToGbnf(std::string_view pattern, const std::string& any_char, std::string* gbnf);

}  // namespace ember
