#include "runtime/chat/builtin_templates.h"

#include <string_view>

namespace ember {
namespace {

// Gemma: user and model turns; a system message is not a role of its own
// but opens the first user turn, followed by a blank line.
const char kGemmaTemplate[] =
    "{{ bos_token }}"
    "{%- if messages and messages[0]['role'] == 'system' -%}"
    "{%- set prefix = messages[0]['content'] ~ '\\n\\n' -%}"
    "{%- set turns = messages[1:] -%}"
    "{%- else -%}"
    "{%- set prefix = '' -%}"
    "{%- set turns = messages -%}"
    "{%- endif -%}"
    "{%- for m in turns -%}"
    "{%- set role = 'model' if m['role'] == 'assistant' else m['role'] -%}"
    "{{ '<start_of_turn>' ~ role ~ '\\n' ~ (prefix if loop.first else '') ~ (m['content'] | trim)"
    " ~ '<end_of_turn>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<start_of_turn>model\\n' }}{%- endif -%}";

// Llama 3: a header per message, content trimmed, <|eot_id|> after each.
const char kLlama3Template[] =
    "{{ bos_token }}"
    "{%- for m in messages -%}"
    "{{ '<|start_header_id|>' ~ m['role'] ~ '<|end_header_id|>\\n\\n' ~ (m['content'] | trim)"
    " ~ '<|eot_id|>' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}"
    "{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
    "{%- endif -%}";

// ChatML.
const char kChatmlTemplate[] =
    "{%- for m in messages -%}"
    "{{ '<|im_start|>' ~ m['role'] ~ '\\n' ~ m['content'] ~ '<|im_end|>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|im_start|>assistant\\n' }}{%- endif -%}";

struct FormatMarker {
  BuiltinTemplate tmpl;
  const char* marker;  // the special token that identifies the format
};

const FormatMarker kFormatMarkers[] = {
    {{"gemma", kGemmaTemplate}, "<start_of_turn>"},
    {{"llama3", kLlama3Template}, "<|start_header_id|>"},
    {{"chatml", kChatmlTemplate}, "<|im_start|>"},
};

bool HasSpecialToken(const Tokenizer& tok, std::string_view text) {
  const VocabData& v = tok.vocab();
  for (size_t i = 0; i < v.tokens.size(); ++i) {
    if (v.tokens[i] == text) {
      const TokenType t = v.token_types[i];
      return t == TokenType::kControl || t == TokenType::kUserDefined;
    }
  }
  return false;
}

}  // namespace

const BuiltinTemplate* BuiltinTemplateFor(const Tokenizer& tok) {
  for (const FormatMarker& c : kFormatMarkers) {
    if (HasSpecialToken(tok, c.marker)) return &c.tmpl;
  }
  return nullptr;
}

}  // namespace ember
