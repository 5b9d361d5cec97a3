#include "platform/utf8.h"

namespace ember::utf8 {

int Check(std::string_view s, size_t i) {
  const auto b = static_cast<uint8_t>(s[i]);
  if (b < 0x80) return 1;
  // The allowed range of the second byte excludes overlong forms (E0, F0),
  // surrogates (ED) and code points above U+10FFFF (F4).
  int len;
  uint8_t lo = 0x80, hi = 0xBF;
  if (b >= 0xC2 && b <= 0xDF) {
    len = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    len = 3;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    len = 4;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;
  } else {
    return -1;
  }
  for (int k = 1; k < len; ++k) {
    if (i + static_cast<size_t>(k) >= s.size()) return 0;
    const auto c = static_cast<uint8_t>(s[i + static_cast<size_t>(k)]);
    if (c < lo || c > hi) return -k;
    lo = 0x80;
    hi = 0xBF;
  }
  return len;
}

int Decode(std::string_view s, size_t i, uint32_t* cp) {
  if (i >= s.size()) return 0;
  const int len = Check(s, i);
  if (len <= 0) return 0;
  // The lead byte keeps 7, 5, 4 or 3 bits; each continuation byte 6.
  uint32_t v = static_cast<uint8_t>(s[i]) & (len == 1 ? 0x7Fu : 0x7Fu >> len);
  for (int k = 1; k < len; ++k) {
    v = (v << 6) | (static_cast<uint8_t>(s[i + static_cast<size_t>(k)]) & 0x3Fu);
  }
  *cp = v;
  return len;
}

}  // namespace ember::utf8
