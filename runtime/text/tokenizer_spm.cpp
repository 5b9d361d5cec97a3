// SentencePiece vocabularies ("llama"), encoded by libsentencepiece with a model built from the
// GGUF arrays, set up to give llama.cpp's SPM tokenization (llm_tokenizer_spm):
//
//  - llama.cpp merges adjacent symbols by the score of the merged text, whatever that token's
//    type, which is SentencePiece's BPE algorithm (same priority: higher score, then leftmost)
//    when every piece is an ordinary one. So every token goes in as NORMAL except the byte
//    tokens (for byte fallback), and an extra UNKNOWN piece that SentencePiece requires; the
//    vocabulary's own unknown, control and user-defined tokens stay mergeable as in llama.cpp.
//  - No normalisation at all: the "identity" normaliser without dummy prefix, whitespace
//    removal or escaping. We add the "▁" prefix ourselves where llama.cpp does (start of text
//    and after a special token) and replace spaces by "▁" as it does.
//  - Special tokens are split out before (Tokenizer::SplitSpecial).
//  - Invalid UTF-8: SentencePiece would turn each bad byte into U+FFFD, llama.cpp cuts the text
//    into "characters" by lead byte and emits the bytes of those that are no token. We cut the
//    same way and emit byte tokens for malformed characters ourselves.
#include <sentencepiece_processor.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "runtime/text/tokenizer.h"
#include "runtime/text/unicode.h"

namespace ember {

namespace {

constexpr char kSpaceMark[] = "\xE2\x96\x81";  // U+2581 "▁"

// --- protobuf wire format (just what ModelProto needs) ----------------------------------------

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
void PutTag(uint32_t field, uint32_t wire_type, std::string* out) {
  PutVarint((static_cast<uint64_t>(field) << 3) | wire_type, out);
}
// int32 fields are varints of the sign-extended 64-bit value.
void PutInt(uint32_t field, int64_t v, std::string* out) {
  PutTag(field, 0, out);
  PutVarint(static_cast<uint64_t>(v), out);
}
void PutBytes(uint32_t field, std::string_view s, std::string* out) {
  PutTag(field, 2, out);
  PutVarint(s.size(), out);
  out->append(s);
}
void PutFloat(uint32_t field, float f, std::string* out) {
  PutTag(field, 5, out);
  uint32_t bits;
  static_assert(sizeof(bits) == sizeof(f));
  std::memcpy(&bits, &f, sizeof(bits));
  for (int k = 0; k < 4; ++k) out->push_back(static_cast<char>((bits >> (8 * k)) & 0xFF));
}

// SentencePiece's ModelProto.SentencePiece.Type values.
constexpr int kSpNormal = 1;
constexpr int kSpUnknown = 2;
constexpr int kSpByte = 6;

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
    std::vector<bool> is_byte_piece(n, false);
    int n_bytes = 0;
    for (size_t i = 0; i < n; ++i) {
      const std::string_view t = vocab_.tokens[i];
      int b;
      if (ParseByteToken(t, &b)) {
        byte_token_[b] = static_cast<int32_t>(i);  // texts are unique: one token per byte
        if (vocab_.token_types[i] == TokenType::kByte) {
          is_byte_piece[i] = true;
          ++n_bytes;
        }
      } else if (t.size() == 1) {
        one_byte[static_cast<uint8_t>(t[0])] = static_cast<int32_t>(i);
      }
    }
    for (int b = 0; b < 256; ++b) {
      if (byte_token_[b] < 0) byte_token_[b] = one_byte[b];
    }
    // SentencePiece checks that byte fallback has all 256 bytes; without them the byte tokens
    // are ordinary pieces and unknown characters come out as the unknown token.
    const bool byte_fallback = n_bytes == 256;

    // The extra UNKNOWN piece SentencePiece insists on, with a text no token has.
    StringTableIndex texts;
    texts.Build(vocab_.tokens);
    std::string unk_text = "<ember-unk>";
    while (texts.Find(vocab_.tokens, unk_text) >= 0) unk_text += "_";
    sp_unk_ = static_cast<int32_t>(n);

    std::string proto, msg;
    for (size_t i = 0; i <= n; ++i) {
      msg.clear();
      const bool extra = i == n;
      PutBytes(1, extra ? std::string_view(unk_text) : std::string_view(vocab_.tokens[i]), &msg);
      PutFloat(2, extra || vocab_.scores.empty() ? 0.0f : vocab_.scores[i], &msg);
      const int type = extra ? kSpUnknown : byte_fallback && is_byte_piece[i] ? kSpByte : kSpNormal;
      PutInt(3, type, &msg);
      PutBytes(1, msg, &proto);  // ModelProto.pieces
    }
    msg.clear();
    PutInt(3, 2, &msg);                            // TrainerSpec.model_type = BPE
    PutInt(4, static_cast<int64_t>(n + 1), &msg);  // vocab_size
    PutInt(35, byte_fallback ? 1 : 0, &msg);       // byte_fallback
    PutInt(40, sp_unk_, &msg);                     // unk_id
    PutInt(41, -1, &msg);                          // bos_id: we add BOS/EOS ourselves
    PutInt(42, -1, &msg);                          // eos_id
    PutInt(43, -1, &msg);                          // pad_id
    PutBytes(2, msg, &proto);
    msg.clear();
    PutBytes(1, "identity", &msg);  // NormalizerSpec.name
    PutInt(3, 0, &msg);             // add_dummy_prefix
    PutInt(4, 0, &msg);             // remove_extra_whitespaces
    PutInt(5, 0, &msg);             // escape_whitespaces
    PutBytes(3, msg, &proto);

    const auto st = sp_.LoadFromSerializedProto(proto);
    if (!st.ok()) {
      return BadFormat(std::string("SentencePiece rejected the vocabulary: ") + st.message());
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

  // Encodes one fragment (spaces already escaped): runs of well-formed characters go to
  // SentencePiece, malformed ones become byte tokens.
  void EncodePiece(std::string_view s, std::vector<int32_t>* out) const {
    size_t run = 0, i = 0;
    while (i < s.size()) {
      const size_t len = std::min(unicode::Utf8SeqLen(static_cast<uint8_t>(s[i])), s.size() - i);
      if (unicode::CheckUtf8(s.substr(0, i + len), i) == static_cast<int>(len)) {
        i += len;
        continue;
      }
      EncodeValid(s.substr(run, i - run), out);
      for (size_t k = i; k < i + len; ++k) {
        const int32_t id = byte_token_[static_cast<uint8_t>(s[k])];
        if (id >= 0) {
          out->push_back(id);
        } else if (vocab_.unk_id >= 0) {
          out->push_back(vocab_.unk_id);
        }
      }
      i += len;
      run = i;
    }
    EncodeValid(s.substr(run), out);
  }

  void EncodeValid(std::string_view s, std::vector<int32_t>* out) const {
    if (s.empty()) return;
    std::vector<int> ids;
    const auto st = sp_.Encode(s, &ids);
    if (!st.ok()) return;  // only fails when no model is loaded
    for (const int id : ids) {
      if (id != sp_unk_) {
        out->push_back(id);
      } else if (vocab_.unk_id >= 0) {
        out->push_back(vocab_.unk_id);
      }
    }
  }

  sentencepiece::SentencePieceProcessor sp_;
  int32_t sp_unk_ = -1;
  std::array<int32_t, 256> byte_token_;
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
