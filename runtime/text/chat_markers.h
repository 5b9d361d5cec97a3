// End-of-turn markers read off a chat template (tokenizer.chat_template).
//
// Chat templates close each message with a marker token written right after
// the message's content: `message['content'] + '<|im_end|>'`,
// `{{ content | trim }}<end_of_turn>`, `content + '<|eot_id|>'`. A model that
// finishes its answer produces that marker, so it ends generation. This scan
// is a heuristic on the template text, which needs no rendering:
//   - look at the text after each occurrence of "content", up to the next
//     "{%" (a control block: what follows is another branch) or 120 bytes;
//   - the first special-looking token there (<...>, [..], or the variable
//     eos_token) is a candidate;
//   - keep candidates whose name says they end something ("end", "eot",
//     "eom", "turn") and are not about thinking or tools.
// Candidates must also be special tokens of the vocabulary (checked by the
// caller). Tested on the real templates in ../shared/templates.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ember {

// The marker texts, in order of first appearance, without duplicates.
// "eos_token" stands for the vocabulary's EOS token.
std::vector<std::string> FindChatEndMarkers(std::string_view chat_template);

}  // namespace ember
