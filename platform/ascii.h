// ASCII character classes and case, as the C locale has them, for text that
// ember parses itself (template syntax, numbers in model output, chat
// markers). Unicode-aware versions are in runtime/text/unicode.h.
#pragma once

#include <string>
#include <string_view>

namespace ember {

inline bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

// Space, tab, newline and carriage return (not \f or \v).
inline bool IsAsciiSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// A copy with A-Z lowered; other bytes, UTF-8 included, unchanged.
inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace ember
