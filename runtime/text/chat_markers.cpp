#include "runtime/text/chat_markers.h"

#include <algorithm>

#include "platform/ascii.h"

namespace ember {
namespace {

bool SaysEnd(std::string_view marker) {
  const std::string m = AsciiLower(marker);
  if (m.find("think") != std::string::npos || m.find("tool") != std::string::npos) return false;
  for (const char* word : {"end", "eot", "eom", "turn"}) {
    if (m.find(word) != std::string::npos) return true;
  }
  return false;
}

// The first "<name>" (no spaces or quotes inside, at most 40 bytes), "[NAME]"
// or "eos_token" in `w`, or "".
std::string FirstMarker(std::string_view w) {
  for (size_t i = 0; i < w.size(); ++i) {
    if (w.compare(i, 9, "eos_token") == 0) return "eos_token";
    const char open = w[i];
    if (open != '<' && open != '[') continue;
    const char close = open == '<' ? '>' : ']';
    for (size_t j = i + 1; j < w.size() && j - i <= 40; ++j) {
      const char c = w[j];
      if (c == close) {
        if (j == i + 1) break;
        return std::string(w.substr(i, j - i + 1));
      }
      if (c == ' ' || c == '\'' || c == '"' || c == '\n' || c == '<' || c == '[' ||
          (open == '[' && !(std::isupper(static_cast<unsigned char>(c)) || c == '_' || c == '/'))) {
        break;
      }
    }
  }
  return "";
}

}  // namespace

std::vector<std::string> FindChatEndMarkers(std::string_view t) {
  std::vector<std::string> out;
  constexpr size_t kWindow = 120;
  for (size_t at = t.find("content"); at != std::string_view::npos;
       at = t.find("content", at + 1)) {
    std::string_view w = t.substr(at + 7, kWindow);
    if (const size_t cut = w.find("{%"); cut != std::string_view::npos) w = w.substr(0, cut);
    const std::string m = FirstMarker(w);
    if (m.empty() || (m != "eos_token" && !SaysEnd(m))) continue;
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  }
  return out;
}

}  // namespace ember
