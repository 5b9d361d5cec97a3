// The test oracle for every architecture: a plain forward pass over a whole
// token sequence, driven by the same ModelConfig as ember's decoder (as
// llama2.c's run.c and gemma.cpp's scalar forward are for theirs), with
// nothing of ember's kernels: weights dequantized from the GGUF rows (so the
// repacked layouts are checked too), every sum in double, exact RoPE angles,
// full causal attention (sliding windows as masks) recomputed for every
// position, no KV cache, no activation quantization.
#pragma once

#include <cstdint>
#include <vector>

#include "platform/status.h"
#include "runtime/model/model.h"

namespace ember::test {

// logits: [tokens.size(), n_vocab], the next-token logits after each prefix.
// Positions are 0, 1, ... Slow (O(n^2) attention, float matrices): for tiny
// models.
Status ReferenceForward(const Model& model, const std::vector<int32_t>& tokens,
                        std::vector<float>* logits);

}  // namespace ember::test
