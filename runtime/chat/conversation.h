// A conversation with an instruct model, kept in one Session.
//
// The cache layout is the conversation itself: the session's KV holds the
// tokens of the template rendered over the messages so far (system, user,
// assistant, user, ...), ending with the last reply. Each Send renders the
// whole conversation plus the new user message and the generation prompt,
// tokenizes it and hands it to Generate with reuse_prefix: the longest common
// prefix with the cached tokens stays, so a turn computes only its new tokens
// (the user message, the template's markers around it, and whatever of the
// last reply the template renders differently from how it was generated,
// e.g. a reasoning section it drops). Rendering the whole conversation rather
// than appending per-turn fragments keeps the prompt exactly the template's,
// whatever the template does with earlier turns.
//
// When the rendered conversation would not leave room for a reply, the
// oldest turns go (a turn = a user message and everything up to the next
// one), never the system message and never half a turn; the rest is then
// computed again, since its positions changed.
//
// Replies of reasoning models are split into reasoning and content
// (runtime/chat/reasoning.h); a reasoning budget ends the reasoning after N
// tokens by writing the close marker into the context, then lets the model
// answer.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/status.h"
#include "runtime/chat/chat_template.h"
#include "runtime/chat/reasoning.h"
#include "runtime/decoding/generate.h"
#include "runtime/decoding/speculative.h"
#include "runtime/session/session.h"

namespace ember {

// The tokens of a rendered chat prompt, as a conversation sends them: special
// tokens parsed, BOS (EOS) added when the vocabulary asks for it, after taking
// off a BOS (EOS) the template wrote itself so that it is not there twice (as
// llama.cpp does). bos / eos: the texts the template was given.
std::vector<int32_t> TokenizeChatPrompt(const Tokenizer& tok, std::string_view rendered,
                                        const std::string& bos, const std::string& eos);

struct ConversationParams {
  std::string system;  // the system message; empty: none
  // Template variables; bos_token and eos_token are filled from the
  // vocabulary when empty.
  ChatTemplateOptions template_options;
  // Tokens of reasoning before the close marker is forced; -1: no limit.
  int64_t reasoning_budget = -1;
};

// One turn's outcome.
struct ChatTurn {
  std::string content;             // the answer
  std::string reasoning;           // the reasoning section, without markers ("" if none)
  GenerateResult gen;              // tokens, finish reason, timings (both parts when budgeted)
  int64_t n_prompt = 0;            // tokens of the rendered conversation sent this turn
  int64_t n_reused = 0;            // of those, found in the cache
  int64_t n_reasoning = 0;         // generated tokens inside the reasoning section
  bool budget_hit = false;         // the reasoning was closed by the budget
  int64_t n_dropped_messages = 0;  // old messages dropped to make room
  double first_token_seconds = 0;  // from Send to the first piece of the reply
  SpeculativeStats spec;           // with SetSpeculative
};

// Receives the reply as it is generated: each piece with its channel.
// Return false to stop the reply (it is kept, as far as it got).
using ChatPieceFn = std::function<bool(ReplyChannel channel, std::string_view piece)>;

class Conversation {
 public:
  // Borrows session and tmpl, which must outlive the conversation. The
  // session should be fresh or hold an earlier rendering (its cache is reused
  // where it matches).
  static Status Create(Session* session, const ChatTemplate* tmpl, ConversationParams params,
                       std::unique_ptr<Conversation>* out);

  // Appends a user message and generates the reply into the conversation.
  // Errors (invalid UTF-8, a message that does not fit even alone, a
  // template error) leave the conversation and its cache as they were.
  // gen.reuse_prefix is implied; gen.n_predict bounds the reply and is cut to
  // the room left in the context.
  Status Send(std::string_view user_message, const GenerateParams& gen, const ChatPieceFn& on_piece,
              ChatTurn* turn);

  // Replies drafted by `draft` and verified (runtime/decoding/speculative.h),
  // or plainly generated again with draft null.
  void SetSpeculative(std::unique_ptr<DraftSource> draft, const SpeculativeParams& params) {
    draft_ = std::move(draft);
    spec_ = params;
  }

  // Back to the system message alone (the cache is reused for it next turn).
  void Reset();

  // The messages: [{role, content[, reasoning_content]}].
  const nlohmann::ordered_json& messages() const { return messages_; }
  // Replaces the messages (a conversation loaded from a file): an array of
  // objects with string role and content; the system message, if any, first.
  Status SetMessages(nlohmann::ordered_json messages);

  // The prompt the next Send would start from: the template over the
  // messages (add_generation_prompt as given).
  Status Render(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                std::string* out) const;
  // TokenizeChatPrompt with this conversation's tokenizer and BOS/EOS texts.
  std::vector<int32_t> Tokenize(const std::string& rendered) const;

  // The tokens of the last prompt Send rendered (the whole conversation then).
  const std::vector<int32_t>& last_prompt() const { return last_prompt_; }
  const std::optional<ThinkingMarkers>& thinking_markers() const { return markers_; }
  Session& session() { return *session_; }

 private:
  Conversation(Session* session, const ChatTemplate* tmpl, ConversationParams params);
  // Renders messages_ + the new user message and drops old turns until the
  // prompt leaves `reserve` tokens of the context for the reply.
  Status Fit(nlohmann::ordered_json* messages, int64_t reserve, std::vector<int32_t>* tokens,
             std::string* rendered, int64_t* n_dropped) const;
  // Generate, or GenerateSpeculative when a draft source is set (its stats
  // added to *spec).
  Status Run(const std::vector<int32_t>& prompt, const GenerateParams& g, const PieceFn& on_piece,
             const TokenFn& on_token, GenerateResult* out, SpeculativeStats* spec);

  Session* session_;
  const ChatTemplate* tmpl_;
  ConversationParams params_;
  std::optional<ThinkingMarkers> markers_;
  nlohmann::ordered_json messages_ = nlohmann::ordered_json::array();
  std::vector<int32_t> last_prompt_;
  std::unique_ptr<DraftSource> draft_;
  SpeculativeParams spec_;
};

}  // namespace ember
