// Min-p's fast path for a chain that reaches it with the whole vocabulary
// (min-p without top-k or top-p: sampling/chain.cpp). The sampler itself is
// made by NewMinPSampler (sampler.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "sampling/candidates.h"
#include "sampling/plain_logits.h"

namespace ember {

// What Reset(logits, n), then logit / temperature for every item
// (temperature > 0; 1 divides nothing), then the min-p sampler (min_p,
// min_keep) leave in *c: the same items, bits, order and flags, made only for
// the survivors, found in the blocks whose maximum reaches the threshold.
// False, with *c unspecified, where the sampler keeps every item or takes its
// min_keep floor: the caller then takes the plain path.
bool ResetMinP(const float* logits, int64_t n, float temperature, float min_p, size_t min_keep,
               PlainLogits* scratch, Candidates* c);

}  // namespace ember
