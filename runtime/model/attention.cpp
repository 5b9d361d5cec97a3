#include "runtime/model/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <omp.h>

#include "ops/attention.h"
#include "ops/ggml_numerics.h"
#include "ops/kernels.h"

namespace ember {

// True when each token's rows are a prefix of the next token's: one sequence,
// causal (a prompt chunk). A beam-search batch holds other sequences.
bool RowsChain(const TokenPlace* places, int64_t n) {
  for (int64_t t = 0; t + 1 < n; ++t) {
    const TokenPlace& a = places[t];
    const TokenPlace& b = places[t + 1];
    if (a.n_rows < 1 || a.n_rows > b.n_rows) return false;
    for (int r = 0; r < a.n_rows; ++r) {
      const RowRange &x = a.rows[r], &y = b.rows[r];
      const bool last = r + 1 == a.n_rows;
      if (x.begin != y.begin || (last ? x.n > y.n : x.n != y.n)) return false;
    }
  }
  return true;
}

// True when no token's rows hold the slot of a later token of the batch: then
// the batch may go through a layer in sub-chunks, each storing its keys and
// values before its attention (a prompt chunk, beams). O(n^2) checks of up to
// three ranges, next to a forward pass of n > 64 tokens.
bool LaterSlotsUnseen(const TokenPlace* places, int64_t n) {
  for (int64_t t = 0; t < n; ++t) {
    const TokenPlace& pl = places[t];
    for (int64_t u = t + 1; u < n; ++u) {
      for (int r = 0; r < pl.n_rows; ++r) {
        const RowRange& rr = pl.rows[r];
        if (places[u].slot >= rr.begin && places[u].slot < rr.begin + rr.n) return false;
      }
    }
  }
  return true;
}

namespace {

// Appends rows to a list of ranges, merging with the last one when they touch.
void AppendRows(std::vector<RowRange>& out, RowRange r) {
  if (r.n <= 0) return;
  if (!out.empty() && out.back().begin + out.back().n == r.begin) {
    out.back().n += r.n;
  } else {
    out.push_back(r);
  }
}

// The rows of a place from the skip-th on, as merged ranges.
std::vector<RowRange> RowsFrom(const TokenPlace& pl, int64_t skip) {
  std::vector<RowRange> out;
  for (int r = 0; r < pl.n_rows; ++r) {
    const int64_t cut = std::min(skip, pl.rows[r].n);
    skip -= cut;
    AppendRows(out, {pl.rows[r].begin + cut, pl.rows[r].n - cut});
  }
  return out;
}

bool SameRows(const std::vector<RowRange>& a, const std::vector<RowRange>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].begin != b[i].begin || a[i].n != b[i].n) return false;
  }
  return true;
}

// True when the tokens are one sequence under a sliding window: each token's
// rows are the previous token's, the first d >= 0 of them dropped (the window
// moved on), plus its own slot. Then the rows of a block of tokens t0..t1 are
// BlockRows(t0, t1), and token t sees a range of them.
bool SlidingChain(const TokenPlace* places, int64_t n) {
  for (int64_t t = 0; t + 1 < n; ++t) {
    const TokenPlace &a = places[t], &b = places[t + 1];
    const int64_t d = RowsOf(a) + 1 - RowsOf(b);
    if (d < 0) return false;
    std::vector<RowRange> expect = RowsFrom(a, d);
    AppendRows(expect, {b.slot, 1});
    if (!SameRows(expect, RowsFrom(b, 0))) return false;
  }
  return true;
}

// The rows of tokens t0..t1 of a sliding chain together: t0's rows, then the
// rows t1 has beyond them.
std::vector<RowRange> BlockRows(const TokenPlace& first, const TokenPlace& last, int64_t n_later) {
  std::vector<RowRange> rows = RowsFrom(first, 0);
  for (const RowRange& r : RowsFrom(last, RowsOf(last) - n_later)) AppendRows(rows, r);
  return rows;
}

}  // namespace

int64_t RowsOf(const TokenPlace& pl) {
  int64_t n = 0;
  for (int r = 0; r < pl.n_rows; ++r) n += pl.rows[r].n;
  return n;
}

int64_t AttentionScratchPerThread(const KvCache& kv, int64_t layer) {
  const int64_t rows = kv.n_rows(layer);
  return std::max<int64_t>(2 * rows, AttendBlockScratch(rows, static_cast<int>(kv.head_dim())));
}

// Attention with llama.cpp's arithmetic (--numerics ggml), in the form
// llama.cpp's flash attention takes for a batch of n tokens
// (ops/ggml_numerics.h). Every query's result depends only on its own rows, so
// queries may be grouped and go to any thread: a prompt chunk of a sequence
// (chain) goes through the tiled form in blocks of tokens x the heads of a GQA
// group, which convert each tile of keys and values once; anything else one
// query per job.
void AttendGgml(const AttentionArgs& a) {
  const KvCache& kv = *a.kv;
  const int64_t l = a.layer, n = a.n, hd = a.head_dim, Q = a.n_head * hd;
  const int64_t n_head = a.n_head, n_head_kv = a.n_head_kv, group = n_head / n_head_kv;
  const TokenPlace* places = a.places;
  const int n_threads = a.n_threads;
  const bool chain = RowsChain(places, n);
  const int head_dim = static_cast<int>(hd);
  const float scale = a.scale;  // llama.cpp: 1.0f / sqrtf(float(n_embd_head))
  if (n >= kGgmlTileQ && chain) {
    constexpr int64_t kTokens = 32;  // per job
    const GgmlAttendTiledBlockFn block = Active().ggml_attend_tiled_block;
    const int64_t n_blocks = (n + kTokens - 1) / kTokens;
    const int64_t n_work = n_blocks * n_head_kv;
#pragma omp parallel for num_threads(n_threads) schedule(static, 1) if (n_threads > 1)
    for (int64_t job = 0; job < n_work; ++job) {
      const int64_t t0 = job / n_head_kv * kTokens, kvh = job % n_head_kv;
      const int64_t t1 = std::min(n, t0 + kTokens);
      // Per-thread lists and scratch: no allocation per job once they have grown.
      thread_local std::vector<const float*> qs;
      thread_local std::vector<float*> outs;
      thread_local std::vector<int64_t> visible;
      thread_local std::vector<float> scratch;
      qs.clear();
      outs.clear();
      visible.clear();
      for (int64_t t = t0; t < t1; ++t) {
        for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h) {
          qs.push_back(&a.q[t * Q + h * hd]);
          outs.push_back(&a.out[t * Q + h * hd]);
          visible.push_back(RowsOf(places[t]));
        }
      }
      const TokenPlace& last = places[t1 - 1];  // its rows hold every earlier token's
      KvSpan spans[3];
      for (int r = 0; r < last.n_rows; ++r) {
        spans[r] = kv.SpanF16(l, last.rows[r].begin, last.rows[r].n, kvh);
      }
      const int n_q = static_cast<int>(qs.size());
      scratch.resize(static_cast<size_t>(GgmlTiledScratch(head_dim, n_q)));
      block(qs.data(), visible.data(), n_q, spans, last.n_rows, kv.row_stride(), head_dim, scale,
            scratch.data(), outs.data());
    }
    return;
  }
  const int64_t n_work = n * n_head;
#pragma omp parallel for num_threads(n_threads) schedule(static, 1) if (n_threads > 1)
  for (int64_t job = 0; job < n_work; ++job) {
    const int64_t t = job / n_head, h = job % n_head, kvh = h / group;
    const TokenPlace& pl = places[t];
    KvSpan spans[3];
    for (int r = 0; r < pl.n_rows; ++r)
      spans[r] = kv.SpanF16(l, pl.rows[r].begin, pl.rows[r].n, kvh);
    const float* q = &a.q[t * Q + h * hd];
    float* out = &a.out[t * Q + h * hd];
    const int64_t visible = RowsOf(pl);
    if (n >= kGgmlTileQ) {
      GgmlAttendTiled(q, spans, pl.n_rows, kv.row_stride(), head_dim, scale, visible, out);
    } else if (n == 1 && GgmlKvCells(visible) >= kGgmlSplitKvMin) {
      GgmlAttendSplit(q, spans, pl.n_rows, kv.row_stride(), head_dim, scale, visible,
                      GgmlKvCells(visible), n_threads, out);
    } else {
      GgmlAttendOneRow(q, spans, pl.n_rows, kv.row_stride(), head_dim, scale, visible, out);
    }
  }
}

namespace {

// How one sequence's queries of a layer go into jobs. The F16 cache of a
// chain (a prompt chunk, a decoded token) or a sliding chain goes in blocks
// of consecutive tokens x heads of one GQA group (up to kAttendBlockQueries
// queries) that share each converted key and value row; anything else (the
// int8 and f32 caches, a beam-search batch) one query head per job.
struct AttendPlan {
  bool block = false;
  bool sliding = false;
  int64_t heads = 1, tokens = 1, head_parts = 1;  // block jobs: the shape
  int64_t n_work = 0;                             // jobs of this sequence
};

AttendPlan PlanOf(const AttentionArgs& a, int64_t heads) {
  AttendPlan p;
  const int64_t group = a.n_head / a.n_head_kv;
  const bool chain = RowsChain(a.places, a.n);
  p.sliding = !chain && SlidingChain(a.places, a.n);
  p.block = a.kv->type() == KvType::kF16 && (chain || p.sliding) &&
            a.head_dim % kAttendBlockDimMultiple == 0;
  if (!p.block) {
    p.n_work = a.n * a.n_head;
    return p;
  }
  p.heads = std::min(heads, group);
  p.tokens = std::max<int64_t>(1, kAttendBlockQueries / p.heads);
  p.head_parts = (group + p.heads - 1) / p.heads;
  p.n_work = (a.n + p.tokens - 1) / p.tokens * a.n_head_kv * p.head_parts;
  return p;
}

// Block job `job` of a sequence: its tokens x heads through attend_block.
void RunBlockJob(const AttentionArgs& a, const AttendPlan& p, int64_t job, float* scores) {
  const KvCache& kv = *a.kv;
  const int64_t n = a.n, hd = a.head_dim, Q = a.n_head * hd;
  const int64_t group = a.n_head / a.n_head_kv, n_head_kv = a.n_head_kv;
  const int64_t heads = p.heads, tokens = p.tokens, head_parts = p.head_parts;
  const TokenPlace* places = a.places;
  const int64_t t0 = job / (n_head_kv * head_parts) * tokens;
  const int64_t kvh = job / head_parts % n_head_kv;
  const int64_t h0 = kvh * group + job % head_parts * heads;
  const int64_t t1 = std::min(n, t0 + tokens), h1 = std::min((kvh + 1) * group, h0 + heads);
  const float* qs[kAttendBlockQueries];
  float* outs[kAttendBlockQueries];
  int64_t first[kAttendBlockQueries], visible[kAttendBlockQueries];
  // The block's rows: the last token's (chain), or all its tokens'.
  const TokenPlace& last = places[t1 - 1];
  thread_local std::vector<RowRange> rows;
  rows = p.sliding ? BlockRows(places[t0], last, t1 - 1 - t0) : RowsFrom(last, 0);
  int64_t n_rows = 0;
  for (const RowRange& r : rows) n_rows += r.n;
  int n_q = 0;
  for (int64_t t = t0; t < t1; ++t) {
    for (int64_t h = h0; h < h1; ++h, ++n_q) {
      qs[n_q] = &a.q[t * Q + h * hd];
      outs[n_q] = &a.out[t * Q + h * hd];
      // Token t's own row is (t1 - 1 - t) rows before the block's last.
      visible[n_q] = p.sliding ? n_rows - (t1 - 1 - t) : RowsOf(places[t]);
      first[n_q] = visible[n_q] - RowsOf(places[t]);
    }
  }
  thread_local std::vector<KvSpan> spans;
  spans.clear();
  for (const RowRange& r : rows) spans.push_back(kv.SpanF16(a.layer, r.begin, r.n, kvh));
  Active().attend_block(qs, p.sliding ? first : nullptr, visible, n_q, spans.data(),
                        static_cast<int>(spans.size()), kv.row_stride(), static_cast<int>(hd),
                        a.scale, scores, outs);
}

// Head job `job` of a sequence: one query head of one token.
void RunHeadJob(const AttentionArgs& a, int64_t job, float* scores) {
  const KvCache& kv = *a.kv;
  const int64_t l = a.layer, hd = a.head_dim, Q = a.n_head * hd;
  const int64_t group = a.n_head / a.n_head_kv;
  const int64_t t = job / a.n_head, h = job % a.n_head, kvh = h / group;
  const TokenPlace& pl = a.places[t];
  const float* q = &a.q[t * Q + h * hd];
  float* out = &a.out[t * Q + h * hd];
  const int head_dim = static_cast<int>(hd);
  if (kv.type() == KvType::kQ8) {
    KvSpanQ8 spans[3];
    for (int r = 0; r < pl.n_rows; ++r)
      spans[r] = kv.SpanQ8(l, pl.rows[r].begin, pl.rows[r].n, kvh);
    Active().attend_head_q8(q, spans, pl.n_rows, kv.row_stride(), kv.scale_stride(), head_dim,
                            a.scale, scores, out);
  } else if (kv.type() == KvType::kF32) {
    KvSpanF32 spans[3];
    for (int r = 0; r < pl.n_rows; ++r) {
      spans[r] = kv.SpanF32(l, pl.rows[r].begin, pl.rows[r].n, kvh);
    }
    Active().attend_head_f32(q, spans, pl.n_rows, kv.row_stride(), head_dim, a.scale, scores, out);
  } else {
    KvSpan spans[3];
    for (int r = 0; r < pl.n_rows; ++r)
      spans[r] = kv.SpanF16(l, pl.rows[r].begin, pl.rows[r].n, kvh);
    Active().attend_head(q, spans, pl.n_rows, kv.row_stride(), head_dim, a.scale, scores, out);
  }
}

}  // namespace

void AttendMany(const AttentionArgs* args, int64_t count) {
  if (count <= 0) return;
  // Every query's result is AttendBlock_ref's (or its head kernel's) whatever
  // job it is in, so the jobs may follow the thread count: a group's heads
  // are split into parts until every thread has a job (a decode step of a
  // model with fewer KV heads than threads), counting the jobs of all the
  // sequences, which share one parallel region (a step of 4 sequences of
  // SmolLM2 is 12 jobs for 2 threads, where each alone was 3: 2 on one
  // thread, 1 on the other).
  const int n_threads = args[0].n_threads;
  int64_t heads = kAttendBlockQueries;
  thread_local std::vector<AttendPlan> plans;   // per sequence; no allocation per step
  thread_local std::vector<int64_t> first_job;  // [count + 1] each sequence's first job
  int64_t total = 0;
  for (;;) {
    plans.clear();
    first_job.assign(1, 0);
    int64_t max_heads = 1;
    for (int64_t i = 0; i < count; ++i) {
      plans.push_back(PlanOf(args[i], heads));
      first_job.push_back(first_job.back() + plans.back().n_work);
      if (plans.back().block) max_heads = std::max(max_heads, plans.back().heads);
    }
    total = first_job.back();
    if (total >= n_threads || max_heads <= 1) break;
    heads = (max_heads + 1) / 2;
  }
  // The threads' scratch: one stride for all sequences (their caches may
  // differ in rows), the largest; the caller sized scores for it.
  size_t per_thread = 0;
  for (int64_t i = 0; i < count; ++i) {
    per_thread = std::max(
        per_thread, static_cast<size_t>(AttentionScratchPerThread(*args[i].kv, args[i].layer)));
  }
  float* const scores = args[0].scores;
  const AttentionArgs* const as = args;
  const AttendPlan* const ps = plans.data();
  const int64_t* const firsts = first_job.data();
  // Jobs go round the threads one by one: later blocks see more rows.
#pragma omp parallel for num_threads(n_threads) schedule(static, 1) if (n_threads > 1 && total > 1)
  for (int64_t job = 0; job < total; ++job) {
    int64_t i = 0;
    while (firsts[i + 1] <= job) ++i;
    float* s = &scores[static_cast<size_t>(omp_get_thread_num()) * per_thread];
    if (ps[i].block) {
      RunBlockJob(as[i], ps[i], job - firsts[i], s);
    } else {
      RunHeadJob(as[i], job - firsts[i], s);
    }
  }
}

}  // namespace ember
