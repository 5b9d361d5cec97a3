// libFuzzer target: encoding and decoding arbitrary bytes with every
// vocabulary in ../shared/vocab (SentencePiece and byte-level BPE, each with
// its pre-tokenizer).
//
// Input: byte 0 picks the vocabulary (in name order; each is loaded once, on
// first use), byte 1 holds flags (add_special, parse_special,
// render_special), the rest is the text. Checks, besides no crash, sanitizer
// report, leak or hang:
//  - every id is in [0, n_vocab);
//  - text that is valid UTF-8 and splits into ordinary pieces (no control,
//    user-defined or unknown token; parse_special and add_special off)
//    decodes back to itself: the pieces give the text (after the space an
//    SPM vocabulary puts in front), and Decode gives it too unless the
//    vocabulary cleans spaces (" ," -> ","). Not for text holding U+2581,
//    which SentencePiece writes for a space;
//  - the input read as 16-bit ids (any values) decodes without crashing, and
//    Utf8Stream turns the pieces into valid UTF-8 that Flush completes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
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

const Tokenizer& Vocab(size_t i) {
  static const std::vector<std::string> files = VocabFiles();
  static std::vector<std::unique_ptr<Tokenizer>> loaded(files.size());
  std::unique_ptr<Tokenizer>& tok = loaded[i % files.size()];
  if (!tok) {
    std::unique_ptr<ember::GgufFile> f;
    ember::VocabData v;
    if (!ember::GgufFile::Open(files[i % files.size()], &f).ok() ||
        !ember::LoadVocab(*f, &v).ok() || !Tokenizer::Create(std::move(v), &tok).ok()) {
      std::abort();
    }
  }
  return *tok;
}

bool ValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const int r = ember::unicode::CheckUtf8(s, i);
    if (r <= 0) return false;
    i += static_cast<size_t>(r);
  }
  return true;
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
  const Tokenizer& tok = Vocab(data[0]);
  const bool add_special = data[1] & 1, parse_special = data[1] & 2, render = data[1] & 4;
  const std::string text(reinterpret_cast<const char*>(data + 2), size - 2);
  const int32_t n_vocab = tok.n_vocab();

  const std::vector<int32_t> ids = tok.Encode(text, add_special, parse_special);
  for (const int32_t id : ids) {
    if (id < 0 || id >= n_vocab) std::abort();
  }
  const std::string decoded = tok.Decode(ids, render);
  const bool spm = tok.vocab().model == "llama";
  if (!add_special && !parse_special && ValidUtf8(text) && Ordinary(tok, ids) &&
      !(spm && text.find("\xE2\x96\x81") != std::string::npos)) {
    std::string pieces;
    for (const int32_t id : ids) pieces += tok.TokenToPiece(id, false);
    const std::string want =
        spm && tok.vocab().add_space_prefix && !text.empty() ? " " + text : text;
    if (pieces != want) std::abort();  // the pieces must spell the text
    if (!tok.vocab().clean_spaces && decoded != text) std::abort();
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
