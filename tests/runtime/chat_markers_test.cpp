#include "runtime/text/chat_markers.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "support/skip.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

std::vector<std::string> MarkersOf(const std::string& file) {
  const std::string path = test::SharedDir() + "/templates/" + file;
  return FindChatEndMarkers(test::ReadFile(path));
}

}  // namespace

TEST_CASE("chat markers: the usual end-of-turn tokens of real templates", "[chat]") {
  using V = std::vector<std::string>;
  CHECK(MarkersOf("HuggingFaceTB-SmolLM3-3B.jinja") == V{"<|im_end|>"});
  CHECK(MarkersOf("Qwen-Qwen2.5-7B-Instruct.jinja") == V{"<|im_end|>"});
  CHECK(MarkersOf("meta-llama-Llama-3.1-8B-Instruct.jinja") == V{"<|eot_id|>"});
  CHECK(MarkersOf("google-gemma-2-2b-it.jinja") == V{"<end_of_turn>"});
  CHECK(MarkersOf("microsoft-Phi-3.5-mini-instruct.jinja") == V{"<|end|>"});
  CHECK(MarkersOf("google-gemma-4-31B-it.jinja") == V{"<turn|>"});
  const V mistral = MarkersOf("mistralai-Mistral-Nemo-Instruct-2407.jinja");
  CHECK(mistral == V{"eos_token"});  // [/INST] closes the user's turn, not the model's
}

TEST_CASE("chat markers: hand-written cases", "[chat]") {
  using V = std::vector<std::string>;
  CHECK(FindChatEndMarkers("{{ message['content'] + '<|im_end|>' + '\\n' }}") == V{"<|im_end|>"});
  // Thinking and tool tags are not ends of a turn.
  CHECK(FindChatEndMarkers("{{ content + '</think>' }}{{ content + '</tool_response>' }}").empty());
  // What follows a control block is another branch.
  CHECK(FindChatEndMarkers("{{ content }}{% endif %}<|end|>").empty());
  CHECK(FindChatEndMarkers("").empty());
  CHECK(FindChatEndMarkers("content").empty());
  CHECK(FindChatEndMarkers("content <").empty());
}
