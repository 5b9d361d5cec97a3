// Reasoning ("thinking") sections in a reasoning model's reply.
//
// Reasoning models write their chain of thought first, between markers their
// chat template knows, then the answer:
//   <think>\nLet me count the letters...\n</think>\n\nThere are 3.
// Chat templates show which markers a model uses (Qwen3, QwQ, DeepSeek-R1,
// SmolLM3: <think> ... </think>; ByteDance Seed: <seed:think>; Cohere:
// <|START_THINKING|>; Mistral's reasoning models: [THINK]; ...), and many open
// the section in the generation prompt itself (`<|im_start|>assistant\n<think>\n`),
// so the reply starts inside it. ReasoningSplitter separates the two channels
// of a streamed reply; the chat loop shows, hides or budgets the reasoning
// (docs/CHAT.md).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ember {

struct ThinkingMarkers {
  std::string open;   // "<think>"
  std::string close;  // "</think>"
};

// The markers of the first known convention whose open and close markers both
// occur in the template's source, or nullopt (not a reasoning template).
std::optional<ThinkingMarkers> FindThinkingMarkers(std::string_view template_source);

// Whether a rendered generation prompt leaves a reasoning section open: its
// last open marker comes after its last close marker (the model's reply then
// starts inside the reasoning).
bool PromptOpensReasoning(std::string_view prompt, const ThinkingMarkers& markers);

enum class ReplyChannel { kReasoning, kContent };
const char* ReplyChannelName(ReplyChannel c);  // "reasoning", "content"

// Splits a reply, fed piece by piece as it is generated, into its reasoning
// and its content. A reasoning section is recognised only at the start of the
// reply (after whitespace) or when the prompt opened it; markers are not
// emitted, nor the whitespace that surrounds them (the newlines after the open
// marker, before and after the close marker). Text that could still become a
// marker is held back until it cannot (at most the marker's length - 1 bytes).
// A reply that ends inside its reasoning (a length limit) leaves everything in
// the reasoning channel, as llama.cpp's parser does.
class ReasoningSplitter {
 public:
  using EmitFn = std::function<void(ReplyChannel channel, std::string_view text)>;

  ReasoningSplitter(ThinkingMarkers markers, bool starts_inside);

  // Feeds the next piece of the reply; emit() receives every part that is
  // decided, in order.
  void Feed(std::string_view piece, const EmitFn& emit);
  // The reply has ended: emits what was held back.
  void Finish(const EmitFn& emit);

  // In the reasoning section now (before its close marker).
  bool in_reasoning() const { return state_ == State::kReasoning; }
  // A reasoning section was opened (and perhaps closed) in this reply.
  bool saw_reasoning() const { return saw_reasoning_; }
  const ThinkingMarkers& markers() const { return markers_; }

 private:
  enum class State { kStart, kReasoning, kAfterClose, kContent };
  void Drain(bool final, const EmitFn& emit);

  ThinkingMarkers markers_;
  State state_;
  bool saw_reasoning_;
  bool reasoning_started_ = false;  // a non-whitespace reasoning byte was emitted
  std::string pending_;             // undecided bytes
  std::string reasoning_ws_;        // whitespace inside the reasoning, held until more text
};

}  // namespace ember
