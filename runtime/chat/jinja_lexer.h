// The Jinja lexer: template text -> tokens, with jinja2's whitespace rules.
//
// Template data outside tags becomes kData tokens; each {{ ... }} and {% ... %}
// becomes a begin token, the expression's tokens and an end token; comments
// {# ... #} vanish and {% raw %}...{% endraw %} is data. Whitespace control is
// applied here, as jinja2's lexer does it, so the parser never sees it:
//   - line endings are normalized to "\n" and one trailing newline of the
//     template is dropped (jinja2's keep_trailing_newline=False);
//   - "{%-", "{{-", "{#-" strip all whitespace before the tag; "-%}", "-}}",
//     "-#}" all whitespace after it;
//   - trim_blocks: the first newline after a block tag or comment goes
//     (not after "}}"; "+%}" keeps it);
//   - lstrip_blocks: spaces and tabs from the start of a line up to a block
//     tag or comment go ("{%+" keeps them). "The start of a line" means the
//     text before the tag holds a newline, or the previous tag's match ended
//     with one (or the template starts there).
// Inside tags, "}}" and "%}" end the tag only outside brackets, so
// {{ {'a': {'b': 1}} }} works.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "platform/status.h"

namespace ember::jinja {

enum class TokenKind : uint8_t {
  kData,        // template text (value: the text)
  kVarBegin,    // {{
  kVarEnd,      // }}
  kBlockBegin,  // {%
  kBlockEnd,    // %}
  kName,        // identifier (value: the name)
  kString,      // string literal (value: decoded)
  kInt,         // integer literal (value: digits without '_')
  kFloat,       // float literal (value: the literal without '_')
  kOperator,    // value: the operator, e.g. "**", "(", "|"
  kEof,
};

struct Token {
  TokenKind kind;
  std::string value;
  uint32_t line;    // 1-based
  uint32_t column;  // 1-based, in bytes
};

struct LexOptions {
  bool trim_blocks = true;  // Hugging Face's settings
  bool lstrip_blocks = true;
};

// Tokenizes `source` (UTF-8). Errors name `name`, the line and the column.
Status Lex(std::string_view source, std::string_view name, const LexOptions& opts,
           std::vector<Token>* out);

// "name:line:column: " for messages.
std::string Where(std::string_view name, uint32_t line, uint32_t column = 0);

}  // namespace ember::jinja
