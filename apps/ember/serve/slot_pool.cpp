#include "serve/slot_pool.h"

#include <algorithm>
#include <cmath>

namespace serve {

ember_status CreateSlotSession(const ember_model* model, const ember_session_params& params,
                               uint64_t max_memory, ember_batcher* batcher, ember_session** out) {
  ember_session_limits limits = ember_session_limits_default();
  limits.max_memory = max_memory;
  ember_status st = ember_session_create_ex(model, &params, &limits, out);
  // Continuous batching: the slots' sessions share their forward passes
  // (docs/BATCHING.md); each slot's output stays what it is alone.
  if (st == EMBER_OK && batcher != nullptr) {
    st = ember_session_set_batcher(*out, batcher);
    if (st != EMBER_OK) {
      ember_session_free(*out);
      *out = nullptr;
    }
  }
  return st;
}

SlotPool::SlotPool(const ember_model* model, const ember_session_params& params, int n_slots,
                   size_t max_queue, bool batching, Metrics* metrics,
                   const Speculation& speculation)
    : model_(model),
      params_(params),
      max_queue_(max_queue),
      batching_(batching && n_slots > 1),
      speculation_(speculation),
      metrics_(metrics) {
  slots_.resize(static_cast<size_t>(std::max(1, n_slots)));
}

SlotPool::~SlotPool() { Shutdown(); }

void SlotPool::FreeSessions() {
  for (Slot& t : slots_) {
    ember_session_free(t.session);
    ember_session_free(t.draft);
    t.session = t.draft = nullptr;
  }
  ember_batcher_free(batcher_);
  ember_batcher_free(draft_batcher_);
  batcher_ = draft_batcher_ = nullptr;
}

ember_status SlotPool::Start() {
  const ember_model* draft_model = speculation_.on ? speculation_.draft_model : nullptr;
  ember_status st = EMBER_OK;
  if (batching_) {
    st = ember_batcher_create(model_, nullptr, &batcher_);
    if (st == EMBER_OK && draft_model != nullptr) {
      st = ember_batcher_create(draft_model, nullptr, &draft_batcher_);
    }
  }
  // A draft session follows its slot's context and never shifts by itself.
  ember_session_params draft_params = params_;
  draft_params.context_shift = false;
  for (Slot& s : slots_) {
    if (st != EMBER_OK) break;
    st = CreateSlotSession(model_, params_, max_memory_, batcher_, &s.session);
    if (st == EMBER_OK && draft_model != nullptr) {
      st = CreateSlotSession(draft_model, draft_params, max_memory_, draft_batcher_, &s.draft);
    }
  }
  if (st == EMBER_OK && draft_model != nullptr) {
    // A draft model of another vocabulary is an error now, not at every
    // request: one speculative call that generates nothing checks it.
    const int32_t token = 0;
    ember_generate_params gp = ember_generate_default_params();
    gp.n_predict = 0;
    ember_speculative_params spec = speculation_.params;
    spec.draft = slots_[0].draft;
    st = ember_generate_speculative(slots_[0].session, &token, 1, &gp, &spec, nullptr, nullptr,
                                    nullptr, nullptr);
    ember_session_reset(slots_[0].session);
    ember_session_reset(slots_[0].draft);
  }
  if (st != EMBER_OK) {
    FreeSessions();
    return st;
  }
  n_ctx_ = ember_session_n_ctx(slots_[0].session);
  for (size_t i = 0; i < slots_.size(); ++i) {
    slots_[i].worker = std::thread([this, i] { WorkerLoop(i); });
  }
  std::lock_guard<std::mutex> lock(mu_);
  started_ = true;
  return EMBER_OK;
}

SlotPool::SubmitResult SlotPool::Submit(const std::vector<std::shared_ptr<Job>>& jobs) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_ || !started_) return SubmitResult::kStopping;
  // Jobs that will start at once do not wait in the queue: count idle slots
  // as free places too, so --queue 0 still serves --parallel clients.
  size_t idle = 0;
  for (const Slot& s : slots_) idle += s.job == nullptr;
  if (queue_.size() + jobs.size() > max_queue_ + idle) return SubmitResult::kQueueFull;
  for (const auto& j : jobs) queue_.push_back(j);
  Dispatch();
  return SubmitResult::kOk;
}

void SlotPool::Cancel(const std::shared_ptr<Job>& job) {
  job->cancel_requested.store(true);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find(queue_.begin(), queue_.end(), job);
  if (it != queue_.end()) {
    queue_.erase(it);
    metrics_->cancelled++;
    Finish(*job, /*cancelled=*/true, "");
    return;
  }
  for (Slot& s : slots_) {
    if (s.job == job) ember_session_cancel(s.session);
  }
}

void SlotPool::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (auto& j : queue_) {
      j->cancel_requested.store(true);
      Finish(*j, /*cancelled=*/true, "");
    }
    queue_.clear();
    for (Slot& s : slots_) {
      if (s.job) {
        s.job->cancel_requested.store(true);
        ember_session_cancel(s.session);
      }
    }
  }
  cv_.notify_all();
  for (Slot& s : slots_) {
    if (s.worker.joinable()) s.worker.join();
  }
  FreeSessions();
}

Gauges SlotPool::gauges() const {
  std::lock_guard<std::mutex> lock(mu_);
  Gauges g;
  g.slots_total = static_cast<int>(slots_.size());
  for (const Slot& s : slots_) g.slots_busy += s.job != nullptr;
  g.queue_length = queue_.size();
  g.queue_capacity = max_queue_;
  if (batcher_ != nullptr) {
    ember_batcher_stats st{};
    if (ember_batcher_get_stats(batcher_, &st) == EMBER_OK) {
      g.batch_passes = st.passes;
      g.batch_sequences = st.sequences;
      g.batch_late = st.late;
    }
  }
  return g;
}

void SlotPool::Dispatch() {
  while (!queue_.empty()) {
    // An embedding clears its slot's context: it shares nothing with it.
    static const std::vector<int32_t> kNothing;
    const std::vector<int32_t>& prompt = queue_.front()->embed ? kNothing : queue_.front()->prompt;
    Slot* best = nullptr;
    int64_t best_score = 0;
    for (Slot& s : slots_) {
      if (s.job) continue;
      const size_t n = std::min(s.cached.size(), prompt.size());
      size_t shared = 0;
      while (shared < n && s.cached[shared] == prompt[shared]) ++shared;
      // Tokens saved minus cached tokens overwritten (another client may come
      // back for them): a shared system prompt alone does not pull every
      // client into one slot and evict its conversation.
      const int64_t score =
          static_cast<int64_t>(shared) - static_cast<int64_t>(s.cached.size() - shared);
      if (!best || score > best_score || (score == best_score && s.idle_since < best->idle_since)) {
        best = &s;
        best_score = score;
      }
    }
    if (!best) break;  // all busy; the workers still need waking for what was assigned
    best->job = queue_.front();
    queue_.pop_front();
  }
  cv_.notify_all();
}

void SlotPool::WorkerLoop(size_t i) {
  Slot& slot = slots_[i];
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return slot.job != nullptr || stopping_; });
      if (!slot.job) return;
      job = slot.job;
    }
    Run(slot, *job);
    {
      std::lock_guard<std::mutex> lock(mu_);
      slot.job.reset();
      slot.idle_since = ++tick_;
      Dispatch();
    }
    cv_.notify_all();
  }
}

namespace {

// What the callbacks of one ember_generate call share.
struct RunState {
  const ember_model* model;
  Job* job;
  std::vector<int32_t> generated;
};

std::string Piece(const ember_model* model, int32_t id) {
  char buf[128];
  size_t n = 0;
  if (ember_token_to_piece(model, id, false, buf, sizeof(buf), &n) == EMBER_OK) {
    return std::string(buf, n);
  }
  std::string big(n, '\0');
  if (ember_token_to_piece(model, id, false, big.data(), big.size(), &n) != EMBER_OK) return "";
  return big;
}

bool OnToken(int32_t token, void* user) {
  auto* st = static_cast<RunState*>(user);
  st->generated.push_back(token);
  return !st->job->cancel_requested.load();
}

bool OnTokenInfo(const ember_token_info* info, void* user) {
  auto* st = static_cast<RunState*>(user);
  TokenLogprob t;
  t.id = info->token;
  t.piece = Piece(st->model, info->token);
  t.logprob = info->logprob;
  const size_t n_top = std::min(info->n_top, static_cast<size_t>(st->job->n_top_logprobs));
  for (size_t i = 0; i < n_top; ++i) {
    const float p = info->top[i].p;
    t.top.push_back({Piece(st->model, info->top[i].id), p > 0 ? std::log(p) : -9999.0f});
  }
  std::lock_guard<std::mutex> lock(st->job->channel->mu);
  st->job->tokens.push_back(std::move(t));
  return !st->job->cancel_requested.load();
}

bool OnPiece(const char* piece, size_t len, int32_t, void* user) {
  auto* st = static_cast<RunState*>(user);
  {
    std::lock_guard<std::mutex> lock(st->job->channel->mu);
    st->job->text.append(piece, len);
  }
  st->job->channel->cv.notify_all();
  return !st->job->cancel_requested.load();
}

}  // namespace

void SlotPool::Run(Slot& slot, Job& job) {
  if (job.cancel_requested.load()) {
    metrics_->cancelled++;
    Finish(job, true, "");
    return;
  }
  if (job.embed) return Embed(slot, job);
  std::vector<const char*> stops;
  for (const std::string& s : job.stop) stops.push_back(s.c_str());
  ember_generate_params gp = ember_generate_default_params();
  gp.n_predict = job.n_predict;
  gp.sampler = job.sampler.get();
  gp.stop = stops.data();
  gp.n_stop = stops.size();
  gp.ignore_eos = job.ignore_eos;
  gp.logprobs = job.n_top_logprobs >= 0;
  gp.n_probs = std::max(0, job.n_top_logprobs);
  gp.reuse_prefix = true;
  gp.on_token = OnToken;
  if (job.n_top_logprobs >= 0) gp.on_token_info = OnTokenInfo;

  RunState st{model_, &job, {}};
  const int32_t dropped_before = ember_session_n_dropped(slot.session);
  ember_generate_stats stats{};
  ember_status s = EMBER_OK;
  if (speculation_.on && job.n_top_logprobs < 0) {
    ember_speculative_params spec = speculation_.params;
    spec.draft = slot.draft;
    ember_speculative_stats spec_stats{};
    s = ember_generate_speculative(slot.session, job.prompt.data(), job.prompt.size(), &gp, &spec,
                                   OnPiece, &st, &stats, &spec_stats);
    if (s == EMBER_OK) {
      metrics_->drafted_tokens += static_cast<uint64_t>(spec_stats.n_drafted);
      metrics_->accepted_tokens += static_cast<uint64_t>(spec_stats.n_accepted);
    }
  } else {
    s = ember_generate(slot.session, job.prompt.data(), job.prompt.size(), &gp, OnPiece, &st,
                       &stats);
  }
  const std::string error = s == EMBER_OK ? "" : ember_last_error();

  // What the context holds now, for the next job's slot choice. After a
  // context shift the cached tokens no longer line up with positions: start
  // that slot afresh.
  if (s != EMBER_OK || ember_session_n_dropped(slot.session) != dropped_before) {
    ember_session_reset(slot.session);
    slot.cached.clear();
  } else {
    slot.cached = job.prompt;
    slot.cached.insert(slot.cached.end(), st.generated.begin(), st.generated.end());
    slot.cached.resize(
        std::min(slot.cached.size(), static_cast<size_t>(ember_session_n_past(slot.session))));
  }
  if (s == EMBER_OK) {
    metrics_->prompt_tokens += static_cast<uint64_t>(stats.n_prompt);
    metrics_->prompt_tokens_reused += static_cast<uint64_t>(stats.n_reused);
    metrics_->generated_tokens += static_cast<uint64_t>(stats.n_gen);
  }
  const bool cancelled = s == EMBER_OK && stats.finish_reason == EMBER_FINISH_CANCELLED;
  if (cancelled) metrics_->cancelled++;
  {
    std::lock_guard<std::mutex> lock(job.channel->mu);
    job.stats = stats;
  }
  Finish(job, cancelled, error);
}

// Embeddings run on the slot's session like prompts (in the shared passes,
// chunked while others generate) and leave its context empty.
void SlotPool::Embed(Slot& slot, Job& job) {
  ember_model_info info{};
  ember_model_get_info(model_, &info);
  // All inputs in one call: short ones share forward passes (packing).
  std::vector<const int32_t*> ptrs;
  std::vector<size_t> sizes;
  for (const std::vector<int32_t>& in : job.embed_inputs) {
    ptrs.push_back(in.data());
    sizes.push_back(in.size());
  }
  const size_t n_embd = static_cast<size_t>(info.n_embd);
  std::vector<float> flat(job.embed_inputs.size() * n_embd);
  ember_status s =
      job.cancel_requested.load()
          ? EMBER_ERR_CANCELLED
          : ember_session_embed_batch(slot.session, ptrs.data(), sizes.data(), ptrs.size(),
                                      job.pooling, true, flat.data(), flat.size());
  std::vector<std::vector<float>> out;
  if (s == EMBER_OK) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      metrics_->prompt_tokens += sizes[i];
      out.emplace_back(flat.begin() + i * n_embd, flat.begin() + (i + 1) * n_embd);
    }
  }
  const bool cancelled = s == EMBER_ERR_CANCELLED;
  const std::string error = s == EMBER_OK || cancelled ? "" : ember_last_error();
  slot.cached.clear();
  if (cancelled) metrics_->cancelled++;
  {
    std::lock_guard<std::mutex> lock(job.channel->mu);
    if (s == EMBER_OK) job.embeddings = std::move(out);
  }
  Finish(job, cancelled, error);
}

void SlotPool::Finish(Job& job, bool cancelled, const std::string& error) {
  {
    std::lock_guard<std::mutex> lock(job.channel->mu);
    job.done = true;
    job.cancelled = cancelled;
    job.error = error;
    // The sampler is not needed any more; free it on this thread.
    job.sampler.reset();
  }
  job.channel->cv.notify_all();
}

}  // namespace serve
