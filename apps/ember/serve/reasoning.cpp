#include "serve/reasoning.h"

namespace serve {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

std::string LStrip(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && IsSpace(s[i])) ++i;
  return s.substr(i);
}

std::string RStrip(const std::string& s) {
  size_t n = s.size();
  while (n > 0 && IsSpace(s[n - 1])) --n;
  return s.substr(0, n);
}

// The largest cut <= n that does not split a UTF-8 character of s.
size_t Utf8Cut(const std::string& s, size_t n) {
  while (n > 0 && n < s.size() && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}

}  // namespace

bool TemplateHasThinkMarkers(const std::string& template_source, ThinkMarkers* out) {
  ThinkMarkers m;
  if (template_source.find(m.open) == std::string::npos ||
      template_source.find(m.close) == std::string::npos) {
    return false;
  }
  *out = m;
  return true;
}

bool PromptOpensThink(const std::string& prompt, const ThinkMarkers& m) {
  const size_t open = prompt.rfind(m.open);
  if (open == std::string::npos) return false;
  const size_t close = prompt.rfind(m.close);
  return close == std::string::npos || close < open;
}

ThinkSplitter::ThinkSplitter(ThinkMarkers markers, bool starts_inside)
    : m_(std::move(markers)), state_(starts_inside ? State::kReasoning : State::kStart) {}

void ThinkSplitter::Feed(const std::string& piece, std::string* reasoning, std::string* content) {
  pending_ += piece;
  Step(reasoning, content);
}

void ThinkSplitter::Step(std::string* reasoning, std::string* content) {
  for (;;) {
    if (strip_leading_) {
      pending_ = LStrip(pending_);
      if (pending_.empty()) return;
      strip_leading_ = false;
    }
    if (state_ == State::kStart) {
      if (pending_.size() < m_.open.size() && m_.open.compare(0, pending_.size(), pending_) == 0) {
        return;  // could still become the open marker
      }
      if (pending_.compare(0, m_.open.size(), m_.open) == 0) {
        pending_ = pending_.substr(m_.open.size());
        state_ = State::kReasoning;
        strip_leading_ = true;
        continue;
      }
      state_ = State::kContent;
      continue;
    }
    if (state_ == State::kContent) {
      *content += pending_;
      pending_.clear();
      return;
    }
    const size_t close = pending_.find(m_.close);
    if (close != std::string::npos) {
      *reasoning += RStrip(pending_.substr(0, close));
      pending_ = pending_.substr(close + m_.close.size());
      state_ = State::kContent;
      strip_leading_ = true;
      continue;
    }
    // Hold back what could be the start of the close marker (and trailing
    // whitespace, which goes only if reasoning text follows it).
    size_t keep = pending_.size() >= m_.close.size() ? pending_.size() - (m_.close.size() - 1) : 0;
    while (keep > 0 && IsSpace(pending_[keep - 1])) --keep;
    keep = Utf8Cut(pending_, keep);
    *reasoning += pending_.substr(0, keep);
    pending_ = pending_.substr(keep);
    return;
  }
}

void ThinkSplitter::Finish(std::string* reasoning, std::string* content) {
  if (state_ == State::kReasoning) {
    *reasoning += RStrip(pending_);
  } else {
    *content += pending_;
  }
  pending_.clear();
}

}  // namespace serve
