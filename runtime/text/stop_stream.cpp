#include "runtime/text/stop_stream.h"

#include <algorithm>

namespace ember {

StopStream::StopStream(std::vector<std::string> stops) {
  for (std::string& s : stops) {
    if (!s.empty()) stops_.push_back(std::move(s));
  }
}

std::string StopStream::Push(std::string_view bytes) {
  if (stopped_) return "";
  held_.append(bytes);
  // The earliest complete stop string; on a tie at one position the longest.
  size_t cut = std::string::npos;
  for (const std::string& s : stops_) {
    const size_t at = held_.find(s);
    if (at == std::string::npos) continue;
    if (at < cut || (at == cut && s.size() > stop_.size())) {
      cut = at;
      stop_ = s;
    }
  }
  if (cut != std::string::npos) {
    stopped_ = true;
    std::string out = utf8_.Push(std::string_view(held_).substr(0, cut));
    out += utf8_.Flush();
    held_.clear();
    return out;
  }
  // Hold back the longest tail of held_ that is a proper prefix of a stop
  // string: only it can still grow into one.
  size_t keep = 0;
  for (const std::string& s : stops_) {
    const size_t max_len = std::min(s.size() - 1, held_.size());
    for (size_t len = max_len; len > keep; --len) {
      if (held_.compare(held_.size() - len, len, s, 0, len) == 0) {
        keep = len;
        break;
      }
    }
  }
  const size_t emit = held_.size() - keep;
  std::string out = utf8_.Push(std::string_view(held_).substr(0, emit));
  held_.erase(0, emit);
  return out;
}

std::string StopStream::Flush() {
  if (stopped_) return "";
  std::string out = utf8_.Push(held_);
  held_.clear();
  out += utf8_.Flush();
  return out;
}

}  // namespace ember
