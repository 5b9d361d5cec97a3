// LoadVocab: the tokenizer.ggml.* keys of a GGUF, validated, with the defaults and the
// by-name special-token fixes llama.cpp applies when it loads the same file
// (llama_vocab::impl::load), so that both tokenize and stop alike.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/gguf/gguf.h"
#include "runtime/text/chat_markers.h"
#include "runtime/text/tokenizer.h"

namespace ember {

namespace {

int64_t IntOf(const GgufValue& v) {
  if (v.type == GgufType::kUint64 && v.u > static_cast<uint64_t>(INT64_MAX)) return INT64_MAX;
  return v.i;
}

// An array-valued key: missing is fine (nullptr) unless `required`; anything else but an array
// of the expected kind is an error naming the key.
Status FindArray(const GgufFile& f, const char* key, bool required, const GgufValue** out) {
  *out = f.Find(key);
  if (*out == nullptr) {
    return required ? BadFormat(std::string(key) + " is missing: the file has no usable tokenizer")
                    : Status::Ok();
  }
  if ((*out)->type != GgufType::kArray) {
    return BadFormat(std::string(key) + " must be an array, found " + GgufTypeName((*out)->type));
  }
  return Status::Ok();
}

Status ReadIdKey(const GgufFile& f, const char* key, size_t n_vocab, int32_t* id) {
  const GgufValue* v = f.Find(key);
  if (v == nullptr) return Status::Ok();  // keep the default
  if (!IsGgufIntegerType(v->type)) {
    return BadFormat(std::string(key) + " must be an integer, found " + GgufTypeName(v->type));
  }
  const int64_t x = IntOf(*v);
  if (x < 0) {
    *id = -1;  // some converters write -1 for "none"
    return Status::Ok();
  }
  if (static_cast<uint64_t>(x) >= n_vocab) {
    return BadFormat(std::string(key) + " = " + std::to_string(x) +
                     " is outside the vocabulary of " + std::to_string(n_vocab) + " tokens");
  }
  *id = static_cast<int32_t>(x);
  return Status::Ok();
}

Status ReadBoolKey(const GgufFile& f, const char* key, bool* out) {
  const GgufValue* v = f.Find(key);
  if (v == nullptr) return Status::Ok();
  if (v->type != GgufType::kBool) {
    return BadFormat(std::string(key) + " must be a bool, found " + GgufTypeName(v->type));
  }
  *out = v->u != 0;
  return Status::Ok();
}

bool Contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

// Fill-in-the-middle tokens: prefix, suffix, middle, pad, repo, file separator.
enum Fim { kFimPre, kFimSuf, kFimMid, kFimPad, kFimRep, kFimSep, kNumFim };

// The by-name fixes of llama.cpp's loader: EOT/EOM/FIM tokens found by text (and made control
// tokens, so they are neither printed nor split out of plain text), the tokens that end
// generation, Phi-3's rstrip attributes, gpt-oss's always-rendered tokens.
void ApplyLlamaCppFixes(const std::string& model_name, int32_t (&fim)[kNumFim], VocabData* v) {
  const size_t n = v->tokens.size();
  // llama.cpp finds these tokens by walking its text -> id hash map and taking the first
  // candidate of each kind. The map built the same way (operator[] in id order, no reserve)
  // iterates in the same order on the same standard library, so the same candidate wins when a
  // vocabulary has several (Phi-3: "<|end|>" and "<|endoftext|>").
  std::unordered_map<std::string, int32_t> by_text;
  for (size_t i = 0; i < n; ++i) by_text[std::string(v->tokens[i])] = static_cast<int32_t>(i);
  auto find = [&](const char* text) {
    auto it = by_text.find(text);
    return it == by_text.end() ? -1 : it->second;
  };
  auto make_control = [&](int32_t id) { v->token_types[id] = TokenType::kControl; };

  static const std::vector<std::string_view> kEotTexts = {
      "<|eot_id|>",
      "<|im_end|>",
      "<|end|>",
      "<end_of_turn>",
      "<|endoftext|>",
      "<|end_of_text|>",
      "<EOT>",
      "_<EOT>",
      "[EOT]",
      "<\xef\xbd\x9c"
      "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>",
      "<end_of_utterance>"};
  static const std::vector<std::string_view> kFimTexts[kNumFim] = {
      {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>",
       "<\xef\xbd\x9c"
       "fim\xe2\x96\x81"
       "begin\xef\xbd\x9c>",
       "<PRE>", "\xe2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>"},
      {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>",
       "<\xef\xbd\x9c"
       "fim\xe2\x96\x81"
       "hole\xef\xbd\x9c>",
       "<SUF>", "\xe2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>"},
      {"<|fim_middle|>", "<fim-middle>", "<fim_middle>",
       "<\xef\xbd\x9c"
       "fim\xe2\x96\x81"
       "end\xef\xbd\x9c>",
       "<MID>", "\xe2\x96\x81<MID>", "<|code_middle|>", "<|middle|>"},
      {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"},
      {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"},
      {"<|file_sep|>"},
  };
  auto is_one_of = [](const std::string& s, const std::vector<std::string_view>& texts) {
    return std::find(texts.begin(), texts.end(), s) != texts.end();
  };
  for (const auto& [text, id] : by_text) {
    // Only the token that gets picked is made a control token, as in llama.cpp.
    if (v->eot_id < 0 && is_one_of(text, kEotTexts)) {
      v->eot_id = id;
      make_control(id);
    }
    if (v->eom_id < 0 && text == "<|eom_id|>") {
      v->eom_id = id;
      make_control(id);
    }
    for (int k = 0; k < kNumFim; ++k) {
      if (fim[k] < 0 && is_one_of(text, kFimTexts[k])) {
        fim[k] = id;
        make_control(id);
      }
    }
  }

  // Tokens that end generation: FIM pad/repo/separator, and these by text (llama.cpp's list).
  std::vector<int32_t> eog;
  for (const int k : {kFimPad, kFimRep, kFimSep}) {
    if (fim[k] >= 0) eog.push_back(fim[k]);
  }
  for (const char* t : {"<|eot_id|>",
                        "<|im_end|>",
                        "<|end|>",
                        "<|return|>",
                        "<|call|>",
                        "<|flush|>",
                        "<|calls|>",
                        "<end_of_turn>",
                        "<|endoftext|>",
                        "</s>",
                        "<|eom_id|>",
                        "<EOT>",
                        "_<EOT>",
                        "[EOT]",
                        "[EOS]",
                        "<|end_of_text|>",
                        "<end_of_utterance>",
                        "<eos>",
                        "<turn|>",
                        "<|tool_response>",
                        "<\xef\xbd\x9c"
                        "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>",
                        "[e~["}) {
    if (const int32_t id = find(t); id >= 0) {
      if (std::count(eog.begin(), eog.end(), id) == 0) eog.push_back(id);
      make_control(id);
    }
  }
  for (const char* t : {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}) {
    if (const int32_t id = find(t); id >= 0) v->token_types[id] = TokenType::kUserDefined;
  }
  auto in_eog = [&](const char* t) {
    const int32_t id = find(t);
    return id >= 0 && (std::count(eog.begin(), eog.end(), id) > 0 || id == v->eos_id ||
                       id == v->eot_id || id == v->eom_id);
  };
  auto drop = [&](int32_t id, TokenType type) {
    eog.erase(std::remove(eog.begin(), eog.end(), id), eog.end());
    v->token_types[id] = type;
  };
  // gpt-oss and solar-open: "<|end|>" ends a message, not the generation.
  if (in_eog("<|end|>") && ((in_eog("<|return|>") && in_eog("<|call|>")) ||
                            (in_eog("<|calls|>") && in_eog("<|flush|>")))) {
    drop(find("<|end|>"), TokenType::kUserDefined);
  }
  // Gemma 4 and PLaMo have an ordinary "</s>".
  if (in_eog("</s>") && (in_eog("<|tool_response>") || in_eog("<|plamo:eos|>"))) {
    drop(find("</s>"), TokenType::kNormal);
  }
  v->eog_ids = std::move(eog);

  // Phi-3: special tokens eat the whitespace after them, except <unk>, <s> and <|endoftext|>.
  if (Contains(model_name, "phi-3") || Contains(model_name, "phi3")) {
    v->token_attrs.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
      const TokenType t = v->token_types[i];
      if (t == TokenType::kControl || t == TokenType::kUserDefined || t == TokenType::kUnknown) {
        v->token_attrs[i] |= kTokenAttrRstrip;
      }
    }
    if (const int32_t id = find("</s>"); id >= 0) v->token_attrs[id] |= kTokenAttrRstrip;
    for (const char* t : {"<unk>", "<s>", "<|endoftext|>"}) {
      if (const int32_t id = find(t); id >= 0) v->token_attrs[id] &= ~kTokenAttrRstrip;
    }
  }
}

}  // namespace

Status LoadVocab(const GgufFile& gguf, VocabData* out) {
  VocabData v;

  const GgufValue* model = gguf.Find("tokenizer.ggml.model");
  if (model == nullptr) {
    return BadFormat("tokenizer.ggml.model is missing: the file has no tokenizer");
  }
  if (model->type != GgufType::kString) {
    return BadFormat(std::string("tokenizer.ggml.model must be a string, found ") +
                     GgufTypeName(model->type));
  }
  v.model = std::string(model->str);
  const bool spm = v.model == "llama";
  const bool bpe = v.model == "gpt2";
  if (!spm && !bpe) {
    return Unsupported("tokenizer.ggml.model '" + v.model +
                       "' is not supported (ember implements 'llama' = SentencePiece and "
                       "'gpt2' = byte-level BPE)");
  }
  if (const GgufValue* pre = gguf.Find("tokenizer.ggml.pre")) {
    if (pre->type != GgufType::kString) {
      return BadFormat(std::string("tokenizer.ggml.pre must be a string, found ") +
                       GgufTypeName(pre->type));
    }
    v.pre = std::string(pre->str);
  }

  // Tokens.
  const GgufValue* tokens;
  EMBER_RETURN_IF_ERROR(FindArray(gguf, "tokenizer.ggml.tokens", true, &tokens));
  if (tokens->elem_type != GgufType::kString) {
    return BadFormat(std::string("tokenizer.ggml.tokens must be an array of strings, found ") +
                     GgufTypeName(tokens->elem_type) + " elements");
  }
  const size_t n = tokens->items.size();
  if (n == 0) return BadFormat("tokenizer.ggml.tokens is empty");
  if (n > static_cast<size_t>(INT32_MAX)) return BadFormat("tokenizer.ggml.tokens is too long");
  size_t text_bytes = 0;
  for (size_t i = 0; i < n; ++i) text_bytes += tokens->items[i].str.size();
  v.tokens.Reserve(n, text_bytes);
  for (size_t i = 0; i < n; ++i) {
    // llama.cpp renames empty tokens the same way (they could never be matched anyway).
    const std::string_view text = tokens->items[i].str;
    if (!v.tokens.Add(text.empty() ? std::string_view("[EMPTY_" + std::to_string(i) + "]")
                                   : text)) {
      return BadFormat("tokenizer.ggml.tokens holds more than 4 GiB of text");
    }
  }
  {
    // Token texts must be unique (llama.cpp refuses such files too): a text maps to one id.
    StringTableIndex first;
    first.Build(v.tokens);
    for (size_t i = 0; i < n; ++i) {
      const int32_t f = first.Find(v.tokens, v.tokens[i]);
      if (f != static_cast<int32_t>(i)) {
        return BadFormat("tokenizer.ggml.tokens: tokens " + std::to_string(f) + " and " +
                         std::to_string(i) + " have the same text '" + std::string(v.tokens[i]) +
                         "'");
      }
    }
  }

  // Scores (float32, or int32 as llama.cpp also accepts), optional.
  const GgufValue* scores;
  EMBER_RETURN_IF_ERROR(FindArray(gguf, "tokenizer.ggml.scores", false, &scores));
  if (scores != nullptr) {
    const bool is_float =
        scores->elem_type == GgufType::kFloat32 || scores->elem_type == GgufType::kFloat64;
    if (!is_float && !IsGgufIntegerType(scores->elem_type)) {
      return BadFormat(std::string("tokenizer.ggml.scores must hold numbers, found ") +
                       GgufTypeName(scores->elem_type) + " elements");
    }
    if (scores->items.size() < n) {
      return BadFormat("tokenizer.ggml.scores has " + std::to_string(scores->items.size()) +
                       " entries for " + std::to_string(n) + " tokens");
    }
    v.scores.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const GgufValue& s = scores->items[i];
      v.scores[i] = is_float ? static_cast<float>(s.f) : static_cast<float>(IntOf(s));
    }
  }

  // Token types, optional (normal when absent).
  const GgufValue* types;
  EMBER_RETURN_IF_ERROR(FindArray(gguf, "tokenizer.ggml.token_type", false, &types));
  v.token_types.assign(n, TokenType::kNormal);
  if (types != nullptr) {
    if (!IsGgufIntegerType(types->elem_type)) {
      return BadFormat(std::string("tokenizer.ggml.token_type must hold integers, found ") +
                       GgufTypeName(types->elem_type) + " elements");
    }
    if (types->items.size() < n) {
      return BadFormat("tokenizer.ggml.token_type has " + std::to_string(types->items.size()) +
                       " entries for " + std::to_string(n) + " tokens");
    }
    for (size_t i = 0; i < n; ++i) {
      const int64_t t = IntOf(types->items[i]);
      // Values outside the enum are "undefined", as in llama.cpp.
      v.token_types[i] = t >= 1 && t <= 6 ? static_cast<TokenType>(t) : TokenType::kUndefined;
    }
  }

  // Merges (BPE only).
  if (bpe) {
    const GgufValue* merges;
    EMBER_RETURN_IF_ERROR(FindArray(gguf, "tokenizer.ggml.merges", true, &merges));
    if (merges->elem_type != GgufType::kString) {
      return BadFormat(std::string("tokenizer.ggml.merges must be an array of strings, found ") +
                       GgufTypeName(merges->elem_type) + " elements");
    }
    size_t merge_bytes = 0;
    for (const GgufValue& m : merges->items) merge_bytes += m.str.size();
    v.merges.Reserve(merges->items.size(), merge_bytes);
    for (const GgufValue& m : merges->items) {
      if (!v.merges.Add(m.str))
        return BadFormat("tokenizer.ggml.merges holds more than 4 GiB of text");
    }
  }

  // Defaults per model type, as llama.cpp sets them before reading the keys.
  internal::BpePreDefaults pre{};
  if (spm) {
    v.bos_id = 1;
    v.eos_id = 2;
    v.unk_id = 0;
    v.add_bos = true;
    v.add_space_prefix = true;
  } else {
    if (!internal::FindBpePreDefaults(v.pre, &pre)) {
      return Unsupported("tokenizer.ggml.pre '" + v.pre +
                         "' names a BPE pre-tokenizer ember does not implement");
    }
    // llama.cpp's BPE default ids are 11 (Falcon's), used when a file names none.
    v.bos_id = pre.no_bos ? -1 : 11;
    v.eos_id = 11;
    v.add_bos = pre.add_bos;
    v.add_space_prefix = false;
    v.clean_spaces = pre.clean_spaces;
  }
  for (int32_t* id : {&v.bos_id, &v.eos_id, &v.unk_id}) {
    if (*id >= 0 && static_cast<size_t>(*id) >= n) *id = -1;  // a default out of range: none
  }
  EMBER_RETURN_IF_ERROR(ReadIdKey(gguf, "tokenizer.ggml.bos_token_id", n, &v.bos_id));
  EMBER_RETURN_IF_ERROR(ReadIdKey(gguf, "tokenizer.ggml.eos_token_id", n, &v.eos_id));
  EMBER_RETURN_IF_ERROR(ReadIdKey(gguf, "tokenizer.ggml.eot_token_id", n, &v.eot_id));
  EMBER_RETURN_IF_ERROR(ReadIdKey(gguf, "tokenizer.ggml.eom_token_id", n, &v.eom_id));
  EMBER_RETURN_IF_ERROR(ReadIdKey(gguf, "tokenizer.ggml.unknown_token_id", n, &v.unk_id));
  EMBER_RETURN_IF_ERROR(ReadIdKey(gguf, "tokenizer.ggml.padding_token_id", n, &v.pad_id));
  EMBER_RETURN_IF_ERROR(ReadBoolKey(gguf, "tokenizer.ggml.add_bos_token", &v.add_bos));
  EMBER_RETURN_IF_ERROR(ReadBoolKey(gguf, "tokenizer.ggml.add_eos_token", &v.add_eos));
  EMBER_RETURN_IF_ERROR(ReadBoolKey(gguf, "tokenizer.ggml.add_space_prefix", &v.add_space_prefix));

  int32_t fim[kNumFim] = {-1, -1, -1, -1, -1, -1};
  // The deprecated prefix/suffix/middle keys come after the new ones and win, as in llama.cpp.
  const std::pair<const char*, Fim> fim_keys[] = {
      {"tokenizer.ggml.fim_pre_token_id", kFimPre}, {"tokenizer.ggml.fim_suf_token_id", kFimSuf},
      {"tokenizer.ggml.fim_mid_token_id", kFimMid}, {"tokenizer.ggml.fim_pad_token_id", kFimPad},
      {"tokenizer.ggml.fim_rep_token_id", kFimRep}, {"tokenizer.ggml.fim_sep_token_id", kFimSep},
      {"tokenizer.ggml.prefix_token_id", kFimPre},  {"tokenizer.ggml.suffix_token_id", kFimSuf},
      {"tokenizer.ggml.middle_token_id", kFimMid}};
  for (const auto& [key, k] : fim_keys) EMBER_RETURN_IF_ERROR(ReadIdKey(gguf, key, n, &fim[k]));

  std::string name = gguf.GetStringOr("general.name", "");
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  ApplyLlamaCppFixes(name, fim, &v);
  // The end-of-turn markers of the model's own chat template end generation too.
  const std::string tmpl = gguf.GetStringOr("tokenizer.chat_template", "");
  for (const std::string& m : FindChatEndMarkers(tmpl)) {
    int32_t id = -1;
    if (m == "eos_token") continue;  // EOS always ends generation
    for (size_t i = 0; i < v.tokens.size(); ++i) {
      if (v.tokens[i] == m) {
        id = static_cast<int32_t>(i);
        break;
      }
    }
    const bool special =
        id >= 0 && (v.token_types[static_cast<size_t>(id)] == TokenType::kControl ||
                    v.token_types[static_cast<size_t>(id)] == TokenType::kUserDefined);
    if (special && std::count(v.eog_ids.begin(), v.eog_ids.end(), id) == 0) {
      v.eog_ids.push_back(id);
    }
  }

  *out = std::move(v);
  return Status::Ok();
}

}  // namespace ember
