// The model's own distribution over the next token, before any sampler:
// log-probabilities and the most likely tokens. Used for the log-probability
// of generated sequences, --n-probs, and beam search.
#pragma once

#include <cstdint>
#include <vector>

namespace ember {

// log(sum_i exp(logits[i])), max-subtracted, summed in double.
double LogSumExp(const float* logits, int64_t n);

struct TokenLogprob {
  int32_t id;
  double logprob;  // log softmax(logits)[id]
};

// The k most likely tokens (k clamped to n), most likely first; equal logits
// in ascending id order (so the first is the greedy choice). Never sorts the
// whole vocabulary: the blocks of 64 logits that can hold one of the k best
// (logprobs.cpp), or a heap of k over all when there are few blocks.
std::vector<TokenLogprob> TopLogprobs(const float* logits, int64_t n, int64_t k, double lse);

}  // namespace ember
