// Self-consistency (Wang et al., 2022, "Self-Consistency Improves Chain of
// Thought Reasoning in Language Models"): sample K reasoned answers to one
// prompt and return the final answer most of them reach.
//
// Cache layout: the prompt is computed once; each sample continues from it
// (Generate with reuse_prefix keeps the prompt's rows and recomputes only its
// last token, for fresh logits), so K samples cost one prefill and K decodes.
// Sample i draws with its own sampler chain of the same specs seeded with
// seed + i, so the samples differ and the whole run is reproducible.
//
// Each sample's reply is split into reasoning and content at the model's
// thinking markers (runtime/chat/reasoning.h), and the final answer is read
// off the content (ExtractFinalAnswer). Votes count equal answers; a tie goes
// to the answer reached first.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "platform/status.h"
#include "runtime/chat/reasoning.h"
#include "runtime/decoding/generate.h"
#include "runtime/session/session.h"

namespace ember {

// The final answer a reply states, normalised for voting:
//   1. the argument of the last \boxed{...} (the usual convention of math
//      models), braces balanced;
//   2. else what follows the last "answer is" / "answer:" / "Answer:" up to
//      the end of its line or sentence;
//   3. else the last number in the text;
//   4. else the last non-empty line.
// Then: surrounding whitespace, '$', '*', quotes and a final '.' removed;
// commas inside numbers removed ("1,024" -> "1024"); "3.50" -> "3.5";
// letters lower-cased.
std::string ExtractFinalAnswer(std::string_view content);

struct SelfConsistencyParams {
  int32_t k = 5;                           // samples, >= 1
  GenerateParams gen;                      // per sample; gen.sampling.seed + i seeds sample i
  std::optional<ThinkingMarkers> markers;  // none: the whole reply is content
  bool prompt_opens_reasoning = false;     // the prompt ends inside a reasoning section
};

struct ConsistencySample {
  std::string reasoning, content, answer;
  FinishReason finish = FinishReason::kLength;
  int64_t n_gen = 0;
};

struct AnswerVote {
  std::string answer;
  int32_t votes = 0;
  std::vector<int32_t> samples;  // which samples gave it
};

struct SelfConsistencyResult {
  std::vector<ConsistencySample> samples;
  std::vector<AnswerVote> votes;  // most votes first; ties: first reached first
  double seconds = 0;
};

// Called after each sample; return false to stop sampling (the votes so far
// decide).
using SampleFn = std::function<bool(int32_t index, const ConsistencySample& sample)>;

Status SelfConsistency(Session& session, const std::vector<int32_t>& prompt,
                       const SelfConsistencyParams& params, const SampleFn& on_sample,
                       SelfConsistencyResult* result);

}  // namespace ember
