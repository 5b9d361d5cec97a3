#include "runtime/chat/reasoning.h"

#include <utility>

#include "platform/ascii.h"

namespace ember {
namespace {

// The conventions found in published chat templates (../shared/templates),
// most specific first: a template that names <seed:think> also contains
// "think>" strings of other conventions' shapes.
const ThinkingMarkers kKnownMarkers[] = {
    {"<seed:think>", "</seed:think>"},           // ByteDance Seed-OSS
    {"<|START_THINKING|>", "<|END_THINKING|>"},  // Cohere Command A reasoning
    {"[THINK]", "[/THINK]"},                     // Mistral's reasoning models
    {"<thinking>", "</thinking>"},               //
    {"<think>", "</think>"},                     // Qwen3, QwQ, DeepSeek-R1, SmolLM3, GLM, ...
};

// Length of the longest suffix of `text` that is a proper prefix of `marker`.
size_t PartialSuffix(std::string_view text, std::string_view marker) {
  const size_t max = std::min(text.size(), marker.size() - 1);
  for (size_t n = max; n > 0; --n) {
    if (text.substr(text.size() - n) == marker.substr(0, n)) return n;
  }
  return 0;
}

}  // namespace

std::optional<ThinkingMarkers> FindThinkingMarkers(std::string_view source) {
  for (const ThinkingMarkers& m : kKnownMarkers) {
    if (source.find(m.open) != std::string_view::npos &&
        source.find(m.close) != std::string_view::npos) {
      return m;
    }
  }
  return std::nullopt;
}

bool PromptOpensReasoning(std::string_view prompt, const ThinkingMarkers& markers) {
  const size_t open = prompt.rfind(markers.open);
  if (open == std::string_view::npos) return false;
  const size_t close = prompt.rfind(markers.close);
  return close == std::string_view::npos || close < open;
}

const char* ReplyChannelName(ReplyChannel c) {
  return c == ReplyChannel::kReasoning ? "reasoning" : "content";
}

ReasoningSplitter::ReasoningSplitter(ThinkingMarkers markers, bool starts_inside)
    : markers_(std::move(markers)),
      state_(starts_inside ? State::kReasoning : State::kStart),
      saw_reasoning_(starts_inside) {}

void ReasoningSplitter::Feed(std::string_view piece, const EmitFn& emit) {
  pending_.append(piece);
  Drain(false, emit);
}

void ReasoningSplitter::Finish(const EmitFn& emit) { Drain(true, emit); }

void ReasoningSplitter::Drain(bool final, const EmitFn& emit) {
  // Reasoning text goes out without the whitespace at its start and end:
  // whitespace runs wait in reasoning_ws_ until more text follows them.
  auto emit_reasoning = [&](std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
      size_t j = i;
      while (j < text.size() && IsAsciiSpace(text[j])) ++j;
      if (j > i && reasoning_started_) reasoning_ws_.append(text.substr(i, j - i));
      i = j;
      while (j < text.size() && !IsAsciiSpace(text[j])) ++j;
      if (j > i) {
        if (!reasoning_ws_.empty()) emit(ReplyChannel::kReasoning, reasoning_ws_);
        reasoning_ws_.clear();
        emit(ReplyChannel::kReasoning, text.substr(i, j - i));
        reasoning_started_ = true;
        i = j;
      }
    }
  };

  for (;;) {
    switch (state_) {
      case State::kStart: {
        size_t ws = 0;
        while (ws < pending_.size() && IsAsciiSpace(pending_[ws])) ++ws;
        const std::string_view rest = std::string_view(pending_).substr(ws);
        if (rest.substr(0, markers_.open.size()) == markers_.open) {
          pending_.erase(0, ws + markers_.open.size());
          state_ = State::kReasoning;
          saw_reasoning_ = true;
          continue;
        }
        const bool could_open = rest.size() < markers_.open.size() &&
                                std::string_view(markers_.open).substr(0, rest.size()) == rest;
        if (could_open && !final) return;  // all whitespace so far, or a partial marker
        state_ = State::kContent;
        continue;
      }
      case State::kReasoning: {
        const size_t close = pending_.find(markers_.close);
        if (close != std::string::npos) {
          emit_reasoning(std::string_view(pending_).substr(0, close));
          reasoning_ws_.clear();  // the whitespace before the close marker
          pending_.erase(0, close + markers_.close.size());
          state_ = State::kAfterClose;
          continue;
        }
        const size_t keep = final ? 0 : PartialSuffix(pending_, markers_.close);
        emit_reasoning(std::string_view(pending_).substr(0, pending_.size() - keep));
        pending_.erase(0, pending_.size() - keep);
        return;
      }
      case State::kAfterClose: {
        size_t ws = 0;
        while (ws < pending_.size() && IsAsciiSpace(pending_[ws])) ++ws;
        pending_.erase(0, ws);
        if (pending_.empty()) return;
        state_ = State::kContent;
        continue;
      }
      case State::kContent:
        if (!pending_.empty()) emit(ReplyChannel::kContent, pending_);
        pending_.clear();
        return;
    }
  }
}

}  // namespace ember
