// Byte-level BPE ("gpt2" vocabularies), as llama.cpp's llm_tokenizer_bpe does it:
//  1. special tokens are split out (Tokenizer::SplitSpecial);
//  2. each remaining text is cut into pre-tokens by the regexes that tokenizer.ggml.pre names,
//     applied one after another (each splits every piece into its matches and the gaps);
//  3. each pre-token's UTF-8 bytes become GPT-2's printable characters;
//  4. adjacent symbols merge, lowest merge rank first (leftmost among equals), until no
//     adjacent pair has a rank;
//  5. a symbol that is not a token falls back to the tokens of its single bytes.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <queue>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/text/string_index.h"
#include "runtime/text/tokenizer.h"
#include "runtime/text/unicode.h"

namespace ember {

namespace {

// ---------------------------------------------------------------------------------------------
// Pre-tokenizers: llama.cpp's regex lists per tokenizer.ggml.pre (llama-vocab.cpp), with the
// flags its loader sets for each name.

#define EMBER_CONTRACTIONS "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"

constexpr const char* kGpt2 =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
constexpr const char* kLlama3 = EMBER_CONTRACTIONS
    "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+"
    "|\\s+(?!\\S)|\\s+";
constexpr const char* kQwen2 = EMBER_CONTRACTIONS
    "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+"
    "|\\s+(?!\\S)|\\s+";
constexpr const char* kQwen35 = EMBER_CONTRACTIONS
    "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*"
    "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char* kCjk =
    "[\xe4\xb8\x80-\xe9\xbe\xa5\xe0\xa0\x80-\xe4\xb8\x80\xea\xb0\x80-\xed\x9f\xbf]+";
// Mistral's tekken and GPT-4o split letter runs at case changes; llama.cpp spells "upper" as
// "a letter that is not a-z" and "lower" as "a letter that is not A-Z".
#define EMBER_UPPER "((?=[\\p{L}])([^a-z]))"
#define EMBER_LOWER "((?=[\\p{L}])([^A-Z]))"
constexpr const char* kTekken =
    "[^\\r\\n\\p{L}\\p{N}]?" EMBER_UPPER "*" EMBER_LOWER "+|[^\\r\\n\\p{L}\\p{N}]?" EMBER_UPPER
    "+" EMBER_LOWER "*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char* kGpt4o =
    "[^\\r\\n\\p{L}\\p{N}]?" EMBER_UPPER "*" EMBER_LOWER "+" EMBER_CONTRACTIONS
    "?|[^\\r\\n\\p{L}\\p{N}]?" EMBER_UPPER "+" EMBER_LOWER "*" EMBER_CONTRACTIONS
    "?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
#define EMBER_UPPER_M "((?=[\\p{L}\\p{M}])([^a-z]))"
#define EMBER_LOWER_M "((?=[\\p{L}\\p{M}])([^A-Z]))"
constexpr const char* kGraniteMulti =
    "[^\\r\\n\\p{L}\\p{N}]?" EMBER_UPPER_M "*" EMBER_LOWER_M "+" EMBER_CONTRACTIONS
    "?|[^\\r\\n\\p{L}\\p{N}]?" EMBER_UPPER_M "+" EMBER_LOWER_M "*" EMBER_CONTRACTIONS
    "?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char* kPoro =
    " ?[^(\\s|.,!?\xe2\x80\xa6\xe3\x80\x82\xef\xbc\x8c\xe3\x80\x81\xe0\xa5\xa4\xdb\x94\xd8\x8c)]+";

struct PreTokenizer {
  std::vector<const char*> names;
  std::vector<const char*> regexes;
  internal::BpePreDefaults flags;
};

// Flags: {add_bos, clean_spaces, ignore_merges, no_bos}.
constexpr internal::BpePreDefaults kClean{false, true, false, false};
constexpr internal::BpePreDefaults kKeep{false, false, false, false};

const std::vector<PreTokenizer>& PreTokenizers() {
  static const std::vector<PreTokenizer> table = {
      {{"default", ""}, {"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2, "\\p{N}+", "[0-9][0-9][0-9]"}, kClean},
      {{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
        "mellum", "modern-bert", "exaone4", "jina-v1-en", "jina-v2-code", "roberta-bpe", "mpt",
        "olmo", "jais"},
       {kGpt2},
       kClean},
      {{"trillion", "granite-docling"}, {kGpt2}, kKeep},
      {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
        "jina-v5-nano"},
       {kLlama3},
       {true, true, true, false}},
      {{"dbrx", "smaug-bpe"}, {kLlama3}, kClean},
      {{"chatglm-bpe"}, {kLlama3}, {false, true, false, true}},
      {{"glm4", "glm5"}, {kLlama3}, {false, true, true, true}},
      {{"deepseek-llm"},
       {"[\r\n]",
        "\\s?[A-Za-z\xc2\xb5\xc3\x80-\xc3\x96\xc3\x98-\xc3\xb6\xc3\xb8-\xc6\xba\xc6\xbc-\xc6\xbf"
        "\xc7\x84-\xca\x93\xca\x95-\xca\xaf\xcd\xb0-\xcd\xb3\xcd\xb6\xcd\xb7\xcd\xbb-\xcd\xbd"
        "\xcd\xbf\xce\x86\xce\x88-\xce\x8a\xce\x8c\xce\x8e-\xce\xa1\xce\xa3-\xcf\xb5\xcf\xb7-"
        "\xd2\x81\xd2\x8a-\xd4\xaf\xd4\xb1-\xd5\x96\xe1\x82\xa0-\xe1\x83\x85\xe1\x8e\xa0-"
        "\xe1\x8f\xb5\xe1\x8f\xb8-\xe1\x8f\xbd\xe1\xb2\x90-\xe1\xb2\xba\xe1\xb2\xbd-\xe1\xb2\xbf"
        "\xe1\xb4\x80-\xe1\xb4\xab\xe1\xb5\xab-\xe1\xb5\xb7\xe1\xb5\xb9-\xe1\xb6\x9a\xe1\xb8\x80-"
        "\xe1\xbc\x95\xe1\xbc\x98-\xe1\xbc\x9d\xe1\xbc\xa0-\xe1\xbd\x85\xe1\xbd\x88-\xe1\xbd\x8d"
        "\xe1\xbd\x90-\xe1\xbd\x97\xe1\xbd\x99\xe1\xbd\x9b\xe1\xbd\x9d\xe1\xbd\x9f-\xe1\xbd\xbd"
        "\xe1\xbe\x80-\xe1\xbe\xb4\xe1\xbe\xb6-\xe1\xbe\xbc\xe1\xbe\xbe\xe1\xbf\x82-\xe1\xbf\x84"
        "\xe1\xbf\x86-\xe1\xbf\x8c\xe1\xbf\x90-\xe1\xbf\x93\xe1\xbf\x96-\xe1\xbf\x9b\xe1\xbf\xa0-"
        "\xe1\xbf\xac\xe1\xbf\xb2-\xe1\xbf\xb4\xe1\xbf\xb6-\xe1\xbf\xbc\xe2\x84\x82\xe2\x84\x87"
        "\xe2\x84\x8a-\xe2\x84\x93\xe2\x84\x95\xe2\x84\x99-\xe2\x84\x9d\xe2\x84\xa4\xe2\x84\xa6"
        "\xe2\x84\xa8\xe2\x84\xaa-\xe2\x84\xad\xe2\x84\xaf-\xe2\x84\xb4\xe2\x84\xb9\xe2\x84\xbc-"
        "\xe2\x84\xbf\xe2\x85\x85-\xe2\x85\x89\xe2\x85\x8e\xe2\x86\x83\xe2\x86\x84\xe2\xb0\x80-"
        "\xe2\xb1\xbb\xe2\xb1\xbe-\xe2\xb3\xa4\xe2\xb3\xab-\xe2\xb3\xae\xe2\xb3\xb2\xe2\xb3\xb3"
        "\xea\x99\x80-\xea\x99\xad\xea\x9a\x80-\xea\x9a\x9b\xea\x9c\xa2-\xea\x9d\xaf\xea\x9d\xb1-"
        "\xea\x9e\x87\xea\x9e\x8b-\xea\x9e\x8e\xea\xad\xb0-\xea\xae\xbf\xef\xac\x80-\xef\xac\x86"
        "\xef\xac\x93-\xef\xac\x97\xef\xbc\xa1-\xef\xbc\xba\xef\xbd\x81-\xef\xbd\x9a"
        "\xf0\x90\x90\x80-\xf0\x90\x91\x8f\xf0\x90\x92\xb0-\xf0\x90\x93\x93\xf0\x90\x93\x98-"
        "\xf0\x90\x93\xbb\xf0\x90\xb2\x80-\xf0\x90\xb2\xb2\xf0\x90\xb3\x80-\xf0\x90\xb3\xb2"
        "\xf0\x91\xa2\xa0-\xf0\x91\xa3\x9f\xf0\x9e\xa4\x80-\xf0\x9e\xa5\x83]+",
        "\\s?[!-/:-~\xef\xbc\x81-\xef\xbc\x8f\xef\xbc\x9a-\xef\xbd\x9e\xe2\x80\x98-\xe2\x80\x9f"
        "\xe3\x80\x80-\xe3\x80\x82]+",
        "\\s+$", "[\xe4\xb8\x80-\xe9\xbe\xa5\xe0\xa0\x80-\xe4\xb8\x80\xea\xb0\x80-\xed\x9f\xbf]+",
        "\\p{N}+"},
       kKeep},
      {{"deepseek-coder"}, {"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", kCjk, "\\p{N}"}, kKeep},
      {{"deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"},
       {"\\p{N}{1,3}",
        "[\xe4\xb8\x80-\xe9\xbe\xa5\xe3\x81\x80-\xe3\x82\x9f\xe3\x82\xa0-\xe3\x83\xbf]+",
        "[!\"#$%&'()*+,\\-./"
        ":;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
        "| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"},
       kKeep},
      {{"falcon"}, {"[\\p{P}\\$\\+<=>\\^~\\|`]+", kGpt2, "[0-9][0-9][0-9]"}, kClean},
      {{"starcoder", "refact", "codeshell", "exaone", "minerva-7b", "mellum2"},
       {"\\p{N}", kGpt2},
       kClean},
      {{"command-r", "smollm"}, {"\\p{N}", kGpt2}, kKeep},
      {{"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "hunyuan", "solar-open", "grok-2"},
       {kQwen2},
       kKeep},
      {{"stablelm2", "megrez"}, {kQwen2}, kClean},
      {{"qwen35"}, {kQwen35}, kKeep},
      {{"laguna"}, {"[^\\n]+|[\\n]+", kQwen2}, kKeep},
      {{"poro-chat"}, {kPoro}, kKeep},
      {{"bloom", "gpt3-finnish"}, {kPoro}, kClean},
      {{"viking"}, {kPoro, "\\p{N}"}, kKeep},
      {{"tekken"}, {kTekken}, {true, false, true, false}},
      {{"chameleon"},
       {"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", "\\p{N}",
        "[\\p{P}!-/:-@\\[-`{-~]", kGpt2},
       {true, false, false, false}},
      {{"gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"}, {kGpt4o}, kKeep},
      {{"granite-embed-multi-97m"}, {kGraniteMulti}, {false, false, true, false}},
      {{"seed-coder"},
       {EMBER_CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+"
                           "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
       kKeep},
      {{"bailingmoe", "bailingmoe2", "llada-moe"},
       {"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
        "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"},
       kKeep},
      {{"ufakzeka"},
       {"[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+"
        "|\\s+(?!\\S)|\\s+"},
       kKeep},
      {{"minicpm5"},
       {"\\p{N}{1,3}", EMBER_CONTRACTIONS
        "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+"
        "|\\s+(?!\\S)|\\s+"},
       {false, true, true, false}},
      {{"jais-2"},
       {EMBER_CONTRACTIONS
        "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+"
        "|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)"
        "|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}"},
       kClean},
  };
  return table;
}

const PreTokenizer* FindPre(std::string_view pre) {
  for (const PreTokenizer& p : PreTokenizers()) {
    for (const char* name : p.names) {
      if (pre == name) return &p;
    }
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------------------

// Separates the two halves of a merge key; 0xFF never occurs in UTF-8 text.
constexpr char kMergeSep = '\xff';

class BpeTokenizer final : public Tokenizer {
 public:
  explicit BpeTokenizer(VocabData vocab) : Tokenizer(std::move(vocab)) {}

  Status Init() {
    const PreTokenizer* pre = FindPre(vocab_.pre);
    if (pre == nullptr) {
      return Unsupported("tokenizer.ggml.pre '" + vocab_.pre +
                         "' names a BPE pre-tokenizer ember does not implement");
    }
    ignore_merges_ = pre->flags.ignore_merges;
    for (const char* pattern : pre->regexes) {
      unicode::Regex re;
      Status s = unicode::Regex::Compile(pattern, &re);
      if (!s.ok()) {
        return Status(Code::kInternal, "pre-tokenizer '" + vocab_.pre + "': " + s.message());
      }
      regexes_.push_back(std::move(re));
    }
    const size_t n = vocab_.tokens.size();
    size_t merge_bytes = 0;
    for (size_t r = 0; r < vocab_.merges.size(); ++r) merge_bytes += vocab_.merges[r].size();
    ranks_.Reserve(vocab_.merges.size(), merge_bytes);
    std::string key;
    for (size_t r = 0; r < vocab_.merges.size(); ++r) {
      // "left right", split as llama.cpp does at the first space after the first byte (so a
      // left half that is a space stays whole); a line without one counts as ("", "").
      const std::string_view m = vocab_.merges[r];
      const size_t sp = m.find(' ', 1);
      key.assign(1, kMergeSep);
      if (sp != std::string_view::npos) {
        key.assign(m.substr(0, sp));
        key += kMergeSep;
        key += m.substr(sp + 1);
      }
      ranks_.Add(key, static_cast<int32_t>(r));  // the first rank wins
    }
    vocab_.merges.Clear();  // ranks_ holds them now
    for (int b = 0; b < 256; ++b) {
      unicode::AppendUtf8(unicode::ByteToGpt2Char(static_cast<uint8_t>(b)), &byte_chars_[b]);
    }
    // A piece is rarely longer than its text (a GPT-2 character of 2 bytes stands for 1).
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
    for (const Fragment& f : SplitSpecial(text, parse_special)) {
      if (f.token >= 0) {
        out.push_back(f.token);
      } else {
        EncodeText(text.substr(f.offset, f.length), &out);
      }
    }
    if (add_special && vocab_.add_eos && vocab_.eos_id >= 0) out.push_back(vocab_.eos_id);
    return out;
  }

 private:
  // The piece of a token with specials rendered (llama.cpp's token_to_piece for BPE).
  std::string RenderPiece(int32_t id) const {
    const std::string_view text = vocab_.tokens[id];
    switch (vocab_.token_types[id]) {
      case TokenType::kControl:
      case TokenType::kUnknown:
      case TokenType::kUserDefined:
        return std::string(text);
      case TokenType::kNormal: {
        std::string out;
        for (const uint32_t cp : unicode::DecodeUtf8Lenient(text)) {
          const int b = unicode::Gpt2CharToByte(cp);
          // A character outside GPT-2's 256 is kept as it is (llama.cpp prints a marker).
          if (b >= 0) {
            out.push_back(static_cast<char>(b));
          } else {
            unicode::AppendUtf8(cp, &out);
          }
        }
        return out;
      }
      case TokenType::kByte:
        return ByteTokenValue(text);
      default:
        return "";  // unused and undefined tokens print nothing
    }
  }

  // "<0xAB>" -> "\xAB".
  static std::string ByteTokenValue(std::string_view text) {
    if (text.size() == 6 && text.compare(0, 3, "<0x") == 0 && text[5] == '>') {
      const std::string hex(text.substr(3, 2));
      char* end = nullptr;
      const long v = std::strtol(hex.c_str(), &end, 16);
      if (end == hex.c_str() + 2) return std::string(1, static_cast<char>(v));
    }
    return std::string(text);
  }

  void EncodeText(std::string_view text, std::vector<int32_t>* out) const {
    const std::vector<uint32_t> cps = unicode::DecodeUtf8Lenient(text);
    std::vector<size_t> lengths{cps.size()};
    for (const unicode::Regex& re : regexes_) lengths = re.Split(cps, lengths);
    std::string word, utf8;
    size_t start = 0;
    for (const size_t len : lengths) {
      word.clear();
      for (size_t i = start; i < start + len; ++i) {
        utf8.clear();
        unicode::AppendUtf8(cps[i], &utf8);
        for (const char c : utf8) word += byte_chars_[static_cast<uint8_t>(c)];
      }
      start += len;
      EncodeWord(word, out);
    }
  }

  struct Symbol {
    uint32_t offset, length;
    int32_t prev, next;
  };
  struct Bigram {
    int32_t rank;
    int32_t left, right;
    uint32_t length;
    // std::priority_queue pops the "largest": make that the lowest rank, then leftmost.
    bool operator<(const Bigram& o) const {
      return rank > o.rank || (rank == o.rank && left > o.left);
    }
  };

  void EncodeWord(const std::string& word, std::vector<int32_t>* out) const {
    if (word.empty()) return;
    if (ignore_merges_) {
      if (const int32_t id = FindToken(word); id >= 0) {
        out->push_back(id);
        return;
      }
    }
    std::vector<Symbol> sym;
    for (size_t off = 0; off < word.size();) {
      const size_t len =
          std::min(unicode::Utf8SeqLen(static_cast<uint8_t>(word[off])), word.size() - off);
      const int32_t idx = static_cast<int32_t>(sym.size());
      sym.push_back({static_cast<uint32_t>(off), static_cast<uint32_t>(len), idx - 1,
                     off + len == word.size() ? -1 : idx + 1});
      off += len;
    }
    std::priority_queue<Bigram> queue;
    std::string key;
    auto add = [&](int32_t l, int32_t r) {
      if (l < 0 || r < 0) return;
      key.assign(word, sym[l].offset, sym[l].length);
      key += kMergeSep;
      key.append(word, sym[r].offset, sym[r].length);
      const int32_t rank = ranks_.Find(key);
      if (rank < 0) return;
      queue.push({rank, l, r, sym[l].length + sym[r].length});
    };
    for (int32_t i = 1; i < static_cast<int32_t>(sym.size()); ++i) add(i - 1, i);
    while (!queue.empty()) {
      const Bigram b = queue.top();
      queue.pop();
      Symbol& l = sym[b.left];
      Symbol& r = sym[b.right];
      // Stale: one side was merged away or grew since the pair was queued.
      if (l.length == 0 || r.length == 0 || l.length + r.length != b.length) continue;
      l.length += r.length;
      r.length = 0;
      l.next = r.next;
      if (r.next >= 0) sym[r.next].prev = b.left;
      add(l.prev, b.left);
      add(b.left, l.next);
    }
    for (int32_t i = 0; i >= 0; i = sym[i].next) {
      const std::string_view s(word.data() + sym[i].offset, sym[i].length);
      if (const int32_t id = FindToken(s); id >= 0) {
        out->push_back(id);
        continue;
      }
      // Not a token (an inconsistent vocabulary): llama.cpp emits the tokens of the symbol's
      // single bytes that exist and skips the others; so do we.
      for (const char c : s) {
        if (const int32_t id = FindToken(std::string_view(&c, 1)); id >= 0) out->push_back(id);
      }
    }
  }

  std::vector<unicode::Regex> regexes_;
  bool ignore_merges_ = false;
  StringIndex ranks_;  // "left" kMergeSep "right" -> rank
  std::array<std::string, 256> byte_chars_;
};

}  // namespace

namespace internal {

bool FindBpePreDefaults(std::string_view pre, BpePreDefaults* out) {
  const PreTokenizer* p = FindPre(pre);
  if (p == nullptr) return false;
  *out = p->flags;
  return true;
}

Status CreateBpeTokenizer(VocabData vocab, std::unique_ptr<Tokenizer>* out) {
  auto tok = std::unique_ptr<BpeTokenizer>(new BpeTokenizer(std::move(vocab)));
  EMBER_RETURN_IF_ERROR(tok->Init());
  *out = std::move(tok);
  return Status::Ok();
}

}  // namespace internal

}  // namespace ember
