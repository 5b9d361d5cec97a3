// SentencePiece vocabularies ("llama"), encoded as llama.cpp's SPM tokenizer (llm_tokenizer_spm)
// does, by ember's own code (docs/DESIGN.md §12: why not libsentencepiece):
//
//  - A fragment's text is cut into UTF-8 characters. Adjacent symbols whose joined text is a
//    token are candidates for merging; the candidate with the highest score of that token goes
//    first (ties: the leftmost), and after each merge the new symbol's pairs with its
//    neighbours become candidates. Every token takes part, whatever its type (unknown,
//    control, user-defined and byte tokens too), as in llama.cpp.
//  - What is left unmerged and is no token (a character the vocabulary lacks) becomes the byte
//    tokens of its bytes ("<0xAB>", else the one-byte token), or the unknown token.
//  - No normalisation: we add the "▁" prefix where llama.cpp does (start of text and after a
//    special token) and replace spaces by "▁" as it does.
//  - Special tokens are split out before (Tokenizer::SplitSpecial).
//  - Invalid UTF-8: llama.cpp cuts the text into "characters" by lead byte and emits the bytes
//    of those that are no token. We cut the same way and emit byte tokens for malformed
//    characters ourselves.
#include <algorithm>
#include <array>
#include <cstdint>
#include <queue>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/text/tokenizer.h"
#include "runtime/text/unicode.h"

namespace ember {

namespace {

constexpr char kSpaceMark[] = "\xE2\x96\x81";  // U+2581 "▁"

// Whether token `text` is a byte token "<0xAB>"; sets *byte.
bool ParseByteToken(std::string_view text, int* byte) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return false;
  int v = 0;
  for (int k = 3; k < 5; ++k) {
    const char c = text[k];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return false;  // SentencePiece writes upper-case hex
    v = v * 16 + d;
  }
  *byte = v;
  return true;
}

class SpmTokenizer final : public Tokenizer {
 public:
  explicit SpmTokenizer(VocabData vocab) : Tokenizer(std::move(vocab)) {}

  Status Init() {
    const size_t n = vocab_.tokens.size();
    // Byte tokens, looked up the way llama.cpp's byte_to_token does: "<0xAB>", else the
    // one-byte token.
    byte_token_.fill(-1);
    std::array<int32_t, 256> one_byte;
    one_byte.fill(-1);
    for (size_t i = 0; i < n; ++i) {
      const std::string_view t = vocab_.tokens[i];
      int b;
      if (ParseByteToken(t, &b)) {
        byte_token_[b] = static_cast<int32_t>(i);
      } else if (t.size() == 1) {
        one_byte[static_cast<uint8_t>(t[0])] = static_cast<int32_t>(i);
      }
    }
    for (int b = 0; b < 256; ++b) {
      if (byte_token_[b] < 0) byte_token_[b] = one_byte[b];
    }
    pieces_.Reserve(n, vocab_.tokens.text_bytes());
    for (size_t i = 0; i < n; ++i) {
      if (!pieces_.Add(RenderPiece(static_cast<int32_t>(i)))) {
        return Unsupported("the vocabulary's pieces pass 4 GiB");
      }
    }
    pieces_.ShrinkToFit();
    return Status::Ok();
  }

  std::vector<int32_t> Encode(std::string_view text, bool add_special,
                              bool parse_special) const override {
    std::vector<int32_t> out;
    if (add_special && vocab_.add_bos && vocab_.bos_id >= 0) out.push_back(vocab_.bos_id);
    bool after_special = true;  // the start of the text counts as following a special token
    std::string piece;
    for (const Fragment& f : SplitSpecial(text, parse_special)) {
      if (f.token >= 0) {
        out.push_back(f.token);
        after_special = true;
        continue;
      }
      piece.clear();
      if (vocab_.add_space_prefix && after_special) piece = kSpaceMark;
      for (const char c : text.substr(f.offset, f.length)) {
        if (c == ' ') {
          piece += kSpaceMark;
        } else {
          piece.push_back(c);
        }
      }
      EncodePiece(piece, &out);
      after_special = false;
    }
    if (add_special && vocab_.add_eos && vocab_.eos_id >= 0) out.push_back(vocab_.eos_id);
    return out;
  }

 private:
  // The piece of a token with specials rendered (llama.cpp's token_to_piece for SPM).
  std::string RenderPiece(int32_t id) const {
    const std::string_view text = vocab_.tokens[id];
    switch (vocab_.token_types[id]) {
      case TokenType::kControl:
      case TokenType::kUnknown:
      case TokenType::kUserDefined:
        return std::string(text);
      case TokenType::kNormal: {
        std::string out;
        for (size_t i = 0; i < text.size();) {
          if (text.compare(i, 3, kSpaceMark) == 0) {
            out.push_back(' ');
            i += 3;
          } else {
            out.push_back(text[i++]);
          }
        }
        return out;
      }
      case TokenType::kByte: {
        int b;
        return ParseByteToken(text, &b) ? std::string(1, static_cast<char>(b)) : std::string(text);
      }
      default:
        return "";  // unused and undefined tokens print nothing
    }
  }

  // Encodes one fragment (spaces already escaped): runs of well-formed characters are merged
  // (EncodeValid), malformed ones become byte tokens.
  void EncodePiece(std::string_view s, std::vector<int32_t>* out) const {
    size_t run = 0, i = 0;
    while (i < s.size()) {
      const size_t len = std::min(unicode::Utf8SeqLen(static_cast<uint8_t>(s[i])), s.size() - i);
      if (unicode::CheckUtf8(s.substr(0, i + len), i) == static_cast<int>(len)) {
        i += len;
        continue;
      }
      EncodeValid(s.substr(run, i - run), out);
      EmitBytes(s.substr(i, len), out);
      i += len;
      run = i;
    }
    EncodeValid(s.substr(run), out);
  }

  // The byte tokens of s (or the unknown token where a byte has none).
  void EmitBytes(std::string_view s, std::vector<int32_t>* out) const {
    for (const char c : s) {
      const int32_t id = byte_token_[static_cast<uint8_t>(c)];
      if (id >= 0) {
        out->push_back(id);
      } else if (vocab_.unk_id >= 0) {
        out->push_back(vocab_.unk_id);
      }
    }
  }

  // A run of well-formed UTF-8: characters merged pairwise by token score (the header).
  void EncodeValid(std::string_view s, std::vector<int32_t>* out) const {
    if (s.empty()) return;
    // The symbols: byte ranges of s in a doubly linked list; a merged-away symbol has len 0.
    struct Symbol {
      uint32_t begin, len;
      int32_t prev, next;
    };
    std::vector<Symbol> sym;
    for (size_t i = 0; i < s.size();) {
      const size_t len = std::min(unicode::Utf8SeqLen(static_cast<uint8_t>(s[i])), s.size() - i);
      const auto k = static_cast<int32_t>(sym.size());
      sym.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(len), k - 1, k + 1});
      i += len;
    }
    sym.back().next = -1;
    // A candidate merge of symbol `left` and its right neighbour, `len` bytes together when it
    // was made (a symbol that has grown or gone since makes it stale).
    struct Candidate {
      float score;
      int32_t left;
      uint32_t len;
    };
    auto later = [](const Candidate& a, const Candidate& b) {  // the queue's top goes first
      return a.score < b.score || (a.score == b.score && a.left > b.left);
    };
    std::priority_queue<Candidate, std::vector<Candidate>, decltype(later)> queue(later);
    auto consider = [&](int32_t left) {
      if (left < 0 || sym[left].next < 0) return;
      const Symbol& l = sym[left];
      const uint32_t len = l.len + sym[l.next].len;
      const int32_t id = FindToken(s.substr(l.begin, len));
      if (id < 0) return;
      queue.push({vocab_.scores.empty() ? 0.0f : vocab_.scores[id], left, len});
    };
    for (int32_t i = 0; i + 1 < static_cast<int32_t>(sym.size()); ++i) consider(i);
    while (!queue.empty()) {
      const Candidate c = queue.top();
      queue.pop();
      Symbol& l = sym[c.left];
      if (l.len == 0 || l.next < 0) continue;
      Symbol& r = sym[l.next];
      if (r.len == 0 || l.len + r.len != c.len) continue;  // stale
      l.len += r.len;
      r.len = 0;
      l.next = r.next;
      if (l.next >= 0) sym[l.next].prev = c.left;
      consider(l.prev);
      consider(c.left);
    }
    for (int32_t i = 0; i >= 0; i = sym[i].next) {
      const std::string_view t = s.substr(sym[i].begin, sym[i].len);
      const int32_t id = FindToken(t);
      if (id >= 0) {
        out->push_back(id);
      } else {
        EmitBytes(t, out);  // a character the vocabulary lacks (merged symbols are tokens)
      }
    }
  }

  std::array<int32_t, 256> byte_token_;  // byte -> its token, or -1
};

}  // namespace

namespace internal {

Status CreateSpmTokenizer(VocabData vocab, std::unique_ptr<Tokenizer>* out) {
  auto tok = std::unique_ptr<SpmTokenizer>(new SpmTokenizer(std::move(vocab)));
  EMBER_RETURN_IF_ERROR(tok->Init());
  *out = std::move(tok);
  return Status::Ok();
}

}  // namespace internal

}  // namespace ember
