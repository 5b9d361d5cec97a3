// libFuzzer target: JSON schema -> GBNF (runtime/constrain), and the regex
// and integer-range pieces it is built from.
//
// Input, by its first byte:
//  '/'  the rest is a "pattern" regex: RegexToGbnf; when it converts, the
//       grammar of a JSON string with that content must compile.
//  '#'  then 17 bytes: flags (bit 0: a lower bound, bit 1: an upper bound,
//       bit 2: magnitudes, UintRangeGbnf), lo and hi (int64, little-endian;
//       swapped when lo > hi). The grammar must compile, accept lo, hi and a
//       number between them as JSON writes them, and refuse lo - 1 and
//       hi + 1 (a bound given is exact; an open side allows 16 digits).
//  else a JSON schema: JsonSchemaToGbnf either fails with a clean status or
//       gives a grammar that compiles with ember's GBNF parser.
// Besides those checks: no crash, sanitizer report, leak or hang.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/constrain/int_range.h"
#include "runtime/constrain/json_schema.h"
#include "runtime/constrain/regex_gbnf.h"
#include "sampling/grammar/matcher.h"

namespace {

namespace grammar = ember::grammar;

[[noreturn]] void Fail(const std::string& what, const std::string& gbnf) {
  std::fprintf(stderr, "json_schema_fuzz: %s\n--- grammar ---\n%s\n", what.c_str(), gbnf.c_str());
  std::abort();
}

// Compiles or aborts: a converter must never produce a grammar ember rejects.
std::shared_ptr<grammar::CompiledGrammar> MustCompile(const std::string& gbnf) {
  auto g = std::make_shared<grammar::CompiledGrammar>();
  const ember::Status s = grammar::CompileGbnf(gbnf, "root", g.get());
  if (!s.ok()) Fail("the converted grammar does not compile: " + s.message(), gbnf);
  return g;
}

// The characters of integers as tokens ("0".."9", "-", "+"), and an
// end-of-generation token: a small vocabulary keeps the tables quick to build.
const char kIntChars[] = "0123456789-+";
constexpr int32_t kIntEos = 12;

const std::shared_ptr<const grammar::TokenTrie>& IntTokens() {
  static const auto trie = grammar::TokenTrie::Build(
      kIntEos + 1,
      [](int32_t i) {
        return i == kIntEos ? std::string_view("</s>") : std::string_view(&kIntChars[i], 1);
      },
      [](int32_t i) { return i == kIntEos; });
  return trie;
}

bool Accepts(const std::shared_ptr<const grammar::MaskTables>& tables, const std::string& text) {
  grammar::GrammarMatcher m(tables);
  for (const char c : text) {
    const char* at = std::strchr(kIntChars, c);
    if (at == nullptr || c == '\0' || !m.Accept(static_cast<int32_t>(at - kIntChars))) {
      return false;
    }
  }
  return m.CanEnd();
}

void IntRange(const uint8_t* data, size_t size) {
  if (size < 17) return;
  int64_t lo = 0, hi = 0;
  std::memcpy(&lo, data + 1, 8);
  std::memcpy(&hi, data + 9, 8);
  const bool has_lo = data[0] & 1, has_hi = data[0] & 2, magnitudes = data[0] & 4;
  if (magnitudes) {
    lo = lo == std::numeric_limits<int64_t>::min() ? 0 : (lo < 0 ? -lo : lo);
    hi = hi == std::numeric_limits<int64_t>::min() ? 0 : (hi < 0 ? -hi : hi);
  }
  if (has_lo && has_hi && lo > hi) std::swap(lo, hi);
  std::string expr;
  if (magnitudes) {
    expr = ember::UintRangeGbnf(has_lo ? static_cast<uint64_t>(lo) : 0,
                                has_hi ? std::optional<uint64_t>(hi) : std::nullopt);
  } else {
    expr = ember::IntRangeGbnf(has_lo ? std::optional<int64_t>(lo) : std::nullopt,
                               has_hi ? std::optional<int64_t>(hi) : std::nullopt);
  }
  const std::string gbnf = "root ::= " + expr + "\n";
  std::shared_ptr<const grammar::MaskTables> tables;
  const ember::Status s = grammar::MaskTables::Build(MustCompile(gbnf), IntTokens(), &tables);
  if (!s.ok()) Fail("mask tables: " + s.message(), gbnf);
  const int64_t min = magnitudes ? 0 : std::numeric_limits<int64_t>::min();
  const int64_t lower = magnitudes && !has_lo ? 0 : lo;
  auto expect = [&](int64_t x, bool accepted) {
    if (Accepts(tables, std::to_string(x)) != accepted) {
      Fail(std::to_string(x) + (accepted ? " is refused" : " is accepted") + " (lo " +
               (has_lo || magnitudes ? std::to_string(lower) : "open") + ", hi " +
               (has_hi ? std::to_string(hi) : "open") + ")",
           gbnf);
    }
  };
  // A side left open allows at most kMaxIntegerDigits digits.
  const int64_t open_limit = 10'000'000'000'000'000;  // 10^kMaxIntegerDigits
  auto fits = [&](int64_t x) { return x > -open_limit && x < open_limit; };
  if (has_lo || magnitudes) {
    if (has_hi || fits(lower)) expect(lower, true);
    if (lower > min) expect(lower - 1, false);
  }
  if (has_hi) {
    if (has_lo || magnitudes || fits(hi)) expect(hi, true);
    if (hi < std::numeric_limits<int64_t>::max()) expect(hi + 1, false);
  }
  if ((has_lo || magnitudes) && has_hi) {
    expect(lower +
               static_cast<int64_t>((static_cast<uint64_t>(hi) - static_cast<uint64_t>(lower)) / 2),
           true);
  }
  if (Accepts(tables, "-0") || Accepts(tables, "+1") || Accepts(tables, "00")) {
    Fail("a number JSON does not write is accepted", gbnf);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  if (in[0] == '#') {
    IntRange(data + 1, size - 1);
    return 0;
  }
  std::string gbnf;
  if (in[0] == '/') {
    std::string expr;
    if (!ember::RegexToGbnf(in.substr(1), "char", &expr).ok()) return 0;
    gbnf = "root ::= \"\\\"\" " + expr +
           " \"\\\"\"\nchar ::= [^\"\\\\\\x00-\\x1f] | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" "
           "[0-9a-fA-F]{4})\n";
  } else if (!ember::JsonSchemaToGbnf(in, &gbnf).ok()) {
    return 0;
  }
  (void)MustCompile(gbnf);
  return 0;
}
