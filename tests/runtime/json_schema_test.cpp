// JSON schema to GBNF (runtime/constrain/json_schema.h): the language each
// keyword gives (checked by matching texts against the grammar), integer
// ranges exhaustively, patterns against std::regex, and the errors.
#include "runtime/constrain/json_schema.h"

#include <catch2/catch.hpp>
#include <random>
// GCC 12 sees std::regex's automaton states as maybe uninitialized under the
// sanitizers (a false positive inside libstdc++).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>
#pragma GCC diagnostic pop
#include <string>

#include "runtime/constrain/int_range.h"
#include "runtime/constrain/regex_gbnf.h"
#include "sampling/grammar/matcher.h"

using namespace ember;
using Json = nlohmann::ordered_json;

namespace {

// A vocabulary of the 256 bytes: matching a text feeds it byte by byte.
std::shared_ptr<const grammar::TokenTrie> Bytes() {
  static const auto trie = [] {
    static std::vector<std::string> b;
    for (int i = 0; i < 256; ++i) b.push_back(std::string(1, static_cast<char>(i)));
    return grammar::TokenTrie::Build(
        256, [](int32_t t) { return std::string_view(b[static_cast<size_t>(t)]); }, nullptr);
  }();
  return trie;
}

class Lang {
 public:
  explicit Lang(const std::string& gbnf) {
    const Status s = grammar::BuildGrammarTables(gbnf, "root", Bytes(), &tables_);
    INFO(gbnf);
    REQUIRE(s.message() == "");
  }
  static Lang Schema(const std::string& schema) {
    std::string g;
    const Status s = JsonSchemaToGbnf(schema, &g);
    INFO(schema);
    REQUIRE(s.message() == "");
    return Lang(g);
  }
  bool Matches(const std::string& text) const {
    grammar::GrammarMatcher m(tables_);
    for (const char c : text) {
      if (!m.Accept(static_cast<uint8_t>(c))) return false;
    }
    return m.CanEnd();
  }

 private:
  std::shared_ptr<const grammar::MaskTables> tables_;
};

std::string SchemaError(const std::string& schema) {
  std::string g;
  const Status s = JsonSchemaToGbnf(schema, &g);
  return s.ok() ? "" : s.message();
}

Code SchemaCode(const std::string& schema) {
  std::string g;
  return JsonSchemaToGbnf(schema, &g).code();
}

}  // namespace

TEST_CASE("json schema: integer ranges are exact", "[grammar]") {
  const std::vector<std::optional<int64_t>> bounds = {std::nullopt, -250, -100, -9,  -1, 0, 1, 7,
                                                      10,           99,   100,  123, 250};
  for (const auto& lo : bounds) {
    for (const auto& hi : bounds) {
      if (lo && hi && *lo > *hi) continue;
      Lang l("root ::= " + IntRangeGbnf(lo, hi));
      INFO((lo ? std::to_string(*lo) : "-inf") << " .. " << (hi ? std::to_string(*hi) : "inf"));
      for (int64_t x = -300; x <= 300; ++x) {
        const bool in = (!lo || x >= *lo) && (!hi || x <= *hi);
        REQUIRE(l.Matches(std::to_string(x)) == in);
      }
      CHECK_FALSE(l.Matches("-0"));
      CHECK_FALSE(l.Matches("007"));
    }
  }
  Lang big("root ::= " + IntRangeGbnf(INT64_MIN, INT64_MAX));
  CHECK(big.Matches("-9223372036854775808"));
  CHECK(big.Matches("9223372036854775807"));
  CHECK_FALSE(big.Matches("9223372036854775808"));
  Lang open("root ::= " + IntRangeGbnf(5, std::nullopt));
  CHECK(open.Matches("1234567890123456"));  // 16 digits
  CHECK_FALSE(open.Matches("12345678901234567"));
}

TEST_CASE("json schema: patterns match what std::regex finds", "[grammar]") {
  // Each pattern against random strings over an alphabet that exercises it;
  // the grammar sees the JSON encoding, std::regex the value.
  struct Case {
    std::string pattern, alphabet, example;  // the example matches
  };
  const std::vector<Case> cases = {
      {"^[a-c]+@[a-c]+\\.com$", "abc@.mo", "ab@c.com"},
      {"^(ab|c)*d?$", "abcd", "abcd"},
      {"^\\d{2,3}-\\w+$", "19a_-", "19-a_"},
      {"b+c", "abc", "abbc"},
      {"^x|y$", "xyz", "xz"},
      {"^[^a]{2}.$", "ab\n\"\\", "\"\nb"},
      {"^a\\.b\\\\c\"$", "a.b\\c\"", "a.b\\c\""},
      {"^(?:ab){1,2}c?$", "abc", "ababc"},
      {"^[\\s]?\\S*$", " \tab", " ab"},
  };
  std::mt19937 rng(5);
  for (const auto& [pattern, alphabet, example] : cases) {
    INFO(pattern);
    Lang l = Lang::Schema(Json{{"type", "string"}, {"pattern", pattern}}.dump());
    const std::regex re(pattern, std::regex::ECMAScript);
    std::vector<std::string> units;  // alphabet characters (UTF-8 aware)
    for (size_t i = 0; i < alphabet.size();) {
      size_t n = 1;
      while (i + n < alphabet.size() &&
             (static_cast<unsigned char>(alphabet[i + n]) & 0xC0) == 0x80)
        ++n;
      units.push_back(alphabet.substr(i, n));
      i += n;
    }
    REQUIRE(std::regex_search(example, re));
    CHECK(l.Matches(Json(example).dump()));
    for (int k = 0; k < 3000; ++k) {
      std::string v;
      for (int len = static_cast<int>(rng() % 7); len > 0; --len) v += units[rng() % units.size()];
      INFO("value: " << v);
      REQUIRE(l.Matches(Json(v).dump()) == std::regex_search(v, re));
    }
  }
  // Non-ASCII (std::regex works on bytes) and named groups (which it lacks).
  Lang e_acute = Lang::Schema(R"({"pattern": "^[\\u00e0-\\u00ff]\\u00e9+$"})");
  CHECK(e_acute.Matches("\"\xC3\xA0\xC3\xA9\xC3\xA9\""));
  CHECK_FALSE(
      e_acute.Matches("\"\xC3\xA0"
                      "e\""));
  CHECK_FALSE(e_acute.Matches("\"a\xC3\xA9\""));
  // Named groups are plain groups.
  Lang named = Lang::Schema(R"({"pattern": "^(?<x>ab)+$"})");
  CHECK(named.Matches("\"abab\""));
  CHECK_FALSE(named.Matches("\"aba\""));
}

TEST_CASE("json schema: types, objects and arrays", "[grammar]") {
  Lang any = Lang::Schema("{}");
  CHECK(any.Matches("[1, \"a\", {\"b\": null}, true, -2.5e3]"));
  CHECK_FALSE(any.Matches("[1,]"));
  Lang obj = Lang::Schema(R"({"type": "object"})");
  CHECK(obj.Matches(R"({"a": [1, 2], "b": {"c": "d"}})"));
  CHECK_FALSE(obj.Matches("[]"));
  Lang nul = Lang::Schema(R"({"type": ["string", "null"], "maxLength": 2})");
  CHECK(nul.Matches("null"));
  CHECK(nul.Matches("\"ab\""));
  CHECK_FALSE(nul.Matches("\"abc\""));
  // Declared properties in order; optional ones may be left out; additional
  // ones are allowed (unless false) after them, never with a declared name.
  const std::string props = R"({"properties": {"a": {"type": "integer"}, "b": {"type": "string"},
      "c": {"type": "boolean"}}, "required": ["b"]})";
  Lang p = Lang::Schema(props);
  CHECK(p.Matches(R"({"b": "x"})"));
  CHECK(p.Matches(R"({"a": 1, "b": "x", "c": true})"));
  CHECK(p.Matches(R"({"b": "x", "zz": [1]})"));
  CHECK_FALSE(p.Matches(R"({"a": 1})"));            // b is required
  CHECK_FALSE(p.Matches(R"({"b": "x", "a": 1})"));  // declared order
  CHECK_FALSE(p.Matches(R"({"b": "x", "c": 1})"));
  CHECK_FALSE(p.Matches(R"({"b": "x", "zz": 1, "a": 2})"));
  CHECK_FALSE(p.Matches(R"({"b": "x", "b": "y"})"));  // an additional key may not be "b"
  Lang closed =
      Lang::Schema(R"({"properties": {"a": {"const": 1}}, "additionalProperties": false})");
  CHECK(closed.Matches("{}"));
  CHECK(closed.Matches(R"({"a": 1})"));
  CHECK_FALSE(closed.Matches(R"({"a": 1, "b": 2})"));
  Lang typed = Lang::Schema(R"({"type": "object", "additionalProperties": {"type": "integer"}})");
  CHECK(typed.Matches(R"({"x": 1, "y": -2})"));
  CHECK_FALSE(typed.Matches(R"({"x": "1"})"));
  // Arrays: items, counts, prefixItems, draft-07 tuples.
  Lang arr = Lang::Schema(
      R"({"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3})");
  CHECK(arr.Matches("[1]"));
  CHECK(arr.Matches("[1, 2, 3]"));
  CHECK_FALSE(arr.Matches("[]"));
  CHECK_FALSE(arr.Matches("[1, 2, 3, 4]"));
  CHECK_FALSE(arr.Matches("[1.5]"));
  Lang tup =
      Lang::Schema(R"({"prefixItems": [{"type": "string"}, {"type": "null"}], "items": false})");
  CHECK(tup.Matches("[]"));
  CHECK(tup.Matches("[\"a\"]"));
  CHECK(tup.Matches("[\"a\", null]"));
  CHECK_FALSE(tup.Matches("[\"a\", null, 1]"));
  CHECK_FALSE(tup.Matches("[null]"));
  Lang tup7 = Lang::Schema(R"({"items": [{"type": "integer"}], "minItems": 2})");
  CHECK(tup7.Matches("[1, \"anything\"]"));
  CHECK_FALSE(tup7.Matches("[1]"));
}

TEST_CASE("json schema: strings, numbers, formats, enums and combinations", "[grammar]") {
  Lang len = Lang::Schema(R"({"type": "string", "minLength": 2, "maxLength": 3})");
  CHECK(len.Matches("\"ab\""));
  CHECK(len.Matches("\"a\\nb\""));  // an escape is one character
  CHECK_FALSE(len.Matches("\"a\""));
  CHECK_FALSE(len.Matches("\"abcd\""));
  Lang num = Lang::Schema(R"({"type": "number", "minimum": -2, "maximum": 3})");
  for (const char* ok : {"-2", "-1.99", "0", "0.5", "3", "3.000", "-2.0"}) CHECK(num.Matches(ok));
  for (const char* bad : {"-2.01", "3.5", "4", "-3", "1e2"}) CHECK_FALSE(num.Matches(bad));
  Lang excl =
      Lang::Schema(R"({"type": "integer", "exclusiveMinimum": 2.5, "exclusiveMaximum": 5})");
  CHECK_FALSE(excl.Matches("2"));
  CHECK(excl.Matches("3"));
  CHECK(excl.Matches("4"));
  CHECK_FALSE(excl.Matches("5"));
  Lang date = Lang::Schema(R"({"type": "string", "format": "date"})");
  CHECK(date.Matches("\"2024-12-31\""));
  CHECK_FALSE(date.Matches("\"2024-02-30\""));
  CHECK_FALSE(date.Matches("\"2024-13-01\""));
  Lang dt = Lang::Schema(R"({"format": "date-time"})");
  CHECK(dt.Matches("\"2024-01-02T03:04:05.123Z\""));
  CHECK(dt.Matches("\"2024-01-02T23:59:59+05:30\""));
  CHECK_FALSE(dt.Matches("\"2024-01-02T24:00:00Z\""));
  Lang uuid = Lang::Schema(R"({"type": "string", "format": "uuid"})");
  CHECK(uuid.Matches("\"123e4567-e89b-12d3-a456-426614174000\""));
  CHECK_FALSE(uuid.Matches("\"123e4567-e89b-12d3-a456-42661417400\""));
  Lang en = Lang::Schema(R"({"enum": ["red", 2, null, {"a": [1]}]})");
  CHECK(en.Matches("\"red\""));
  CHECK(en.Matches("2"));
  CHECK(en.Matches("{\"a\":[1]}"));
  CHECK_FALSE(en.Matches("\"blue\""));
  Lang typed_enum = Lang::Schema(R"({"type": "string", "enum": ["red", 2]})");
  CHECK_FALSE(typed_enum.Matches("2"));  // not a string
  Lang any_of =
      Lang::Schema(R"({"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 1}]})");
  CHECK(any_of.Matches("7"));
  CHECK(any_of.Matches("\"x\""));
  CHECK_FALSE(any_of.Matches("\"xy\""));
  // allOf merges: properties united, required united, bounds intersected.
  Lang all_of = Lang::Schema(R"({"allOf": [
      {"properties": {"a": {"type": "integer", "minimum": 0}}, "required": ["a"]},
      {"properties": {"a": {"maximum": 5}, "b": {"type": "string"}}, "required": ["b"]}],
      "additionalProperties": false})");
  CHECK(all_of.Matches(R"({"a": 5, "b": ""})"));
  CHECK_FALSE(all_of.Matches(R"({"a": 6, "b": ""})"));
  CHECK_FALSE(all_of.Matches(R"({"a": 1})"));
  // $ref and $defs, also recursive.
  Lang tree = Lang::Schema(R"({"$defs": {"node": {"type": "object", "properties": {
      "v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
      "required": ["v"], "additionalProperties": false}}, "$ref": "#/$defs/node"})");
  CHECK(tree.Matches(R"({"v": 1, "kids": [{"v": 2}, {"v": 3, "kids": [{"v": 4}]}]})"));
  CHECK_FALSE(tree.Matches(R"({"v": 1, "kids": [{"w": 2}]})"));
  CHECK(JsonObjectGbnf().find("root ::=") == 0);
}

TEST_CASE("json schema: a pattern must be valid UTF-8", "[grammar]") {
  std::string g;
  // Patterns reach the converter from parsed JSON (valid UTF-8), but the
  // converter is also called directly: it checks its input itself.
  for (const char* bad : {"a\xC3(", "\xC3", "\xE2\x82", "\xC0\xAF", "\xED\xA0\x80", "[\xFF]"}) {
    INFO(bad);
    const Status s = RegexToGbnf(bad, "[^\\x00]", &g);
    CHECK_FALSE(s.ok());
    CHECK(s.message().find("invalid UTF-8") != std::string::npos);
  }
  CHECK(RegexToGbnf("^caf\xC3\xA9 \xF0\x9F\x98\x80+$", "[^\\x00]", &g).ok());
}

TEST_CASE("json schema: unsupported keywords and bad schemas are errors", "[grammar]") {
  CHECK(SchemaError(R"({"type": "object", "minProperties": 1})") ==
        "unsupported JSON schema keyword 'minProperties' at #");
  CHECK(SchemaError(R"({"properties": {"tags": {"type": "array", "uniqueItems": true}}})") ==
        "unsupported JSON schema keyword 'uniqueItems' at #/properties/tags");
  CHECK(SchemaCode(R"({"type": "object", "patternProperties": {}})") == Code::kUnsupported);
  CHECK(SchemaError(R"({"type": "string", "format": "email"})") ==
        "format \"email\" at # is not supported (date, time, date-time, uuid are)");
  CHECK(SchemaError(R"({"type": "string", "pattern": "^(a)\\1$"})")
            .rfind("pattern '^(a)\\1$': backreferences are not supported", 0) == 0);
  CHECK(SchemaError(R"({"type": "string", "pattern": "(?=a)b"})").find("lookaround") !=
        std::string::npos);
  CHECK(SchemaError(R"({"type": "string", "pattern": "a\\bb"})").find("word boundaries") !=
        std::string::npos);
  CHECK(SchemaError(R"({"type": "number", "exclusiveMinimum": 0})")
            .rfind("exclusive bounds on a number", 0) == 0);
  CHECK(SchemaError(R"({"type": "number", "minimum": 0.5})").find("not a whole number") !=
        std::string::npos);
  CHECK(SchemaError(R"({"$ref": "other.json#/a"})") ==
        "$ref 'other.json#/a' at # points into another document");
  CHECK(SchemaError(R"({"$ref": "#/$defs/missing"})") ==
        "$ref '#/$defs/missing' at # leads nowhere");
  CHECK(SchemaError(R"({"type": "strng"})") == "'type' at # must name JSON types (got \"strng\")");
  CHECK(SchemaError(R"({"type": "string", "minLength": 3, "maxLength": 2})") ==
        "'maxLength' below 'minLength' at #");
  CHECK(SchemaError("false") == "the schema at # is false: no value is valid");
  CHECK(SchemaError("{\"type\": ").rfind("the JSON schema is not valid JSON", 0) == 0);
  CHECK(SchemaError(R"({"allOf": [{"type": "string"}, {"type": "integer"}]})") ==
        "allOf at #: the types do not overlap");
  // Annotations are fine.
  CHECK(SchemaError(R"({"title": "t", "description": "d", "$schema": "x", "examples": [1],
                        "type": "integer", "default": 3})") == "");
  // A schema that refers to itself at its start is left recursion in the grammar.
  std::string g;
  REQUIRE(JsonSchemaToGbnf(R"({"anyOf": [{"$ref": "#"}, {"type": "null"}]})", &g).ok());
  grammar::CompiledGrammar c;
  CHECK(grammar::CompileGbnf(g, "root", &c).message().rfind("left recursion", 0) == 0);
}
