// The grammar matcher: what it accepts, its contract (matcher.h), and fast
// masks equal to trying every token, on small synthetic vocabularies.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "sampling/grammar/matcher.h"
#include "support/skip.h"

using namespace ember;
using namespace ember::grammar;

namespace {

// A vocabulary of the 256 single bytes plus `extra` tokens; the last token
// ends generation.
struct Vocab {
  std::vector<std::string> tokens;
  std::shared_ptr<const TokenTrie> trie;
  int32_t eos() const { return static_cast<int32_t>(tokens.size()) - 1; }
  int32_t Id(const std::string& s) const {
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (tokens[i] == s) return static_cast<int32_t>(i);
    }
    return -1;
  }
};

Vocab MakeVocab(std::vector<std::string> extra) {
  Vocab v;
  for (int b = 0; b < 256; ++b) v.tokens.push_back(std::string(1, static_cast<char>(b)));
  for (std::string& s : extra) v.tokens.push_back(std::move(s));
  v.tokens.push_back("</s>");
  const auto n = static_cast<int32_t>(v.tokens.size());
  v.trie = TokenTrie::Build(
      n, [&v](int32_t t) { return std::string_view(v.tokens[static_cast<size_t>(t)]); },
      [n](int32_t t) { return t == n - 1; });
  return v;
}

std::shared_ptr<const MaskTables> Tables(const std::string& gbnf, const Vocab& v) {
  std::shared_ptr<const MaskTables> t;
  const Status s = BuildGrammarTables(gbnf, "root", v.trie, &t);
  REQUIRE(s.message() == "");
  return t;
}

bool Bit(const std::vector<uint64_t>& bits, int32_t t) {
  return (bits[static_cast<size_t>(t) >> 6] >> (t & 63)) & 1;
}

// Whether the grammar matches `text` exactly (fed byte by byte).
bool Matches(const std::string& gbnf, const std::string& text) {
  static const Vocab v = MakeVocab({});
  GrammarMatcher m(Tables(gbnf, v));
  for (const char c : text) {
    if (!m.Accept(static_cast<uint8_t>(c))) return false;
  }
  return m.CanEnd();
}

std::string ReadGrammar(const std::string& name) {
#ifdef EMBER_SOURCE_DIR
  std::ifstream f(std::string(EMBER_SOURCE_DIR) + "/../shared/grammars/" + name);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
#else
  (void)name;
  return "";
#endif
}

}  // namespace

TEST_CASE("grammar matcher: the language of each construct", "[grammar]") {
  CHECK(Matches("root ::= \"ab\" | \"c\"", "ab"));
  CHECK(Matches("root ::= \"ab\" | \"c\"", "c"));
  CHECK_FALSE(Matches("root ::= \"ab\" | \"c\"", "a"));
  CHECK_FALSE(Matches("root ::= \"ab\" | \"c\"", "abc"));
  const std::string rep = "root ::= \"x\"{2,3} \"y\"{2} \"z\"{1,}";
  CHECK(Matches(rep, "xxyyz"));
  CHECK(Matches(rep, "xxxyyzzz"));
  CHECK_FALSE(Matches(rep, "xyyz"));
  CHECK_FALSE(Matches(rep, "xxxxyyz"));
  CHECK_FALSE(Matches(rep, "xxyyyz"));
  CHECK_FALSE(Matches(rep, "xxyy"));
  CHECK(Matches("root ::= [a-c]* [^a-c]? .", "abcab-\xE6\x97\xA5"));
  CHECK(Matches("root ::= [a-c]* [^a-c]? .", "\xE6\x97\xA5"));
  CHECK_FALSE(Matches("root ::= [a-c]* [^a-c]? .", ""));  // . needs one character
  CHECK_FALSE(Matches("root ::= [^a]", "\xE6\x97"));      // an unfinished character
  CHECK(Matches("root ::= [\\u00e0-\\u00ff]+", "\xC3\xA0\xC3\xBF"));
  CHECK_FALSE(Matches("root ::= [\\u00e0-\\u00ff]+", "\xC3\x9F"));
  // Nested groups, empty alternatives, rules (recursive and not).
  const std::string nest = "root ::= item (\",\" item)*\nitem ::= \"(\" (item | ) \")\" | [0-9]+";
  CHECK(Matches(nest, "(((1)))"));
  CHECK(Matches(nest, "(),12,(())"));
  CHECK_FALSE(Matches(nest, "(()"));
  CHECK_FALSE(Matches(nest, "1,"));
  // Deep right recursion does not grow the stack (no frame to go back to).
  const std::string right = "root ::= \"a\" root | \"b\"";
  CHECK(Matches(right, std::string(5000, 'a') + "b"));
  // Invalid UTF-8 never matches, even for "any character".
  CHECK_FALSE(Matches("root ::= .*", "\xFF"));
  CHECK_FALSE(Matches("root ::= .*", "\x80"));
  CHECK_FALSE(Matches("root ::= .*", "\xC0\x80"));  // overlong
}

TEST_CASE("grammar matcher: the contract", "[grammar]") {
  const Vocab v = MakeVocab({"ab", "abc", "b", "\xE6", "\x97\xA5"});
  GrammarMatcher m(Tables("root ::= \"ab\" (\"c\" | \"\\u65e5\")?", v));
  std::vector<uint64_t> mask;
  m.FillMask(&mask);
  CHECK(Bit(mask, 'a'));
  CHECK(Bit(mask, v.Id("ab")));
  CHECK(Bit(mask, v.Id("abc")));
  CHECK_FALSE(Bit(mask, 'b'));
  CHECK_FALSE(Bit(mask, v.eos()));  // the grammar cannot end yet
  // A token outside the mask: refused, state unchanged.
  CHECK_FALSE(m.Accept('b'));
  CHECK_FALSE(m.Accept(v.eos()));
  REQUIRE(m.Accept(v.Id("ab")));
  m.FillMask(&mask);
  CHECK(Bit(mask, v.eos()));  // "ab" is a sentence
  CHECK(Bit(mask, 'c'));
  CHECK(Bit(mask, v.Id("\xE6")));  // the first byte of U+65E5
  CHECK_FALSE(Bit(mask, v.Id("\x97\xA5")));
  // A partial character: only its completion may follow, and not the end.
  REQUIRE(m.Accept(v.Id("\xE6")));
  m.FillMask(&mask);
  CHECK(Bit(mask, v.Id("\x97\xA5")));
  CHECK(Bit(mask, 0x97));
  CHECK_FALSE(Bit(mask, v.eos()));
  CHECK_FALSE(Bit(mask, 'c'));
  REQUIRE(m.Accept(v.Id("\x97\xA5")));
  // Complete: only the end is left; after it, nothing.
  m.FillMask(&mask);
  int n = 0;
  for (int32_t t = 0; t < static_cast<int32_t>(v.tokens.size()); ++t) n += Bit(mask, t);
  CHECK(n == 1);
  CHECK(Bit(mask, v.eos()));
  REQUIRE(m.Accept(v.eos()));
  CHECK(m.finished());
  m.FillMask(&mask);
  CHECK(std::all_of(mask.begin(), mask.end(), [](uint64_t w) { return w == 0; }));
  CHECK_FALSE(m.Accept('a'));
  // Reset starts over; a copy is independent.
  m.Reset();
  CHECK(m.Accept('a'));
  GrammarMatcher copy(m);
  CHECK(copy.Accept('b'));
  CHECK_FALSE(m.CanEnd());
  CHECK(copy.CanEnd());
}

TEST_CASE("grammar matcher: masks equal trying every token", "[grammar]") {
  // Tokens made of grammar-relevant pieces (including the bytes of one
  // three-byte character split apart), so that masks have all three kinds of
  // tokens (mask_tables.h) and partial characters.
  const char* pieces[] = {"a",  "b", "{", "}",  "[", "]", "\"", ":",    ",",    " ",
                          "\n", "1", "0", "-",  ".", "e", "t",  "r",    "u",    "n",
                          "l",  "f", "s", "\\", "x", "é", "日", "\xE6", "\x97", "\xA5",
                          "+",  "*", "(", ")",  "=", "/", "_",  "2",    "9",    "A"};
  std::mt19937 rng(7);
  std::vector<std::string> extra = {"true", "false", "null", "\":", "\", \"", "},", "1."};
  // Long tokens (runs), so that copies of bounded repetitions differ for some.
  for (int len = 2; len <= 40; len += 3) {
    extra.push_back(std::string(static_cast<size_t>(len), 'a'));
    extra.push_back(std::string(static_cast<size_t>(len), 'b') + "\"");
    extra.push_back("ab" + std::string(static_cast<size_t>(len), ','));
  }
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    for (int k = 0, len = 2 + static_cast<int>(rng() % 5); k < len; ++k) {
      s += pieces[rng() % (sizeof(pieces) / sizeof(pieces[0]))];
    }
    extra.push_back(s);
  }
  const Vocab v = MakeVocab(extra);
  std::vector<std::string> grammars = {
      "root ::= [a-z]{0,40} \"\\n\"",
      "root ::= (\"\\\"\" ([^\"\\\\] | \"\\\\\" [nt\"])* \"\\\"\" \",\"? ){1,4}",
      "root ::= x+\nx ::= \"(\" x* \")\" | [0-9]",
      // Bounded repetitions with lower and upper bounds, nested ones, escapes inside.
      "root ::= \"\\\"\" ([a-z] | \"\\\\\" \"u\" [0-9a-f]{4}){3,30} \"\\\"\" \",\"?",
      "root ::= ((\"ab\"){1,3} \",\"{0,2}){2,10} \"\\n\"",
      "root ::= [ab]{5,12} \"\\\"\" | [a]{0,25} \",\""};
  for (const char* name : {"json.gbnf", "arithmetic.gbnf", "chess.gbnf", "c.gbnf", "list.gbnf",
                           "japanese.gbnf", "english.gbnf", "json_arr.gbnf"}) {
    const std::string text = ReadGrammar(name);
    if (!text.empty()) grammars.push_back(text);
  }
  for (const std::string& g : grammars) {
    INFO(g);
    const auto tables = Tables(g, v);
    for (int run = 0; run < 8; ++run) {
      GrammarMatcher m(tables);
      for (int step = 0; step < 40; ++step) {
        std::vector<uint64_t> fast, slow;
        m.FillMask(&fast);
        m.FillMaskBruteForce(&slow);
        REQUIRE(fast == slow);
        std::vector<int32_t> allowed;
        for (int32_t t = 0; t < static_cast<int32_t>(v.tokens.size()); ++t) {
          if (Bit(fast, t)) allowed.push_back(t);
        }
        if (allowed.empty()) break;
        const int32_t t = allowed[rng() % allowed.size()];
        REQUIRE(m.Accept(t));
        if (t == v.eos()) break;
      }
    }
  }
}

TEST_CASE("grammar matcher: long bounded repetitions share their tables", "[grammar]") {
  const Vocab v = MakeVocab({"aaaa", "aaaaaaaa", "\"", "a\""});
  // 2000 copies; tokens have at most 8 characters, so at most ~10 distinct
  // tables per place in a copy.
  const auto tables = Tables("root ::= \"\\\"\" [a-z]{0,2000} \"\\\"\"", v);
  CHECK(tables->stats().positions > 2000);
  CHECK(tables->stats().tables < 40);
  GrammarMatcher m(tables);
  REQUIRE(m.Accept('"'));
  for (int i = 0; i < 249; ++i) REQUIRE(m.Accept(v.Id("aaaaaaaa")));  // 1992 characters
  std::vector<uint64_t> fast, slow;
  m.FillMask(&fast);
  m.FillMaskBruteForce(&slow);
  CHECK(fast == slow);
  CHECK(Bit(fast, v.Id("aaaaaaaa")));  // exactly 2000
  CHECK(m.Accept(v.Id("aaaa")));
  m.FillMask(&fast);
  m.FillMaskBruteForce(&slow);
  CHECK(fast == slow);
  CHECK(Bit(fast, v.Id("aaaa")));
  CHECK_FALSE(Bit(fast, v.Id("aaaaaaaa")));
  CHECK(Bit(fast, v.Id("a\"")));
}
