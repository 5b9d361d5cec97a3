// Strict UTF-8 (RFC 3629), the one table of valid sequences that the
// tokenizers' streaming, the chat code and the grammar parsers share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ember::utf8 {

// The sequence starting at s[i] (i < s.size()): its length (1..4) when it is
// a valid character, 0 when s ends inside a sequence that is valid so far,
// and -k when the k bytes starting at s[i] are an invalid sequence (the
// "maximal subpart" that one U+FFFD replaces). Invalid: a continuation or
// 0xC0, 0xC1, 0xF5..0xFF lead byte, a malformed continuation byte, an
// overlong form, a surrogate, a code point above U+10FFFF.
int Check(std::string_view s, size_t i);

// The valid character at s[i]: returns its length (1..4) and sets *cp, or 0
// when the bytes there are not a whole valid character (or i is past the end).
int Decode(std::string_view s, size_t i, uint32_t* cp);

}  // namespace ember::utf8
