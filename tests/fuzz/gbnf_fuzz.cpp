// libFuzzer target: the GBNF parser, compiler and matcher on hostile input.
//
// Input: a grammar's text, optionally followed by a NUL byte and bytes that
// choose tokens. The grammar is parsed and compiled; if it compiles (and is
// small enough to build tables for quickly), its mask tables are built for a
// small vocabulary (the 256 bytes, some multi-byte characters and split
// ones, runs, JSON-ish pieces), and a walk takes, at each step, the admitted
// token the next input byte picks. At every step the fast mask must equal
// trying every token (matcher.h's contract): a difference aborts. Any other
// outcome is fine except a crash, a sanitizer report, a leak or a hang.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "sampling/grammar/matcher.h"

namespace {

const std::shared_ptr<const ember::grammar::TokenTrie>& Vocab() {
  static const std::vector<std::string> tokens = [] {
    std::vector<std::string> t;
    for (int b = 0; b < 256; ++b) t.push_back(std::string(1, static_cast<char>(b)));
    for (const char* s :
         {"ab",   "abc",  "\xC3\xA9", "\xE6\x97\xA5", "\xE6", "\x97\xA5", "\xF0\x9F\x98\x80",
          "  ",   "    ", "\": ",     "\", \"",       "{\"",  "}]",       "true",
          "null", "1.5",  "-2",       "aaaaaaaa",     "\\n",  "\\u00e9",  "xyz",
          "</s>"}) {
      t.push_back(s);
    }
    return t;
  }();
  static const auto trie = ember::grammar::TokenTrie::Build(
      static_cast<int32_t>(tokens.size()),
      [](int32_t i) { return std::string_view(tokens[static_cast<size_t>(i)]); },
      [](int32_t i) { return i == static_cast<int32_t>(tokens.size()) - 1; });
  return trie;
}

bool Bit(const std::vector<uint64_t>& bits, int32_t t) {
  return (bits[static_cast<size_t>(t) >> 6] >> (t & 63)) & 1;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t nul = in.find('\0');
  const std::string_view text = in.substr(0, nul);
  const std::string_view choices = nul == std::string_view::npos ? "" : in.substr(nul + 1);
  auto compiled = std::make_shared<ember::grammar::CompiledGrammar>();
  if (!ember::grammar::CompileGbnf(text, "root", compiled.get()).ok()) return 0;
  if (compiled->positions.size() > 3000) return 0;  // (tables would take long; parsing is covered)
  std::shared_ptr<const ember::grammar::MaskTables> tables;
  if (!ember::grammar::MaskTables::Build(compiled, Vocab(), &tables).ok()) return 0;
  ember::grammar::GrammarMatcher m(tables);
  const int32_t n = Vocab()->n_vocab();
  for (size_t step = 0; step < 16; ++step) {
    std::vector<uint64_t> fast, slow;
    m.FillMask(&fast);
    m.FillMaskBruteForce(&slow);
    if (fast != slow) std::abort();  // the contract: fast masks equal trying every token
    std::vector<int32_t> admitted;
    for (int32_t t = 0; t < n; ++t) {
      if (Bit(fast, t)) admitted.push_back(t);
    }
    if (admitted.empty() || step >= choices.size()) break;
    const int32_t t = admitted[static_cast<uint8_t>(choices[step]) % admitted.size()];
    if (!m.Accept(t)) std::abort();  // an admitted token must be accepted
    if (m.finished()) break;
  }
  return 0;
}
