// Tokenizers built from GGUF metadata (tokenizer.ggml.*).
//
//  - "llama": SentencePiece-style vocabularies, run through libsentencepiece
//    with a model built from the GGUF arrays (tokenizer_spm.cpp).
//  - "gpt2":  byte-level BPE with the pre-tokenizer named by
//    tokenizer.ggml.pre (tokenizer_bpe.cpp).
//
// Both agree with llama.cpp's tokenizer on the same GGUF (tests/runtime).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "platform/status.h"
#include "runtime/text/string_table.h"

namespace ember {

class GgufFile;

// SentencePiece token types; GGUF's tokenizer.ggml.token_type uses the same values.
enum class TokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

// Bits of VocabData::token_attrs: llama.cpp's LSTRIP / RSTRIP token attributes, which it
// sets by model name (e.g. for Phi-3). Splitting such a special token out of the text also
// removes the whitespace before (lstrip) or after (rstrip) it.
enum TokenAttr : uint8_t {
  kTokenAttrLstrip = 1,
  kTokenAttrRstrip = 2,
};

// Everything a tokenizer needs, read from the GGUF's tokenizer.ggml.* keys.
struct VocabData {
  std::string model;                   // tokenizer.ggml.model: "llama" | "gpt2"
  std::string pre;                     // tokenizer.ggml.pre (BPE pre-tokenizer name), may be empty
  StringTable tokens;                  // [n_vocab] token texts
  std::vector<float> scores;           // may be empty (BPE)
  std::vector<TokenType> token_types;  // same length as tokens (kNormal if absent)
  StringTable merges;                  // BPE only: "a b" pairs, in rank order
  int32_t bos_id = -1;
  int32_t eos_id = -1;
  int32_t eot_id = -1;
  int32_t eom_id = -1;
  int32_t unk_id = -1;
  int32_t pad_id = -1;
  bool add_bos = false;          // tokenizer.ggml.add_bos_token (default per model type)
  bool add_eos = false;          // tokenizer.ggml.add_eos_token
  bool add_space_prefix = true;  // tokenizer.ggml.add_space_prefix (SPM)
  // Decode removes the spaces llama.cpp's clean_up_tokenization_spaces removes (" ," -> ",");
  // on for BPE vocabularies whose pre-tokenizer llama.cpp does not exempt.
  bool clean_spaces = false;
  // Further end-of-generation tokens, found by their text as llama.cpp does ("<|im_end|>",
  // "<|eot_id|>", "<end_of_turn>", ...). EOS, EOT and EOM always end generation.
  std::vector<int32_t> eog_ids;
  std::vector<uint8_t> token_attrs;  // TokenAttr bits per token, or empty (none)
};

// Reads and validates the tokenizer.ggml.* keys. Errors name the key.
Status LoadVocab(const GgufFile& gguf, VocabData* out);

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Builds the tokenizer for vocab.model; unknown models give kUnsupported.
  static Status Create(VocabData vocab, std::unique_ptr<Tokenizer>* out);

  // Encodes UTF-8 text (invalid UTF-8 is handled without crashing).
  // add_special: prepend BOS / append EOS when the vocab's flags say so.
  // parse_special: text that spells a control or user-defined token (e.g.
  // "<|im_start|>") becomes that token instead of being split into pieces.
  virtual std::vector<int32_t> Encode(std::string_view text, bool add_special,
                                      bool parse_special) const = 0;

  // The bytes a token stands for (byte tokens give their single byte, which
  // may be part of a UTF-8 sequence). Control tokens give "" unless
  // render_special, which gives their text.
  std::string TokenToPiece(int32_t id, bool render_special) const;

  // Concatenated pieces (no special tokens rendered unless asked).
  std::string Decode(const std::vector<int32_t>& ids, bool render_special = false) const;

  const VocabData& vocab() const { return vocab_; }
  // Every token's bytes, special tokens rendered as their text ([n_vocab]).
  const StringTable& pieces() const { return pieces_; }
  int32_t n_vocab() const { return static_cast<int32_t>(vocab_.tokens.size()); }
  // End of generation: EOS, EOT, EOM and the like.
  bool IsEndOfGeneration(int32_t id) const;

 protected:
  // Builds the index of special tokens and the end-of-generation set.
  explicit Tokenizer(VocabData vocab);

  // Each token's bytes with specials rendered, filled by the subclass's
  // constructor; TokenToPiece serves from it.
  StringTable pieces_;

  // A piece of the input once special tokens are split out: a token (token >= 0) or the raw
  // text text[offset, offset + length).
  struct Fragment {
    int32_t token;
    size_t offset;
    size_t length;
  };
  // Splits special tokens out of `text` the way llama.cpp's tokenizer_st_partition does:
  // user-defined tokens always, control and unknown ones only when parse_special; longer tokens
  // first over the whole text; whitespace around lstrip/rstrip tokens dropped.
  std::vector<Fragment> SplitSpecial(std::string_view text, bool parse_special) const;

  // The id of the token whose text is `text`, or -1 (token texts are unique: LoadVocab).
  int32_t FindToken(std::string_view text) const { return ids_.Find(vocab_.tokens, text); }

  VocabData vocab_;

 private:
  StringTableIndex ids_;  // token text -> id, over vocab_.tokens
  struct SpecialIndex;
  std::shared_ptr<const SpecialIndex> special_;
  std::vector<bool> eog_;
};

namespace internal {

// Per-model constructors behind Tokenizer::Create.
Status CreateBpeTokenizer(VocabData vocab, std::unique_ptr<Tokenizer>* out);  // tokenizer_bpe.cpp
Status CreateSpmTokenizer(VocabData vocab, std::unique_ptr<Tokenizer>* out);  // tokenizer_spm.cpp

// What llama.cpp derives from tokenizer.ggml.pre besides the split regexes (tokenizer_bpe.cpp).
struct BpePreDefaults {
  bool add_bos = false;        // BOS on by default (llama3, tekken, chameleon)
  bool clean_spaces = true;    // Decode cleans up spaces before punctuation
  bool ignore_merges = false;  // a pre-token that is itself a token is not split further
  bool no_bos = false;         // the vocabulary has no BOS token (chatglm)
};
// False when ember does not implement the pre-tokenizer `pre` ("" means "default").
bool FindBpePreDefaults(std::string_view pre, BpePreDefaults* out);

}  // namespace internal

// Streams detokenized text: holds back the bytes of an unfinished UTF-8
// character until the character completes, so every emitted piece is valid
// UTF-8 (an invalid sequence is emitted as U+FFFD).
class Utf8Stream {
 public:
  // Appends bytes; returns the text that is complete so far.
  std::string Push(std::string_view bytes);
  // Returns whatever is held back (as U+FFFD for an incomplete sequence).
  std::string Flush();

 private:
  std::string pending_;
};

}  // namespace ember
