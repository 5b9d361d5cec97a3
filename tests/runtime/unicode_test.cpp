// Code point classes, UTF-8 handling, GPT-2 byte mapping and the pre-tokenizer regex engine.
#include "runtime/text/unicode.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace ember;
using namespace ember::unicode;

namespace {

std::vector<std::string> SplitAll(const std::string& pattern, const std::string& text) {
  Regex re;
  Status s = Regex::Compile(pattern, &re);
  INFO(s.message());
  REQUIRE(s.ok());
  const std::vector<uint32_t> cps = DecodeUtf8Lenient(text);
  std::vector<std::string> out;
  size_t start = 0;
  for (const size_t len : re.Split(cps, {cps.size()})) {
    std::string w;
    for (size_t i = start; i < start + len; ++i) AppendUtf8(cps[i], &w);
    out.push_back(w);
    start += len;
  }
  return out;
}

using Words = std::vector<std::string>;

}  // namespace

TEST_CASE("unicode: categories and whitespace", "[tokenizer]") {
  CHECK(std::string(UnicodeVersion()) == "15.1.0");
  CHECK(GetCategory('A') == Category::kLetter);
  CHECK(GetCategory('7') == Category::kNumber);
  CHECK(GetCategory('!') == Category::kPunctuation);
  CHECK(GetCategory('$') == Category::kSymbol);
  CHECK(GetCategory(0x0301) == Category::kMark);     // combining acute
  CHECK(GetCategory(0x4E2D) == Category::kLetter);   // 中
  CHECK(GetCategory(0x00BD) == Category::kNumber);   // ½
  CHECK(GetCategory(0x1F600) == Category::kSymbol);  // 😀
  CHECK(GetCategory(0xE000) == Category::kControl);  // private use
  CHECK(GetCategory(0x0378) == Category::kUnassigned);
  CHECK(GetCategory(0x31EF) == Category::kSymbol);  // new in Unicode 15.1
  CHECK(GetCategory(0x110000) == Category::kUnassigned);
  for (uint32_t c : {0x09u, 0x0Au, 0x0Bu, 0x0Cu, 0x0Du, 0x20u, 0x85u, 0xA0u, 0x2000u, 0x3000u}) {
    CHECK(IsWhitespace(c));
  }
  for (uint32_t c : {0x1Cu, 0x1Fu, 0x200Bu, 0xFEFFu, 0x61u}) CHECK_FALSE(IsWhitespace(c));
}

TEST_CASE("unicode: UTF-8 decoding and checking", "[tokenizer]") {
  CHECK(DecodeUtf8Lenient("a\xE6\x97\xA5\xF0\x9F\x98\x80") ==
        std::vector<uint32_t>{'a', 0x65E5, 0x1F600});
  // Bad or missing continuation bytes: U+FFFD for the lead byte, then go on.
  CHECK(DecodeUtf8Lenient("\xFF"
                          "a") == std::vector<uint32_t>{0xFFFD, 'a'});
  CHECK(DecodeUtf8Lenient("\xE6\x97") == std::vector<uint32_t>{0xFFFD, 0xFFFD});
  CHECK(DecodeUtf8Lenient("\xC3(") == std::vector<uint32_t>{0xFFFD, '('});
  // llama.cpp does not check overlong forms; neither do we (they decode as written).
  CHECK(DecodeUtf8Lenient("\xC0\x80") == std::vector<uint32_t>{0});
  CHECK(DecodeUtf8Lenient("\xF4\x90\x80\x80").at(0) == 0xFFFD);  // above U+10FFFF

  std::string s;
  for (uint32_t cp : {0x24u, 0xA2u, 0x20ACu, 0x10348u}) AppendUtf8(cp, &s);
  CHECK(s == "$\xC2\xA2\xE2\x82\xAC\xF0\x90\x8D\x88");

  CHECK(CheckUtf8("a", 0) == 1);
  CHECK(CheckUtf8("\xE2\x82\xAC", 0) == 3);
  CHECK(CheckUtf8("\xE2\x82", 0) == 0);       // unfinished
  CHECK(CheckUtf8("\xE2(", 0) == -1);         // broken after one byte
  CHECK(CheckUtf8("\xE2\x82(", 0) == -2);     // broken after two
  CHECK(CheckUtf8("\xC0\x80", 0) == -1);      // overlong
  CHECK(CheckUtf8("\xED\xA0\x80", 0) == -1);  // surrogate
  CHECK(CheckUtf8("\xF4\x90\x80\x80", 0) == -1);
  CHECK(CheckUtf8("\x80", 0) == -1);
}

TEST_CASE("unicode: GPT-2 byte mapping", "[tokenizer]") {
  CHECK(ByteToGpt2Char('!') == '!');
  CHECK(ByteToGpt2Char(' ') == 0x120);   // Ġ
  CHECK(ByteToGpt2Char('\n') == 0x10A);  // Ċ
  CHECK(ByteToGpt2Char(0) == 0x100);
  CHECK(ByteToGpt2Char(0xAD) == 0x143);
  CHECK(ByteToGpt2Char(0xFF) == 0xFF);
  for (int b = 0; b < 256; ++b) CHECK(Gpt2CharToByte(ByteToGpt2Char(static_cast<uint8_t>(b))) == b);
  CHECK(Gpt2CharToByte(' ') == -1);
  CHECK(Gpt2CharToByte(0x4E2D) == -1);
}

TEST_CASE("unicode: regex splits like the pre-tokenizers", "[tokenizer]") {
  const std::string gpt2 =
      "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
  CHECK(SplitAll(gpt2, "Hello world's  123!!\n") ==
        Words{"Hello", " world", "'s", " ", " 123", "!!", "\n"});
  const std::string llama3 =
      "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+"
      "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  CHECK(SplitAll(llama3, "I'M 12345  \n\n x") ==
        Words{"I", "'M", " ", "123", "45", "  \n\n", " x"});
  // Unmatched text between matches becomes its own piece.
  CHECK(SplitAll("\\p{N}", "ab12c") == Words{"ab", "1", "2", "c"});
  CHECK(SplitAll("[0-9][0-9][0-9]", "12345") == Words{"123", "45"});
  // Letters by category, not by script; marks are not letters.
  CHECK(SplitAll("\\p{L}+", "\xD0\x9F\xD1\x80\xD0\xB8 e\xCC\x81") ==
        Words{"\xD0\x9F\xD1\x80\xD0\xB8", " ", "e", "\xCC\x81"});
  // Literal code point ranges, and non-ASCII whitespace only matching \s.
  CHECK(SplitAll("[\xE4\xB8\x80-\xE9\xBE\xA5]+", "a\xE4\xB8\xAD\xE6\x96\x87!") ==
        Words{"a", "\xE4\xB8\xAD\xE6\x96\x87", "!"});
  CHECK(SplitAll("\\s+$", "a  b  ") == Words{"a  b", "  "});
  // Case-change splitting as in the gpt-4o / tekken pre-tokenizers.
  CHECK(SplitAll("((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+", "XMLHttpRequest") ==
        Words{"XMLHttp", "Request"});
  CHECK(SplitAll("(IMGIMG)((A|B|C){1,4})Z", "xIMGIMGABZy") == Words{"x", "IMGIMGABZ", "y"});
}

TEST_CASE("unicode: regex syntax we do not support is an error", "[tokenizer]") {
  Regex re;
  for (const char* bad :
       {"(?i:a)", "a{2,1}", "[a", "(a", "a)", "a++", "a*?", "(ab)+", "\\p{Xx}", "\\q", "*a"}) {
    INFO(bad);
    Status s = Regex::Compile(bad, &re);
    CHECK_FALSE(s.ok());
    CHECK(s.code() == Code::kInvalidArgument);
  }
  CHECK(Regex::Compile("(ab){1,3}", &re).ok());
  CHECK(Regex::Compile("((?=[\\p{L}])([^a-z]))+", &re).ok());
}
