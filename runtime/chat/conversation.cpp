#include "runtime/chat/conversation.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "platform/clock.h"
#include "runtime/text/unicode.h"

namespace ember {
namespace {

using json = nlohmann::ordered_json;

// Byte offset of the first invalid UTF-8 sequence in s, or npos.
size_t FirstInvalidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const int n = unicode::CheckUtf8(s, i);
    if (n <= 0) return i;
    i += static_cast<size_t>(n);
  }
  return std::string_view::npos;
}

// s with every invalid sequence replaced by U+FFFD (model output can hold
// stray bytes; the template's tojson and the JSON files need valid text).
std::string ValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const int n = unicode::CheckUtf8(s, i);
    if (n > 0) {
      out.append(s.substr(i, static_cast<size_t>(n)));
      i += static_cast<size_t>(n);
    } else {
      unicode::AppendUtf8(unicode::kReplacementChar, &out);
      i += n == 0 ? s.size() - i : static_cast<size_t>(-n);
    }
  }
  return out;
}

// Index of the first message of the oldest droppable turn and one past its
// end (the next user message), or {0, 0} when there is none to drop: the
// last user message (the one being answered) always stays.
std::pair<size_t, size_t> OldestTurn(const json& messages) {
  size_t first = 0;
  while (first < messages.size() && messages[first].value("role", "") == "system") ++first;
  size_t next = first + 1;
  while (next < messages.size() && messages[next].value("role", "") != "user") ++next;
  if (first >= messages.size() || next >= messages.size()) return {0, 0};
  return {first, next};
}

void AddResult(const GenerateResult& part, GenerateResult* total) {
  total->tokens.insert(total->tokens.end(), part.tokens.begin(), part.tokens.end());
  total->text += part.text;
  total->finish = part.finish;
  total->stop = part.stop;
  total->logprob += part.logprob;
  total->token_logprobs.insert(total->token_logprobs.end(), part.token_logprobs.begin(),
                               part.token_logprobs.end());
  total->top_probs.insert(total->top_probs.end(), part.top_probs.begin(), part.top_probs.end());
  total->decode_seconds += part.prefill_seconds + part.decode_seconds;
  total->n_decode_evals += part.n_decode_evals;
}

}  // namespace

Conversation::Conversation(Session* session, const ChatTemplate* tmpl, ConversationParams params)
    : session_(session), tmpl_(tmpl), params_(std::move(params)) {
  markers_ = FindThinkingMarkers(tmpl_->source());
  const Tokenizer& tok = session_->model().tokenizer();
  const VocabData& v = tok.vocab();
  ChatTemplateOptions& o = params_.template_options;
  if (o.bos_token.empty() && v.bos_id >= 0) o.bos_token = tok.TokenToPiece(v.bos_id, true);
  if (o.eos_token.empty() && v.eos_id >= 0) o.eos_token = tok.TokenToPiece(v.eos_id, true);
  if (!params_.system.empty()) {
    messages_.push_back({{"role", "system"}, {"content", params_.system}});
  }
}

Status Conversation::Create(Session* session, const ChatTemplate* tmpl, ConversationParams params,
                            std::unique_ptr<Conversation>* out) {
  if (session == nullptr || tmpl == nullptr) return InvalidArgument("no session or template");
  if (FirstInvalidUtf8(params.system) != std::string_view::npos) {
    return InvalidArgument("the system message is not valid UTF-8");
  }
  if (params.reasoning_budget < -1) {
    return InvalidArgument("the reasoning budget must be >= 0, or -1 for none");
  }
  out->reset(new Conversation(session, tmpl, std::move(params)));
  // A template that cannot render a first turn fails here, not in the middle
  // of the conversation.
  json probe = (*out)->messages_;
  probe.push_back({{"role", "user"}, {"content", "Hello."}});
  std::string text;
  return (*out)->Render(probe, true, &text);
}

Status Conversation::Render(const json& messages, bool add_generation_prompt,
                            std::string* out) const {
  ChatTemplateOptions o = params_.template_options;
  o.add_generation_prompt = add_generation_prompt;
  return tmpl_->Apply(messages, o, out);
}

std::vector<int32_t> TokenizeChatPrompt(const Tokenizer& tok, std::string_view text,
                                        const std::string& bos, const std::string& eos) {
  if (tok.vocab().add_bos && !bos.empty() && text.substr(0, bos.size()) == bos) {
    text.remove_prefix(bos.size());
  }
  if (tok.vocab().add_eos && !eos.empty() && text.size() >= eos.size() &&
      text.substr(text.size() - eos.size()) == eos) {
    text.remove_suffix(eos.size());
  }
  return tok.Encode(text, /*add_special=*/true, /*parse_special=*/true);
}

std::vector<int32_t> Conversation::Tokenize(const std::string& rendered) const {
  const ChatTemplateOptions& o = params_.template_options;
  return TokenizeChatPrompt(session_->model().tokenizer(), rendered, o.bos_token, o.eos_token);
}

Status Conversation::Fit(json* messages, int64_t reserve, std::vector<int32_t>* tokens,
                         std::string* rendered, int64_t* n_dropped) const {
  const int64_t n_ctx = session_->n_ctx();
  for (;;) {
    EMBER_RETURN_IF_ERROR(Render(*messages, true, rendered));
    *tokens = Tokenize(*rendered);
    const int64_t n = static_cast<int64_t>(tokens->size());
    if (n + reserve <= n_ctx) return Status::Ok();
    const auto [first, end] = OldestTurn(*messages);
    if (first == end) {
      if (n < n_ctx) return Status::Ok();  // no old turn left: the reply gets what remains
      return Status(Code::kContextOverflow,
                    "the conversation needs " + std::to_string(n) +
                        " tokens even without earlier turns; the context holds " +
                        std::to_string(n_ctx));
    }
    messages->erase(messages->begin() + static_cast<std::ptrdiff_t>(first),
                    messages->begin() + static_cast<std::ptrdiff_t>(end));
    *n_dropped += static_cast<int64_t>(end - first);
  }
}

Status Conversation::Send(std::string_view user_message, const GenerateParams& gen,
                          const ChatPieceFn& on_piece, ChatTurn* turn) {
  const auto t0 = std::chrono::steady_clock::now();
  *turn = ChatTurn();
  const size_t bad = FirstInvalidUtf8(user_message);
  if (bad != std::string_view::npos) {
    return InvalidArgument("the message is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  }
  if (gen.n_predict < 0) return InvalidArgument("n_predict must be >= 0");
  if (gen.beams > 0) return Unsupported("beam search is not available in a chat");

  json messages = messages_;
  messages.push_back({{"role", "user"}, {"content", std::string(user_message)}});
  // Room for the reply: all of n_predict, up to half the context.
  const int64_t n_ctx = session_->n_ctx();
  const int64_t reserve = std::clamp<int64_t>(gen.n_predict, 1, n_ctx / 2);
  std::vector<int32_t> prompt;
  std::string rendered;
  EMBER_RETURN_IF_ERROR(Fit(&messages, reserve, &prompt, &rendered, &turn->n_dropped_messages));
  turn->n_prompt = static_cast<int64_t>(prompt.size());
  last_prompt_ = prompt;

  GenerateParams g = gen;
  g.reuse_prefix = true;
  g.n_predict = std::min<int64_t>(gen.n_predict, n_ctx - turn->n_prompt);

  std::optional<ReasoningSplitter> splitter;
  if (markers_) splitter.emplace(*markers_, PromptOpensReasoning(rendered, *markers_));
  bool stopped_by_caller = false;
  bool first_piece = true;
  auto deliver = [&](ReplyChannel ch, std::string_view text) {
    if (text.empty()) return;
    if (first_piece) {
      turn->first_token_seconds = SecondsSince(t0);
      first_piece = false;
    }
    (ch == ReplyChannel::kReasoning ? turn->reasoning : turn->content).append(text);
    if (!stopped_by_caller && on_piece && !on_piece(ch, text)) stopped_by_caller = true;
  };
  auto piece_fn = [&](std::string_view piece, int32_t) {
    if (splitter) {
      splitter->Feed(piece, deliver);
    } else {
      deliver(ReplyChannel::kContent, piece);
    }
    return !stopped_by_caller;
  };
  const int64_t budget = splitter ? params_.reasoning_budget : -1;
  auto token_fn = [&](int32_t) {
    if (!splitter || !splitter->in_reasoning()) return true;
    if (budget >= 0 && turn->n_reasoning >= budget) {
      turn->budget_hit = true;
      return false;  // this token is dropped; the close marker goes in instead
    }
    ++turn->n_reasoning;
    return true;
  };

  session_->ClearCancel();
  GenerateResult part;
  if (splitter && splitter->in_reasoning() && budget == 0) {
    // The prompt opened the reasoning and none is allowed: only the prompt.
    EMBER_RETURN_IF_ERROR(session_->DecodeReusing(prompt, &turn->n_reused));
    turn->budget_hit = true;
    part.n_prompt = turn->n_prompt;
    part.n_reused = turn->n_reused;
  } else {
    EMBER_RETURN_IF_ERROR(Run(prompt, g, piece_fn, token_fn, &part, &turn->spec));
    turn->n_reused = part.n_reused;
  }
  turn->gen = part;
  if (turn->budget_hit) {
    // Drop the token that went over the budget, write the close marker into
    // the context and let the model answer with what n_predict has left.
    if (!part.tokens.empty() && part.finish == FinishReason::kCancelled) part.tokens.pop_back();
    turn->gen.tokens = part.tokens;
    const std::string close = "\n" + markers_->close + "\n\n";
    splitter->Feed(close, deliver);
    const std::vector<int32_t> forced = session_->model().tokenizer().Encode(close, false, true);
    GenerateParams rest = g;
    rest.reuse_prefix = false;
    rest.n_predict = std::max<int64_t>(
        0, std::min<int64_t>(g.n_predict - static_cast<int64_t>(part.tokens.size()),
                             n_ctx - session_->n_past() - static_cast<int64_t>(forced.size())));
    if (rest.n_predict > 0 && !stopped_by_caller && !session_->cancel_requested()) {
      GenerateResult answer;
      EMBER_RETURN_IF_ERROR(Run(forced, rest, piece_fn, token_fn, &answer, &turn->spec));
      AddResult(answer, &turn->gen);
    } else if (rest.n_predict > 0) {
      turn->gen.finish = FinishReason::kCancelled;
    }
  }
  if (splitter) splitter->Finish(deliver);
  if (stopped_by_caller) turn->gen.finish = FinishReason::kCancelled;

  turn->content = ValidUtf8(turn->content);
  turn->reasoning = ValidUtf8(turn->reasoning);
  json reply = {{"role", "assistant"}, {"content", turn->content}};
  if (!turn->reasoning.empty()) reply["reasoning_content"] = turn->reasoning;
  messages.push_back(std::move(reply));
  messages_ = std::move(messages);
  return Status::Ok();
}

Status Conversation::Run(const std::vector<int32_t>& prompt, const GenerateParams& g,
                         const PieceFn& on_piece, const TokenFn& on_token, GenerateResult* out,
                         SpeculativeStats* spec) {
  if (!draft_) return Generate(*session_, prompt, g, on_piece, on_token, out);
  SpeculativeStats part;
  EMBER_RETURN_IF_ERROR(
      GenerateSpeculative(*session_, *draft_, prompt, g, spec_, on_piece, on_token, out, &part));
  spec->n_steps += part.n_steps;
  spec->n_drafted += part.n_drafted;
  spec->n_accepted += part.n_accepted;
  spec->draft_seconds += part.draft_seconds;
  spec->verify_seconds += part.verify_seconds;
  return Status::Ok();
}

void Conversation::Reset() {
  json kept = json::array();
  if (!messages_.empty() && messages_[0].value("role", "") == "system")
    kept.push_back(messages_[0]);
  messages_ = std::move(kept);
}

Status Conversation::SetMessages(json messages) {
  if (!messages.is_array()) return InvalidArgument("the messages are not a JSON array");
  for (size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    const std::string where = "message " + std::to_string(i);
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || !m.contains("content") ||
        !m["content"].is_string()) {
      return InvalidArgument(where + " is not an object with string 'role' and 'content'");
    }
    const std::string role = m["role"];
    if (role != "system" && role != "user" && role != "assistant" && role != "tool") {
      return InvalidArgument(where + " has the unknown role '" + role + "'");
    }
    if (role == "system" && i != 0)
      return InvalidArgument(where + ": a system message comes first");
  }
  std::string probe;
  EMBER_RETURN_IF_ERROR(Render(messages, false, &probe));
  messages_ = std::move(messages);
  return Status::Ok();
}

}  // namespace ember
