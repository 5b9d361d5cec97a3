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

// Pools rows[n, E] (one input's final-norm rows, in order) into out: [E],
// or [n, E] for kNone; the mean summed in double (thousands of rows).
void PoolRows(const float* rows, int64_t n, int64_t E, Pooling pooling, std::vector<float>* out) {
  if (pooling == Pooling::kNone) {
    out->assign(rows, rows + n * E);
    return;
  }
  out->assign(static_cast<size_t>(E), 0.0f);
  if (pooling == Pooling::kMean) {
    std::vector<double> sum(static_cast<size_t>(E), 0.0);
    for (int64_t t = 0; t < n; ++t) {
      for (int64_t i = 0; i < E; ++i) sum[static_cast<size_t>(i)] += rows[t * E + i];
    }
    for (int64_t i = 0; i < E; ++i) {
      (*out)[static_cast<size_t>(i)] = static_cast<float>(sum[static_cast<size_t>(i)] / n);
    }
  } else {
    const float* row = pooling == Pooling::kFirst ? rows : rows + (n - 1) * E;
    std::copy(row, row + E, out->begin());
  }
}

}  // namespace

Status Session::EmbedMany(const std::vector<std::vector<int32_t>>& inputs, Pooling pooling,
                          bool normalize, std::vector<std::vector<float>>* out) {
  const ModelConfig& c = model_.config();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty()) return InvalidArgument("input " + std::to_string(i) + " has no tokens");
    EMBER_RETURN_IF_ERROR(CheckIds(inputs[i]));
    if (static_cast<int64_t>(inputs[i].size()) > n_ctx()) {
      return Status(Code::kContextOverflow,
                    "input " + std::to_string(i) + ": " + std::to_string(inputs[i].size()) +
                        " tokens do not fit in the context of " + std::to_string(n_ctx()) +
                        " tokens (an embedding sees every token)");
    }
  }
  if (pooling == Pooling::kModel) EMBER_RETURN_IF_ERROR(PoolingOfModel(c.pooling_type, &pooling));
  const int64_t E = c.n_embd;
  // Packing places several sequences in one linear cache; the sliding-window
  // rings and llama.cpp's batch-dependent arithmetic take them one by one.
  const bool pack = !window_ && model_.numerics() != Numerics::kGgml;
  const int64_t cap = std::min(n_batch_, n_ctx());
  std::vector<std::vector<float>> result(inputs.size());
  std::vector<int32_t> tokens;
  std::vector<TokenPlace> places;
  std::vector<float> hidden;
  for (size_t i = 0; i < inputs.size();) {
    if (i > 0 && cancel_requested()) {
      Reset();
      return Status(Code::kCancelled, "cancelled after " + std::to_string(i) + " of " +
                                          std::to_string(inputs.size()) + " inputs");
    }
    // In a batcher's shared passes, small packs while others generate (as
    // Decode's prompt chunks).
    const int64_t limit =
        batcher_ && batcher_->OthersActive(this) ? std::min(cap, batcher_->prefill_chunk()) : cap;
    const int64_t n_i = static_cast<int64_t>(inputs[i].size());
    if (!pack || n_i > limit) {  // alone (in chunks if it is longer than a batch)
      EMBER_RETURN_IF_ERROR(Embed(inputs[i], pooling, normalize, &result[i]));
      ++i;
      continue;
    }
    // inputs[i, j): as many as fit in one batch, each at positions 0.. in its
    // own rows [offset, offset + n).
    size_t j = i;
    int64_t total = 0;
    tokens.clear();
    places.clear();
    while (j < inputs.size() && total + static_cast<int64_t>(inputs[j].size()) <= limit) {
      const int64_t n = static_cast<int64_t>(inputs[j].size());
      for (int64_t t = 0; t < n; ++t) {
        TokenPlace p{};
        p.pos = t;
        p.slot = total + t;
        p.rows[0] = RowRange{total, t + 1};
        p.n_rows = 1;
        places.push_back(p);
      }
      tokens.insert(tokens.end(), inputs[j].begin(), inputs[j].end());
      total += n;
      ++j;
    }
    Reset();
    hidden.resize(static_cast<size_t>(total * E));
    RunForward(tokens.data(), places.data(), total, LogitsFor::kHidden, hidden.data());
    Reset();
    int64_t offset = 0;
    for (size_t k = i; k < j; ++k) {
      const int64_t n = static_cast<int64_t>(inputs[k].size());
      PoolRows(&hidden[static_cast<size_t>(offset * E)], n, E, pooling, &result[k]);
      if (normalize) {
        for (size_t v = 0; v < result[k].size(); v += static_cast<size_t>(E)) {
          Normalize(&result[k][v], E);
        }
      }
      offset += n;
    }
    i = j;
  }
  *out = std::move(result);
  return Status::Ok();
}

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
  // hidden: every row [n, E], a batch (or a smaller chunk) at a time.
  const int64_t n_batch = std::min(n_batch_, n);
  std::vector<float> hidden(static_cast<size_t>(n * E));
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
    RunForward(tokens.data() + done, places.data(), chunk, LogitsFor::kHidden,
               &hidden[static_cast<size_t>(done * E)]);
    ring_.Append(chunk);
    if (window_) window_->Append(chunk);
    tokens_.insert(tokens_.end(), tokens.begin() + done, tokens.begin() + done + chunk);
    done += chunk;
  }
  Reset();
  PoolRows(hidden.data(), n, E, pooling, out);
  if (normalize) {
    for (size_t v = 0; v < out->size(); v += static_cast<size_t>(E)) Normalize(&(*out)[v], E);
  }
  return Status::Ok();
}

}  // namespace ember
