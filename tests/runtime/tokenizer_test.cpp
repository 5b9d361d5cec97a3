// Tokenizers against llama.cpp: the ggml-vocab-*.gguf test vocabularies with llama.cpp's
// expected ids (test-tokenizer-0 data), round trips, special tokens, streaming UTF-8.
#include "runtime/text/tokenizer.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/gguf/gguf.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

std::string VocabPath(const std::string& name) {
  return test::SharedDir() + "/vocab/ggml-vocab-" + name + ".gguf";
}

std::unique_ptr<Tokenizer> LoadTokenizer(const std::string& path) {
  std::unique_ptr<GgufFile> f;
  Status s = GgufFile::Open(path, &f);
  INFO(path << ": " << s.message());
  REQUIRE(s.ok());
  VocabData v;
  s = LoadVocab(*f, &v);
  INFO(s.message());
  REQUIRE(s.ok());
  std::unique_ptr<Tokenizer> tok;
  s = Tokenizer::Create(std::move(v), &tok);
  INFO(s.message());
  REQUIRE(s.ok());
  return tok;
}

// The .inp file holds the cases separated by lines "__ggml_vocab_test__"; a case is the text
// between two separator lines without the newline that ends it (so "\n" as a case is an empty
// line). The file ends with a separator line.
std::vector<std::string> ReadCases(const std::string& path) {
  const std::string text = test::ReadFile(path);
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> cases;
  size_t pos = 0;
  while (true) {
    const size_t next = text.find(sep, pos);
    if (next == std::string::npos) break;
    cases.push_back(text.substr(pos, next - pos));
    pos = next + sep.size();
  }
  return cases;
}

std::vector<std::vector<int32_t>> ReadExpected(const std::string& path) {
  std::istringstream in(test::ReadFile(path));
  std::vector<std::vector<int32_t>> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::vector<int32_t> ids;
    int32_t id;
    while (ls >> id) ids.push_back(id);
    out.push_back(ids);
  }
  return out;
}

std::string Join(const std::vector<int32_t>& ids) {
  std::string s;
  for (const int32_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

std::string Pieces(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  std::string s;
  for (const int32_t id : ids) s += tok.TokenToPiece(id, true);
  return s;
}

const char* const kVocabs[] = {"llama-spm",      "phi-3",     "gpt-2", "starcoder",
                               "deepseek-coder", "llama-bpe", "qwen2", "qwen35"};

// Emoji (4-byte), CJK, Cyrillic, Greek, combining marks, Devanagari, Arabic, tabs, newlines
// and runs of spaces. No " ," / " ." / " '" so that BPE space clean-up leaves it unchanged.
const char kMultilingual[] =
    "Hello world! \xF0\x9F\x98\x80\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD caf\xC3\xA9 na\xC3\xAF"
    "ve \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xAE\xE3\x83\x86\xE3\x82\xAD\xE3\x82\xB9"
    "\xE3\x83\x88 \xE4\xB8\xAD\xE6\x96\x87\xE5\xAD\x97 \xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5"
    "\xD1\x82, \xCE\xBA\xCF\x8C\xCF\x83\xCE\xBC\xCE\xB5!\n\tTabs\tand   spaces   \n\n"
    "e\xCC\x81 \xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8\xE0\xA5\x8D\xE0\xA4\xA4\xE0\xA5\x87 "
    "\xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7 12345 3.14159 x=y+z; \xE2\x82\xAC"
    "100 "
    "\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7 end";

}  // namespace

TEST_CASE("tokenizer: every ggml-vocab test case gives llama.cpp's ids", "[tokenizer]") {
  for (const char* name : kVocabs) {
    const std::string path = VocabPath(name);
    if (!test::FileExists(path)) {
      WARN("missing " << path);
      continue;
    }
    auto tok = LoadTokenizer(path);
    const auto cases = ReadCases(path + ".inp");
    const auto expected = ReadExpected(path + ".out");
    INFO(name);
    REQUIRE(cases.size() == expected.size());
    REQUIRE(!cases.empty());
    size_t pass = 0;
    std::string failures;
    for (size_t i = 0; i < cases.size(); ++i) {
      const std::vector<int32_t> got = tok->Encode(cases[i], false, false);
      if (got == expected[i]) {
        ++pass;
      } else if (failures.size() < 4000) {
        failures += "\n  case " + std::to_string(i) + " \"" + cases[i] + "\"\n    want " +
                    Join(expected[i]) + "\n    got  " + Join(got);
      }
    }
    INFO(name << ": " << pass << "/" << cases.size() << " cases match" << failures);
    CHECK(pass == cases.size());
  }
}

TEST_CASE("tokenizer: encode then decode gives the text back", "[tokenizer]") {
  const std::string gpl = test::ReadFile("/usr/share/common-licenses/GPL-3");
  for (const char* name : kVocabs) {
    const std::string path = VocabPath(name);
    if (!test::FileExists(path)) continue;
    auto tok = LoadTokenizer(path);
    INFO(name);
    for (const std::string& text : {gpl, std::string(kMultilingual)}) {
      if (text.empty()) continue;
      const std::vector<int32_t> ids = tok->Encode(text, false, false);
      REQUIRE(!ids.empty());
      // Decode drops the space SPM put in front (as llama_detokenize does); the raw pieces
      // still carry it.
      CHECK(tok->Decode(ids) == text);
      const bool spm = tok->vocab().model == "llama";
      CHECK(Pieces(*tok, ids) == (spm ? " " + text : text));
    }
  }
}

TEST_CASE("tokenizer: BOS and EOS follow the vocabulary's flags", "[tokenizer]") {
  if (!test::FileExists(VocabPath("llama-spm"))) EMBER_SKIP("no test vocabularies");
  {
    auto tok = LoadTokenizer(VocabPath("llama-spm"));
    CHECK(tok->vocab().add_bos);
    CHECK_FALSE(tok->vocab().add_eos);
    const auto with = tok->Encode("Hello world", true, false);
    const auto without = tok->Encode("Hello world", false, false);
    REQUIRE(with.size() == without.size() + 1);
    CHECK(with[0] == 1);
    CHECK(std::vector<int32_t>(with.begin() + 1, with.end()) == without);
    CHECK(tok->Encode("", true, false) == std::vector<int32_t>{1});
    CHECK(tok->Encode("", false, false).empty());
    CHECK(tok->IsEndOfGeneration(2));
    CHECK_FALSE(tok->IsEndOfGeneration(1));
    // Decode after BOS keeps the leading space, as llama.cpp's does.
    CHECK(tok->Decode(with) == " Hello world");
    CHECK(tok->Decode(without) == "Hello world");
    CHECK(tok->Decode(with, true) == "<s> Hello world");
  }
  {
    auto tok = LoadTokenizer(VocabPath("gpt-2"));
    CHECK_FALSE(tok->vocab().add_bos);
    CHECK(tok->Encode("Hello world", true, false) == tok->Encode("Hello world", false, false));
    CHECK(tok->IsEndOfGeneration(50256));
    CHECK_FALSE(tok->IsEndOfGeneration(15496));
    CHECK(tok->TokenToPiece(50256, false).empty());
    CHECK(tok->TokenToPiece(50256, true) == "<|endoftext|>");
    // llama.cpp's space clean-up on decode, on for the gpt-2 pre-tokenizer.
    CHECK(tok->Decode(tok->Encode("Hello , world ! It 's", false, false)) == "Hello, world! It's");
  }
  {
    auto tok = LoadTokenizer(VocabPath("deepseek-coder"));
    const auto ids = tok->Encode("int x;", true, false);
    REQUIRE(!ids.empty());
    CHECK(ids[0] == 32013);
    CHECK(tok->IsEndOfGeneration(32014));
  }
  {
    auto tok = LoadTokenizer(VocabPath("phi-3"));
    CHECK(tok->IsEndOfGeneration(32000));  // <|endoftext|> (eos)
    CHECK(tok->IsEndOfGeneration(32007));  // <|end|>, by name
    CHECK(tok->IsEndOfGeneration(2));      // </s>, by name
    CHECK_FALSE(tok->IsEndOfGeneration(32010));
  }
}

TEST_CASE("tokenizer: special tokens are parsed only when asked", "[tokenizer]") {
  if (!test::FileExists(VocabPath("starcoder"))) EMBER_SKIP("no test vocabularies");
  {
    auto tok = LoadTokenizer(VocabPath("starcoder"));
    const auto plain = tok->Encode("def f():", false, false);
    const auto parsed = tok->Encode("<fim_prefix>def f():<fim_suffix>", false, true);
    std::vector<int32_t> want{1};
    want.insert(want.end(), plain.begin(), plain.end());
    want.push_back(3);
    CHECK(parsed == want);
    const auto unparsed = tok->Encode("<fim_prefix>def f():", false, false);
    CHECK(std::count(unparsed.begin(), unparsed.end(), 1) == 0);
    CHECK(tok->Decode(unparsed) == "<fim_prefix>def f():");
    // Rendered back only when asked.
    CHECK(tok->Decode(parsed) == "def f():");
    CHECK(tok->Decode(parsed, true) == "<fim_prefix>def f():<fim_suffix>");
  }
  {
    // User-defined tokens are split out even without parse_special (llama.cpp and HF do).
    auto tok = LoadTokenizer(VocabPath("deepseek-coder"));
    const auto ids = tok->Encode("<|User|>hi", false, false);
    REQUIRE(!ids.empty());
    CHECK(ids[0] == 32019);
    // The control token BOS only with parse_special.
    const std::string bos =
        "<\xEF\xBD\x9C"
        "begin\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>";
    CHECK(tok->Encode(bos, false, true) == std::vector<int32_t>{32013});
    CHECK(tok->Encode(bos, false, false).size() > 1);
  }
  {
    // SPM: a text fragment after a special token gets the space prefix again; Phi-3's special
    // tokens eat the whitespace after them (llama.cpp's rstrip attribute for Phi-3).
    auto tok = LoadTokenizer(VocabPath("phi-3"));
    const auto ids = tok->Encode("<|user|>\nHello<|end|>\n<|assistant|>", true, true);
    const std::vector<int32_t> want{1, 32010, 15043, 32007, 32001};
    CHECK(ids == want);
  }
}

TEST_CASE("tokenizer: Utf8Stream holds back unfinished characters", "[tokenizer]") {
  Utf8Stream s;
  const std::string emoji = "\xF0\x9F\x98\x80";
  CHECK(s.Push(emoji.substr(0, 1)).empty());
  CHECK(s.Push(emoji.substr(1, 1)).empty());
  CHECK(s.Push(emoji.substr(2, 1)).empty());
  CHECK(s.Push(emoji.substr(3, 1)) == emoji);
  CHECK(s.Flush().empty());

  CHECK(s.Push("ab\xE6\x97") == "ab");
  CHECK(s.Push("\xA5"
               "c") ==
        "\xE6\x97\xA5"
        "c");
  // Invalid bytes become U+FFFD at once; an unfinished tail becomes one U+FFFD on Flush.
  CHECK(s.Push("x\xFFy") == "x\xEF\xBF\xBDy");
  CHECK(s.Push("\xC3\x28") == "\xEF\xBF\xBD(");
  CHECK(s.Push("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  CHECK(s.Push("z\xE6\x97").size() == 1);
  CHECK(s.Flush() == "\xEF\xBF\xBD");
  CHECK(s.Flush().empty());
}

TEST_CASE("tokenizer: invalid UTF-8 is tokenized without crashing", "[tokenizer]") {
  for (const char* name : kVocabs) {
    const std::string path = VocabPath(name);
    if (!test::FileExists(path)) continue;
    auto tok = LoadTokenizer(path);
    INFO(name);
    const std::string bad =
        "ok \xFF\xFE broken \xE6\x97 tail \xC0\x80 \xF4\x90\x80\x80 \xED\xA0\x80";
    const auto ids = tok->Encode(bad, true, true);
    CHECK(!ids.empty());
    for (const int32_t id : ids) CHECK((id >= 0 && id < tok->n_vocab()));
  }
  // SPM keeps malformed bytes as byte tokens, as llama.cpp does.
  if (test::FileExists(VocabPath("llama-spm"))) {
    auto tok = LoadTokenizer(VocabPath("llama-spm"));
    const auto ids = tok->Encode("a\xFF", false, false);
    CHECK(Pieces(*tok, ids) == " a\xFF");
  }
}

TEST_CASE("tokenizer: SmolLM2 (smollm pre-tokenizer) matches llama.cpp", "[tokenizer]") {
  const std::string path = test::ModelPath("SmolLM2-135M-Instruct.Q4_1.gguf");
  if (path.empty()) EMBER_SKIP("SmolLM2-135M-Instruct.Q4_1.gguf not in the model cache");
  auto tok = LoadTokenizer(path);
  CHECK(tok->vocab().model == "gpt2");
  CHECK(tok->vocab().pre == "smollm");
  CHECK(tok->n_vocab() == 49152);
  CHECK_FALSE(tok->vocab().add_bos);
  CHECK_FALSE(tok->vocab().clean_spaces);
  // Ids from llama.cpp's llama-tokenize on the same file.
  CHECK(tok->Encode("Hello world 1234 <|im_start|>user", false, true) ==
        std::vector<int32_t>{19556, 905, 216, 33, 34, 35, 36, 216, 1, 4093});
  CHECK(tok->Encode("<|im_start|>user", false, false) != std::vector<int32_t>{1, 4093});
  const int32_t im_end = tok->Encode("<|im_end|>", false, true).at(0);
  CHECK(tok->IsEndOfGeneration(im_end));
  // GPL-3 through llama-tokenize (--no-bos): 7639 ids; first and last ones and a hash of all.
  const std::string gpl = test::ReadFile("/usr/share/common-licenses/GPL-3");
  if (gpl.size() != 35149) return;  // another version of the file
  const std::vector<int32_t> ids = tok->Encode(gpl, false, true);
  REQUIRE(ids.size() == 7639);
  CHECK(std::vector<int32_t>(ids.begin(), ids.begin() + 12) ==
        std::vector<int32_t>{42185, 28807, 35185, 49126, 35696, 45581, 41026, 16997, 13867, 216, 35,
                             28});
  CHECK(std::vector<int32_t>(ids.end() - 6, ids.end()) ==
        std::vector<int32_t>{87, 439, 30, 5699, 19369, 198});
  uint64_t h = 0;
  for (const int32_t id : ids) h = h * 1000003u + static_cast<uint64_t>(id);
  CHECK(h == 3431049110681978250ull);
  CHECK(tok->Decode(ids) == gpl);
}
