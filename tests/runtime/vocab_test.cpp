// LoadVocab: llama.cpp's defaults and fixes on the test vocabularies, clear errors on bad
// metadata; Tokenizer::Create on hand-built vocabularies.
#include <catch2/catch.hpp>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/gguf/gguf.h"
#include "runtime/gguf/gguf_writer.h"
#include "runtime/text/tokenizer.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

std::string VocabPath(const std::string& name) {
  return test::SharedDir() + "/vocab/ggml-vocab-" + name + ".gguf";
}

VocabData Load(const std::string& path) {
  std::unique_ptr<GgufFile> f;
  Status s = GgufFile::Open(path, &f);
  INFO(s.message());
  REQUIRE(s.ok());
  VocabData v;
  s = LoadVocab(*f, &v);
  INFO(s.message());
  REQUIRE(s.ok());
  return v;
}

// A small byte-level BPE vocabulary: the 256 GPT-2 byte characters, a few merges.
std::vector<std::string> ByteTokens() {
  std::vector<std::string> t;
  uint32_t next = 256;  // GPT-2 maps the unprintable bytes to U+0100.. in order
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    const uint32_t cp = printable ? static_cast<uint32_t>(b) : next++;
    std::string s;
    if (cp < 0x80) {
      s.push_back(static_cast<char>(cp));
    } else {
      s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
    t.push_back(s);
  }
  return t;
}

// Writes a GPT-2 style vocabulary; `edit` changes the writer before serialising.
Status LoadFromWriter(const std::function<void(GgufWriter&)>& edit, VocabData* v,
                      std::vector<uint8_t>* keep) {
  GgufWriter w;
  edit(w);
  *keep = w.Serialize();
  std::unique_ptr<GgufFile> f;
  EMBER_RETURN_IF_ERROR(GgufFile::Parse(keep->data(), keep->size(), &f));
  return LoadVocab(*f, v);
}

void Bpe(GgufWriter& w, const char* model, const char* pre) {
  std::vector<std::string> toks = ByteTokens();
  toks.push_back("ab");
  toks.push_back("abc");
  toks.push_back("<|endoftext|>");
  w.SetString("tokenizer.ggml.model", model);
  w.SetString("tokenizer.ggml.pre", pre);
  w.SetStringArray("tokenizer.ggml.tokens", toks);
  std::vector<int32_t> types(toks.size(), 1);
  types.back() = 3;
  w.SetInt32Array("tokenizer.ggml.token_type", types);
  w.SetStringArray("tokenizer.ggml.merges", {"a b", "ab c"});
  w.SetUint32("tokenizer.ggml.eos_token_id", 258);
}

void GoodBpe(GgufWriter& w) { Bpe(w, "gpt2", "gpt-2"); }

void CheckBad(const std::function<void(GgufWriter&)>& edit, Code code, const std::string& needle) {
  VocabData v;
  std::vector<uint8_t> bytes;
  Status s = LoadFromWriter(edit, &v, &bytes);
  INFO("status: " << s.message());
  CHECK_FALSE(s.ok());
  CHECK(s.code() == code);
  CHECK(s.message().find(needle) != std::string::npos);
}

}  // namespace

TEST_CASE("vocab: test vocabularies load with llama.cpp's defaults", "[vocab]") {
  if (!test::FileExists(VocabPath("gpt-2"))) EMBER_SKIP("no test vocabularies");
  {
    VocabData v = Load(VocabPath("llama-spm"));
    CHECK(v.model == "llama");
    CHECK(v.tokens.size() == 32000);
    CHECK(v.scores.size() == 32000);
    CHECK(v.token_types[0] == TokenType::kUnknown);
    CHECK(v.token_types[1] == TokenType::kControl);
    CHECK(v.token_types[3] == TokenType::kByte);
    CHECK(v.bos_id == 1);
    CHECK(v.eos_id == 2);
    CHECK(v.unk_id == 0);
    CHECK(v.add_bos);
    CHECK_FALSE(v.add_eos);
    CHECK(v.add_space_prefix);
    CHECK_FALSE(v.clean_spaces);
  }
  {
    VocabData v = Load(VocabPath("gpt-2"));
    CHECK(v.model == "gpt2");
    CHECK(v.pre == "gpt-2");
    CHECK(v.tokens.size() == 50257);
    CHECK(v.merges.size() == 50000);
    CHECK(v.bos_id == 50256);
    CHECK(v.eos_id == 50256);
    CHECK(v.unk_id == -1);
    CHECK_FALSE(v.add_bos);
    CHECK_FALSE(v.add_space_prefix);
    CHECK(v.clean_spaces);
  }
  {
    VocabData v = Load(VocabPath("deepseek-coder"));
    CHECK_FALSE(v.clean_spaces);
    CHECK(v.add_bos);
    // FIM tokens are user-defined in the file; llama.cpp finds them by name and makes them
    // control tokens (so plain text never turns into them).
    CHECK(v.token_types[32015] == TokenType::kControl);      // <｜fim▁hole｜>
    CHECK(v.token_types[32019] == TokenType::kUserDefined);  // <|User|>
  }
  {
    VocabData v = Load(VocabPath("phi-3"));
    CHECK(v.eos_id == 32000);
    CHECK(v.eot_id == 32007);  // <|end|>, the candidate llama.cpp picks
    REQUIRE(v.token_attrs.size() == v.tokens.size());
    CHECK((v.token_attrs[32010] & kTokenAttrRstrip) != 0);  // <|user|>
    CHECK((v.token_attrs[32000] & kTokenAttrRstrip) == 0);  // <|endoftext|>
    CHECK((v.token_attrs[1] & kTokenAttrRstrip) == 0);      // <s>
  }
}

TEST_CASE("vocab: a small GPT-2 vocabulary loads and merges by rank", "[vocab]") {
  VocabData v;
  std::vector<uint8_t> bytes;
  Status s = LoadFromWriter(GoodBpe, &v, &bytes);
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(v.bos_id == 11);  // llama.cpp's BPE default when the file names none
  CHECK(v.eos_id == 258);
  CHECK(v.eog_ids == std::vector<int32_t>{258});  // <|endoftext|> by name
  std::unique_ptr<Tokenizer> tok;
  s = Tokenizer::Create(v, &tok);
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(tok->Encode("abc", false, false) == std::vector<int32_t>{257});
  CHECK(tok->Encode("abd", false, false) == std::vector<int32_t>{256, 'd'});
  // " ab" is one pre-token, "Ġab" after byte mapping; there is no merge "Ġ ab", so it stays
  // "Ġ" (the token of byte 0x20) and "ab".
  CHECK(tok->Encode("ab ab", false, false) == std::vector<int32_t>{256, ' ', 256});
  CHECK(tok->Encode("x<|endoftext|>", false, true) == std::vector<int32_t>{'x', 258});
  CHECK(tok->IsEndOfGeneration(258));
  CHECK(tok->Decode({256, 257}) == "ababc");
}

TEST_CASE("vocab: bad tokenizer metadata gives errors that name the key", "[vocab]") {
  CheckBad([](GgufWriter& w) { w.SetString("general.architecture", "llama"); }, Code::kBadFormat,
           "tokenizer.ggml.model");
  CheckBad([](GgufWriter& w) { Bpe(w, "bert", "gpt-2"); }, Code::kUnsupported, "'bert'");
  CheckBad([](GgufWriter& w) { Bpe(w, "gpt2", "no-such-pre"); }, Code::kUnsupported,
           "'no-such-pre'");
  CheckBad(
      [](GgufWriter& w) {
        w.SetString("tokenizer.ggml.model", "gpt2");
        w.SetStringArray("tokenizer.ggml.merges", {"a b"});
      },
      Code::kBadFormat, "tokenizer.ggml.tokens");
  CheckBad(
      [](GgufWriter& w) {
        w.SetString("tokenizer.ggml.model", "llama");
        w.SetInt32Array("tokenizer.ggml.tokens", {1, 2, 3});
      },
      Code::kBadFormat, "tokenizer.ggml.tokens");
  CheckBad(
      [](GgufWriter& w) {
        GoodBpe(w);
        w.SetUint32("tokenizer.ggml.bos_token_id", 100000);
      },
      Code::kBadFormat, "tokenizer.ggml.bos_token_id");
  CheckBad(
      [](GgufWriter& w) {
        GoodBpe(w);
        w.SetUint32("tokenizer.ggml.padding_token_id", 259);
      },
      Code::kBadFormat, "tokenizer.ggml.padding_token_id");
  CheckBad(
      [](GgufWriter& w) {
        w.SetString("tokenizer.ggml.model", "gpt2");
        w.SetString("tokenizer.ggml.pre", "gpt-2");
        w.SetStringArray("tokenizer.ggml.tokens", {"a", "b"});
      },
      Code::kBadFormat, "tokenizer.ggml.merges");
  CheckBad(
      [](GgufWriter& w) {
        w.SetString("tokenizer.ggml.model", "llama");
        w.SetStringArray("tokenizer.ggml.tokens", {"<unk>", "a", "b"});
        w.SetFloat32Array("tokenizer.ggml.scores", {0.0f, -1.0f});
      },
      Code::kBadFormat, "tokenizer.ggml.scores");
  CheckBad(
      [](GgufWriter& w) {
        w.SetString("tokenizer.ggml.model", "llama");
        w.SetStringArray("tokenizer.ggml.tokens", {"<unk>", "a", "b"});
        w.SetInt32Array("tokenizer.ggml.token_type", {2, 1});
      },
      Code::kBadFormat, "tokenizer.ggml.token_type");
  CheckBad(
      [](GgufWriter& w) {
        w.SetString("tokenizer.ggml.model", "llama");
        w.SetStringArray("tokenizer.ggml.tokens", {"<unk>", "a", "a"});
      },
      Code::kBadFormat, "same text");
  CheckBad(
      [](GgufWriter& w) {
        GoodBpe(w);
        w.SetString("tokenizer.ggml.add_bos_token", "yes");
      },
      Code::kBadFormat, "tokenizer.ggml.add_bos_token");
}

TEST_CASE("vocab: Create rejects what it cannot tokenize", "[vocab]") {
  VocabData v;
  std::vector<uint8_t> bytes;
  REQUIRE(LoadFromWriter(GoodBpe, &v, &bytes).ok());
  std::unique_ptr<Tokenizer> tok;
  {
    VocabData bad = v;
    bad.model = "t5";
    Status s = Tokenizer::Create(bad, &tok);
    CHECK(s.code() == Code::kUnsupported);
    CHECK(s.message().find("'t5'") != std::string::npos);
  }
  {
    VocabData bad = v;
    bad.pre = "kimi-k2";  // llama.cpp has it; ember does not (custom code, no regex)
    Status s = Tokenizer::Create(bad, &tok);
    CHECK(s.code() == Code::kUnsupported);
    CHECK(s.message().find("'kimi-k2'") != std::string::npos);
  }
  {
    VocabData bad = v;
    bad.bos_id = static_cast<int32_t>(bad.tokens.size());
    CHECK(Tokenizer::Create(bad, &tok).code() == Code::kInvalidArgument);
  }
  {
    VocabData bad = v;
    bad.tokens.Clear();
    CHECK(Tokenizer::Create(bad, &tok).code() == Code::kInvalidArgument);
  }
  {
    VocabData bad = v;
    bad.token_types.pop_back();
    CHECK(Tokenizer::Create(bad, &tok).code() == Code::kInvalidArgument);
  }
}

TEST_CASE("vocab: every implemented pre-tokenizer builds", "[vocab]") {
  VocabData v;
  std::vector<uint8_t> bytes;
  REQUIRE(LoadFromWriter(GoodBpe, &v, &bytes).ok());
  for (const char* pre : {"default",
                          "",
                          "gpt-2",
                          "llama3",
                          "llama-bpe",
                          "deepseek-llm",
                          "deepseek-coder",
                          "deepseek-v3",
                          "falcon",
                          "starcoder",
                          "smollm",
                          "refact",
                          "command-r",
                          "qwen2",
                          "qwen35",
                          "olmo",
                          "dbrx",
                          "gpt-4o",
                          "tekken",
                          "stablelm2",
                          "poro-chat",
                          "bloom",
                          "viking",
                          "chameleon",
                          "chatglm-bpe",
                          "glm4",
                          "seed-coder",
                          "bailingmoe",
                          "ufakzeka",
                          "laguna",
                          "minicpm5",
                          "jais-2",
                          "granite-embed-multi-97m",
                          "exaone",
                          "mpt",
                          "jais",
                          "megrez"}) {
    INFO("pre '" << pre << "'");
    internal::BpePreDefaults d;
    CHECK(internal::FindBpePreDefaults(pre, &d));
    VocabData x = v;
    x.pre = pre;
    std::unique_ptr<Tokenizer> tok;
    Status s = Tokenizer::Create(x, &tok);
    INFO(s.message());
    REQUIRE(s.ok());
    CHECK(tok->Decode(tok->Encode("abc 123 ab", false, false)) == "abc 123 ab");
  }
  internal::BpePreDefaults d;
  CHECK_FALSE(internal::FindBpePreDefaults("superbpe", &d));
}

TEST_CASE("vocab: a hand-built SentencePiece vocabulary merges by score", "[vocab]") {
  VocabData v;
  v.model = "llama";
  auto add = [&](const std::string& t, float score, TokenType type) {
    v.tokens.Add(t);
    v.scores.push_back(score);
    v.token_types.push_back(type);
  };
  add("<unk>", 0, TokenType::kUnknown);
  add("<s>", 0, TokenType::kControl);
  add("</s>", 0, TokenType::kControl);
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "<0x%02X>", b);
    add(hex, 0, TokenType::kByte);
  }
  const std::string sp = "\xE2\x96\x81";
  add(sp, -1, TokenType::kNormal);         // 259
  add("a", -2, TokenType::kNormal);        // 260
  add("b", -2, TokenType::kNormal);        // 261
  add(sp + "a", -3, TokenType::kNormal);   // 262
  add("ab", -1.5f, TokenType::kNormal);    // 263: scores higher than "▁a", so wins
  add(sp + "ab", -4, TokenType::kNormal);  // 264
  v.bos_id = 1, v.eos_id = 2, v.unk_id = 0;
  v.add_bos = true;
  std::unique_ptr<Tokenizer> tok;
  Status s = Tokenizer::Create(v, &tok);
  INFO(s.message());
  REQUIRE(s.ok());
  // "▁ab": "ab" (-1.5) merges before "▁a" (-3), then "▁" + "ab" = "▁ab" (-4).
  CHECK(tok->Encode("ab", false, false) == std::vector<int32_t>{264});
  CHECK(tok->Encode("ab", true, false) == std::vector<int32_t>{1, 264});
  // "é" is no piece: byte fallback.
  CHECK(tok->Encode("\xC3\xA9", false, false) == std::vector<int32_t>{259, 3 + 0xC3, 3 + 0xA9});
  CHECK(tok->Decode(tok->Encode("ab \xC3\xA9", false, false)) == "ab \xC3\xA9");
  CHECK(tok->Encode("<s>ab", false, true) == std::vector<int32_t>{1, 264});
}
