// What the engine fuzz targets share: a tiny SentencePiece vocabulary and
// tiny models on it, written with ember's own GGUF writer, and scratch files.
//
// The vocabulary has <unk> <s> </s>, the 256 byte tokens, a few dozen word
// pieces and the ChatML markers (control tokens): a few KB, so that a model
// on it is tens of KB and a decode step costs little under the sanitizers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "support/model_builder.h"

namespace ember::fuzz {

// A folder of this process's scratch files (made on first use, removed at exit).
std::string ScratchDir();
// Writes `size` bytes to `path` (aborts when it cannot: the fuzzer cannot go on).
void WriteBytes(const std::string& path, const uint8_t* data, size_t size);

// The tiny vocabulary as a GGUF (tokenizer.* keys only), in ScratchDir().
const std::string& TinyVocabPath();
// A tiny model of `arch` (llama, qwen2, qwen3, gemma3) on the tiny vocabulary,
// with a ChatML chat template: n_embd 32, 2 heads, 1 KV head, n_ff 32 (gemma3:
// 2 layers, a window of 4 on the first).
test::TinyModelSpec TinySpec(const std::string& arch);
// TinySpec(arch) built once per process in ScratchDir(); aborts on failure.
const std::string& TinyModelPath(const std::string& arch);

}  // namespace ember::fuzz
