// Session::Embed: a sequence's hidden states after the final norm, pooled into
// one vector (or kept per token), for embeddings (`ember embed`,
// ember_session_embed, `ember serve`'s /v1/embeddings). docs/EMBEDDINGS.md.
#include <cmath>

#include "runtime/session/session.h"

namespace ember {
namespace {

// The file's pooling_type (llama.cpp's numbers) as a Pooling: one vector per
// text always, so mean when the file names none (0) or has no key.
Status PoolingOfModel(int64_t pooling_type, Pooling* out) {
  switch (pooling_type) {
    case -1:
    case 0:
    case 1:
      *out = Pooling::kMean;
      return Status::Ok();
    case 2:
      *out = Pooling::kFirst;
      return Status::Ok();
    case 3:
      *out = Pooling::kLast;
      return Status::Ok();
    default:
      return Unsupported("the model's pooling type " + std::to_string(pooling_type) +
                         " (rank: a reranker's classification head) is not supported; ask for "
                         "mean, first, last or none");
  }
}

// Scales v[n] to unit Euclidean length (a zero vector stays zero).
void Normalize(float* v, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(v[i]) * v[i];
  if (sum <= 0) return;
  const double inv = 1.0 / std::sqrt(sum);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(v[i] * inv);
}

}  // namespace

Status Session::Embed(const std::vector<int32_t>& tokens, Pooling pooling, bool normalize,
                      std::vector<float>* out) {
  if (tokens.empty()) return InvalidArgument("no tokens to embed");
  EMBER_RETURN_IF_ERROR(CheckIds(tokens));
  const ModelConfig& c = model_.config();
  if (pooling == Pooling::kModel) EMBER_RETURN_IF_ERROR(PoolingOfModel(c.pooling_type, &pooling));
  const int64_t n = static_cast<int64_t>(tokens.size()), E = c.n_embd;
  if (n > n_ctx()) {
    return Status(Code::kContextOverflow,
                  std::to_string(n) + " tokens do not fit in the context of " +
                      std::to_string(n_ctx()) + " tokens (an embedding sees every token)");
  }
  Reset();
  // hidden: a chunk's rows [chunk, E]; the pooled result accumulates in
  // double (the mean of thousands of rows).
  const int64_t n_batch = std::min(n_batch_, n);
  std::vector<float> hidden(static_cast<size_t>(n_batch * E));
  std::vector<double> sum(static_cast<size_t>(E), 0.0);
  out->assign(static_cast<size_t>(pooling == Pooling::kNone ? n * E : E), 0.0f);
  std::vector<TokenPlace> places(static_cast<size_t>(n_batch));
  for (int64_t done = 0; done < n;) {
    if (done > 0 && cancel_requested()) {
      Reset();
      return Status(Code::kCancelled, "cancelled after " + std::to_string(done) + " of " +
                                          std::to_string(n) + " tokens");
    }
    // In a batcher's shared passes, small chunks while others generate (as Decode).
    const int64_t limit =
        batcher_ && n - done > batcher_->prefill_chunk() && batcher_->OthersActive(this)
            ? std::min(n_batch, batcher_->prefill_chunk())
            : n_batch;
    const int64_t chunk = std::min(limit, n - done);
    if (window_) window_->Reserve(chunk);
    PlaceTokens(ring_.n_used(), chunk, places.data());
    RunForward(tokens.data() + done, places.data(), chunk, LogitsFor::kHidden, hidden.data());
    ring_.Append(chunk);
    if (window_) window_->Append(chunk);
    tokens_.insert(tokens_.end(), tokens.begin() + done, tokens.begin() + done + chunk);
    for (int64_t t = 0; t < chunk; ++t) {
      const float* row = &hidden[static_cast<size_t>(t * E)];
      const int64_t pos = done + t;
      if (pooling == Pooling::kNone) {
        std::copy(row, row + E, out->begin() + pos * E);
      } else if (pooling == Pooling::kMean) {
        for (int64_t i = 0; i < E; ++i) sum[static_cast<size_t>(i)] += row[i];
      } else if ((pooling == Pooling::kFirst && pos == 0) ||
                 (pooling == Pooling::kLast && pos == n - 1)) {
        std::copy(row, row + E, out->begin());
      }
    }
    done += chunk;
  }
  Reset();
  if (pooling == Pooling::kMean) {
    for (int64_t i = 0; i < E; ++i) {
      (*out)[static_cast<size_t>(i)] = static_cast<float>(sum[static_cast<size_t>(i)] / n);
    }
  }
  if (normalize) {
    for (size_t v = 0; v < out->size(); v += static_cast<size_t>(E)) Normalize(&(*out)[v], E);
  }
  return Status::Ok();
}

}  // namespace ember
