// The GBNF parser and compiler: llama.cpp's syntax, errors with line and
// column, the grammars of ../shared/grammars (skipped when that folder is
// missing, e.g. under qemu).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sampling/grammar/compiled_grammar.h"
#include "sampling/grammar/gbnf.h"
#include "support/skip.h"

using namespace ember;
using namespace ember::grammar;

namespace {

std::string ParseError(const std::string& text, const std::string& root = "root") {
  GbnfGrammar g;
  const Status s = ParseGbnf(text, root, &g);
  return s.ok() ? "" : s.message();
}

std::string CompileError(const std::string& text) {
  CompiledGrammar c;
  const Status s = CompileGbnf(text, "root", &c);
  return s.ok() ? "" : s.message();
}

std::string Reprint(const std::string& text) {
  GbnfGrammar g;
  const Status s = ParseGbnf(text, "root", &g);
  REQUIRE(s.message() == "");
  return PrintGbnf(g);
}

std::string GrammarsDir() {
#ifdef EMBER_SOURCE_DIR
  return std::string(EMBER_SOURCE_DIR) + "/../shared/grammars";
#else
  return "";
#endif
}

}  // namespace

TEST_CASE("gbnf: every grammar of ../shared/grammars parses and compiles", "[grammar]") {
  const std::string dir = GrammarsDir();
  if (dir.empty() || !std::filesystem::is_directory(dir)) EMBER_SKIP("no ../shared/grammars");
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".gbnf") continue;
    std::ifstream f(entry.path());
    std::stringstream text;
    text << f.rdbuf();
    INFO(entry.path().filename().string());
    GbnfGrammar g;
    const Status parsed = ParseGbnf(text.str(), "root", &g);
    REQUIRE(parsed.message() == "");
    CompiledGrammar c;
    const Status compiled = CompileGrammar(g, &c);
    CHECK(compiled.message() == "");
    CHECK(c.positions.size() > 0);
    // Printing and parsing again gives the same grammar.
    const std::string printed = PrintGbnf(g);
    CHECK(Reprint(printed) == printed);
    ++n;
  }
  CHECK(n >= 8);
}

TEST_CASE("gbnf: the syntax", "[grammar]") {
  // Literals with escapes, classes with ranges and negation, any, groups and
  // every repetition form; comments and line breaks after | and inside ().
  CHECK(Reprint("root ::= \"a\\x41\\u00e9\\U0001F600\\t\\n\\r\\\\\\\"\"") ==
        "root ::= \"aA\\u00E9\\U0001F600\\t\\n\\r\\\\\\\"\"\n");
  CHECK(Reprint("root ::= [a-cx] [^\\x00-\\x1F\"] .") == "root ::= [a-cx] [ -!#-\\U0010FFFF] .\n");
  CHECK(Reprint("root ::= [\\]\\-\\[] [-a]") == "root ::= [\\-\\[\\]] [\\-a]\n");
  CHECK(Reprint("root ::= x* x+ x? x{2} x{2,} x{2,5} (x | y){0,3}\nx ::= \"x\"\ny ::= \"\"") ==
        "root ::= x* x+ x? x{2} x{2,} x{2,5} (x | y){0,3}\nx ::= \"x\"\ny ::= \"\"\n");
  CHECK(Reprint("# comment\nroot ::= a |  # why\n  b (\n  a\n  b)\na ::= \"a\" # end\n\nb ::= "
                "\"b\"\n") == "root ::= a | b (a b)\na ::= \"a\"\nb ::= \"b\"\n");
  CHECK(Reprint("root ::= | \"a\"") == "root ::= \"\" | \"a\"\n");
  CHECK(Reprint("root ::= \"a\"{ 1 , 2 }") == "root ::= \"a\"{1,2}\n");
  // A rule used before its definition; an unused rule is fine.
  CHECK(Reprint("root ::= later\nunused ::= \"u\"\nlater ::= \"l\"") ==
        "root ::= later\nunused ::= \"u\"\nlater ::= \"l\"\n");
  // Another start rule.
  GbnfGrammar g;
  REQUIRE(ParseGbnf("a ::= \"x\"\nstart ::= a", "start", &g).ok());
  CHECK(g.rules[g.root].name == "start");
}

TEST_CASE("gbnf: syntax errors say line and column", "[grammar]") {
  CHECK(ParseError("root := \"a\"") ==
        "line 1, column 6: expecting '::=' after the rule name 'root', found ':'");
  CHECK(ParseError("root ::= \"a\"\nx ::= \"abc") ==
        "line 2, column 7: unterminated string literal");
  CHECK(ParseError("root ::= [abc") == "line 1, column 10: unterminated character class");
  CHECK(ParseError("root ::= \"\\q\"") ==
        "line 1, column 11: unknown escape \\q (known: \\x.. \\u.... \\U........ \\t \\r \\n \\\\ "
        "\\\" \\[ \\] \\-)");
  CHECK(ParseError("root ::= \"\\x4\"") == "line 1, column 11: expecting 2 hex digits after \\x");
  CHECK(ParseError("root ::= \"\\U00110000\"") == "line 1, column 11: code point above U+10FFFF");
  CHECK(ParseError("root ::= * \"a\"") == "line 1, column 10: '*' has nothing to repeat");
  CHECK(ParseError("root ::= \"a\"{3,2}") ==
        "line 1, column 13: repetition {3,2}: the maximum is below the minimum");
  CHECK(ParseError("root ::= \"a\"{1x}") ==
        "line 1, column 15: expecting ',' or '}' in the repetition, found 'x'");
  CHECK(ParseError("root ::= \"a\"{200000}") == "line 1, column 14: repetition count above 100000");
  CHECK(ParseError("root ::= (\"a\"\n\"b\"") ==
        "line 2, column 4: expecting ')' to close the group opened at line 1, column 10, found "
        "end of input");
  CHECK(ParseError("root ::= \"a\")") == "line 1, column 13: ')' without a matching '('");
  CHECK(ParseError("root ::= \"a\" ; \"b\"") ==
        "line 1, column 14: unexpected ';' in the rule 'root'");
  CHECK(ParseError("root ::= [z-a]") ==
        "line 1, column 12: character range is backwards (end below start)");
  CHECK(ParseError("root ::= <|im_end|>") ==
        "line 1, column 10: token references (<...>) are not supported; write the token's text");
  CHECK(ParseError("  \n# only a comment\n") == "the grammar has no rules");
  CHECK(ParseError("r_1 ::= \"a\"") ==
        "line 1, column 2: expecting '::=' after the rule name 'r', found '_'");
}

TEST_CASE("gbnf: literals must be valid UTF-8", "[grammar]") {
  const std::string kInvalid =
      "invalid UTF-8 (a malformed, overlong or truncated sequence, or a surrogate)";
  // A lead byte whose continuation is missing, is ASCII, or is itself a lead.
  CHECK(ParseError("root ::= \"\xC3\"") == "line 1, column 11: " + kInvalid);
  CHECK(ParseError("root ::= \"\xC3(\"") == "line 1, column 11: " + kInvalid);
  CHECK(ParseError("root ::= [\xE2\xC3\xA9]") == "line 1, column 11: " + kInvalid);
  // Overlong forms, a surrogate, a code point above U+10FFFF, stray bytes.
  CHECK(ParseError("root ::= \"\xC0\xAF\"") == "line 1, column 11: " + kInvalid);
  CHECK(ParseError("root ::= \"\xE0\x80\xAF\"") == "line 1, column 11: " + kInvalid);
  CHECK(ParseError("root ::= \"\xED\xA0\x80\"") == "line 1, column 11: " + kInvalid);
  CHECK(ParseError("root ::= \"\xF4\x90\x80\x80\"") == "line 1, column 11: " + kInvalid);
  CHECK(ParseError("root ::= \"\x80\"") == "line 1, column 11: " + kInvalid);
  CHECK(ParseError("root ::= \"\xFF\"") == "line 1, column 11: " + kInvalid);
  // Valid characters of every length still parse.
  CHECK(ParseError("root ::= \"a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\" [\xC3\xA0-\xC3\xBF]") == "");
}

TEST_CASE("grammar: the strict UTF-8 decoder", "[grammar]") {
  uint32_t cp = 0;
  CHECK(grammar::DecodeUtf8Char("\xF0\x9F\x98\x80", 0, &cp) == 4);
  CHECK(cp == 0x1F600);
  CHECK(grammar::DecodeUtf8Char("x\xC3\xA9", 1, &cp) == 2);
  CHECK(cp == 0xE9);
  CHECK(grammar::DecodeUtf8Char("\xF4\x8F\xBF\xBF", 0, &cp) == 4);
  CHECK(cp == 0x10FFFF);
  CHECK(grammar::DecodeUtf8Char("\xEF\xBF\xBD", 0, &cp) == 3);
  CHECK(cp == 0xFFFD);
  CHECK(grammar::DecodeUtf8Char("\xC1\xBF", 0, &cp) == 0);          // overlong
  CHECK(grammar::DecodeUtf8Char("\xF0\x8F\xBF\xBF", 0, &cp) == 0);  // overlong
  CHECK(grammar::DecodeUtf8Char("\xED\xBF\xBF", 0, &cp) == 0);      // a surrogate
  CHECK(grammar::DecodeUtf8Char("\xF5\x80\x80\x80", 0, &cp) == 0);  // above U+10FFFF
  CHECK(grammar::DecodeUtf8Char("\xE2\x82", 0, &cp) == 0);          // truncated
  CHECK(grammar::DecodeUtf8Char("\xE2\x82"
                                "A",
                                0, &cp) == 0);       // not a continuation
  CHECK(grammar::DecodeUtf8Char("a", 1, &cp) == 0);  // past the end
}

TEST_CASE("gbnf: undefined, duplicate and missing rules", "[grammar]") {
  CHECK(ParseError("root ::= \"a\" item\n") == "line 1, column 14: undefined rule 'item'");
  CHECK(ParseError("root ::= a\na ::= \"x\"\n  \na ::= \"y\"") ==
        "line 4, column 1: rule 'a' is defined twice (first on line 2)");
  CHECK(ParseError("start ::= \"a\"") ==
        "the grammar has no start rule 'root' (it must define root ::= ...)");
}

TEST_CASE("gbnf: left recursion is an error that names the cycle", "[grammar]") {
  CHECK(CompileError("root ::= root \"a\" | \"b\"").rfind("left recursion: root -> root", 0) == 0);
  // Through a rule that can be empty.
  CHECK(CompileError("root ::= e term\nterm ::= opt root \"x\" | \"y\"\nopt ::= \"o\"?\ne ::= \"\"")
            .rfind("left recursion: root -> term -> root", 0) == 0);
  // Right recursion and recursion after a consumed prefix are fine.
  CHECK(CompileError("root ::= \"a\" root | \"\"") == "");
  CHECK(CompileError("root ::= \"(\" root \")\" | \"x\"") == "");
  // An empty repetition of a nullable item is no recursion.
  CHECK(CompileError("root ::= (\"\")* \"a\"") == "");
}

TEST_CASE("gbnf: compiling inlines, unrolls and bounds the size", "[grammar]") {
  CompiledGrammar c;
  // json.gbnf's shape: string, number and ws are inlined (not recursive); value,
  // object and array stay rules (recursive).
  REQUIRE(CompileGbnf("root ::= value\nvalue ::= \"[\" (value (\",\" value)*)? \"]\" | str\n"
                      "str ::= \"\\\"\" [a-z]* \"\\\"\"",
                      "root", &c)
              .ok());
  std::vector<std::string> names;
  for (const CompiledRule& r : c.rules) names.push_back(r.name);
  CHECK(names == std::vector<std::string>{"root", "value"});
  // x{0,1000} is unrolled into copies, each a RepInstance.
  REQUIRE(CompileGbnf("root ::= [a-z]{0,1000}", "root", &c).ok());
  CHECK(c.instances.size() == 1000);
  CHECK(c.positions.size() > 1000);
  CHECK(CompileError("root ::= ([a-z]{0,5000}){0,5000}").rfind("the grammar is too large", 0) == 0);
}
