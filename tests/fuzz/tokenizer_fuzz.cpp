// libFuzzer target: encoding and decoding arbitrary bytes with every
// vocabulary in ../shared/vocab (SentencePiece and byte-level BPE, each with
// its pre-tokenizer).
//
// Input: byte 0 picks the vocabulary (in name order; each is loaded once, on
// first use), byte 1 holds flags (add_special, parse_special,
// render_special), the rest is the text. Checks, besides no crash, sanitizer
// report, leak or hang:
//  - every id is in [0, n_vocab);
//  - text that is valid UTF-8, whose every byte the vocabulary can spell,
//    and that splits into ordinary pieces (no control, user-defined or
//    unknown token; parse_special and add_special off)
//    decodes back to itself: the pieces give the text (after the space an
//    SPM vocabulary puts in front), and Decode gives it too unless the
//    vocabulary cleans spaces (" ," -> ","). Not for text holding U+2581,
//    which SentencePiece writes for a space;
//  - the input read as 16-bit ids (any values) decodes without crashing, and
//    Utf8Stream turns the pieces into valid UTF-8 that Flush completes.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "runtime/gguf/gguf.h"
#include "runtime/text/tokenizer.h"
#include "runtime/text/unicode.h"
#include "support/test_paths.h"

namespace {

using ember::Tokenizer;
using ember::TokenType;

std::vector<std::string> VocabFiles() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(ember::test::SharedDir() + "/vocab")) {
    if (e.path().extension() == ".gguf") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) std::abort();  // nothing to fuzz: ../shared/vocab is missing
  return files;
}

struct Vocabulary {
  std::unique_ptr<Tokenizer> tok;
  // A byte-level BPE vocabulary spells byte b with the token of GPT-2's
  // character for b; some lack a few (starcoder: 0xF1 among them), and the
  // bytes without one are dropped, as llama.cpp drops them. SentencePiece
  // vocabularies here have all 256 byte tokens.
  std::array<bool, 256> spells{};
};

const Vocabulary& Vocab(size_t i) {
  static const std::vector<std::string> files = VocabFiles();
  static std::vector<Vocabulary> loaded(files.size());
  Vocabulary& v = loaded[i % files.size()];
  if (!v.tok) {
    std::unique_ptr<ember::GgufFile> f;
    ember::VocabData data;
    if (!ember::GgufFile::Open(files[i % files.size()], &f).ok() ||
        !ember::LoadVocab(*f, &data).ok() || !Tokenizer::Create(std::move(data), &v.tok).ok()) {
      std::abort();
    }
    const ember::StringTable& tokens = v.tok->vocab().tokens;
    std::unordered_set<std::string_view> texts;
    for (size_t t = 0; t < tokens.size(); ++t) texts.insert(tokens[t]);
    for (int b = 0; b < 256; ++b) {
      std::string c;
      ember::unicode::AppendUtf8(ember::unicode::ByteToGpt2Char(static_cast<uint8_t>(b)), &c);
      v.spells[static_cast<size_t>(b)] = v.tok->vocab().model != "gpt2" || texts.count(c) > 0;
    }
  }
  return v;
}

bool Spells(const Vocabulary& v, std::string_view text) {
  for (const char c : text) {
    if (!v.spells[static_cast<uint8_t>(c)]) return false;
  }
  return true;
}

bool ValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const int r = ember::unicode::CheckUtf8(s, i);
    if (r <= 0) return false;
    i += static_cast<size_t>(r);
  }
  return true;
}

std::string Hex(std::string_view s) {
  std::string out;
  char b[4];
  for (const char c : s) {
    std::snprintf(b, sizeof(b), "%02x ", static_cast<uint8_t>(c));
    out += b;
  }
  return out;
}

[[noreturn]] void Fail(const char* what, std::string_view text, std::string_view got,
                       const std::vector<int32_t>& ids) {
  std::string id_list;
  for (const int32_t id : ids) id_list += std::to_string(id) + " ";
  std::fprintf(stderr, "tokenizer_fuzz: %s\n  text %s\n  got  %s\n  ids  %s\n", what,
               Hex(text).c_str(), Hex(got).c_str(), id_list.c_str());
  std::abort();
}

bool Ordinary(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  for (const int32_t id : ids) {
    const TokenType t = tok.vocab().token_types[static_cast<size_t>(id)];
    if (t == TokenType::kControl || t == TokenType::kUserDefined || t == TokenType::kUnknown) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const Vocabulary& vocab = Vocab(data[0]);
  const Tokenizer& tok = *vocab.tok;
  const bool add_special = data[1] & 1, parse_special = data[1] & 2, render = data[1] & 4;
  const std::string text(reinterpret_cast<const char*>(data + 2), size - 2);
  const int32_t n_vocab = tok.n_vocab();

  const std::vector<int32_t> ids = tok.Encode(text, add_special, parse_special);
  for (const int32_t id : ids) {
    if (id < 0 || id >= n_vocab) std::abort();
  }
  const std::string decoded = tok.Decode(ids, render);
  const bool spm = tok.vocab().model == "llama";
  if (!add_special && !parse_special && ValidUtf8(text) && Spells(vocab, text) &&
      Ordinary(tok, ids) && !(spm && text.find("\xE2\x96\x81") != std::string::npos)) {
    std::string pieces;
    for (const int32_t id : ids) pieces += tok.TokenToPiece(id, false);
    const std::string want =
        spm && tok.vocab().add_space_prefix && !text.empty() ? " " + text : text;
    if (pieces != want) Fail("the pieces do not spell the text", want, pieces, ids);
    if (!tok.vocab().clean_spaces && decoded != text) {
      Fail("decoding does not give the text", text, decoded, ids);
    }
  }

  // Arbitrary ids (16 bits each, so out-of-range ones too) through Decode
  // and a UTF-8 stream.
  std::vector<int32_t> any;
  for (size_t i = 2; i + 1 < size; i += 2) {
    any.push_back(static_cast<int32_t>(data[i] | (data[i + 1] << 8)) * (data[1] & 8 ? 3 : 1) -
                  (data[1] & 16 ? 1 : 0));
  }
  (void)tok.Decode(any, render);
  ember::Utf8Stream stream;
  std::string streamed;
  for (const int32_t id : any) streamed += stream.Push(tok.TokenToPiece(id, render));
  streamed += stream.Flush();
  if (!ValidUtf8(streamed)) std::abort();
  return 0;
}
