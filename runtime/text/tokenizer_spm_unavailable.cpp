// The SentencePiece constructor of a build without libsentencepiece: the
// static CLI (EMBER_STATIC_CLI in CMakeLists.txt), since Debian ships
// sentencepiece as a shared library only. "llama" vocabularies are refused with
// the reason; "gpt2" (byte-level BPE) vocabularies are ember's own code and work.
#include "runtime/text/tokenizer.h"

namespace ember::internal {

Status CreateSpmTokenizer(VocabData /*vocab*/, std::unique_ptr<Tokenizer>* /*out*/) {
  return Unsupported(
      "tokenizer model 'llama' (SentencePiece) is not in this build of ember (a static build: "
      "libsentencepiece has no static library); use the dynamically linked ember, or a model "
      "with a 'gpt2' (byte-level BPE) vocabulary");
}

}  // namespace ember::internal
