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

struct ReferenceOptions {
  // Round every matrix input to int8 in groups of 32 (ember's and ggml's
  // activation quantization: q = round(x * 127 / max|x|), scale fp16(max|x| /
  // 127)), to measure how much of an engine's distance to exact math that
  // rounding makes (bench/reference_logits.cpp --int8-acts).
  bool int8_acts = false;
  // GELU as ggml computes it on the CPU: the input rounded to f16, the result
  // looked up in a table of f16 values (inputs beyond +-10 pass or vanish), to
  // measure what that rounding does to Gemma's logits (--f16-gelu).
  bool f16_gelu = false;
  // Round matrix inputs as llama.cpp's CPU dot products do: int8 groups of 32
  // (as int8_acts) for Q4_0/Q4_1/Q5_*/Q8_0 weights, and Q8_K blocks of 256 (one
  // float scale, q = round(-128 x / x_maxabs_signed)) for K-quant weights
  // (--ggml-acts).
  bool ggml_acts = false;
};

// logits: [tokens.size(), n_vocab], the next-token logits after each prefix;
// hidden (if not null): [tokens.size(), n_embd], each position's hidden state
// after the final norm (what an embedding pools). Positions are 0, 1, ...
// Slow (O(n^2) attention, float matrices): for tiny models.
Status ReferenceForward(const Model& model, const std::vector<int32_t>& tokens,
                        std::vector<float>* logits, const ReferenceOptions& options = {},
                        std::vector<float>* hidden = nullptr);

}  // namespace ember::test
