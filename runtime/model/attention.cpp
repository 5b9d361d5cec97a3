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

// One block job's operands: its queries (tokens x heads of one KV head) and
// the cache rows they read. At most 6 spans: a token's rows are up to three
// ranges, and a sliding block adds its last token's new rows (up to three).
constexpr int kMaxBlockSpans = 6;
struct Block {
  const float* qs[kAttendBlockQueries];
  float* outs[kAttendBlockQueries];
  int64_t first[kAttendBlockQueries], visible[kAttendBlockQueries];
  const int64_t* n_first;  // first, or null (a chain: every query from row 0)
  int n_q = 0;
  KvSpan spans[kMaxBlockSpans];
  int n_spans = 0;
  int64_t n_rows = 0;
};

// Block job `job` of a sequence.
void MakeBlock(const AttentionArgs& a, const AttendPlan& p, int64_t job, Block* b) {
  const KvCache& kv = *a.kv;
  const int64_t n = a.n, hd = a.head_dim, Q = a.n_head * hd;
  const int64_t group = a.n_head / a.n_head_kv, n_head_kv = a.n_head_kv;
  const int64_t heads = p.heads, tokens = p.tokens, head_parts = p.head_parts;
  const TokenPlace* places = a.places;
  const int64_t t0 = job / (n_head_kv * head_parts) * tokens;
  const int64_t kvh = job / head_parts % n_head_kv;
  const int64_t h0 = kvh * group + job % head_parts * heads;
  const int64_t t1 = std::min(n, t0 + tokens), h1 = std::min((kvh + 1) * group, h0 + heads);
  // The block's rows: the last token's (chain), or all its tokens'.
  const TokenPlace& last = places[t1 - 1];
  thread_local std::vector<RowRange> rows;
  rows = p.sliding ? BlockRows(places[t0], last, t1 - 1 - t0) : RowsFrom(last, 0);
  b->n_rows = 0;
  b->n_spans = 0;
  for (const RowRange& r : rows) {
    b->n_rows += r.n;
    b->spans[b->n_spans++] = kv.SpanF16(a.layer, r.begin, r.n, kvh);
  }
  b->n_q = 0;
  for (int64_t t = t0; t < t1; ++t) {
    for (int64_t h = h0; h < h1; ++h, ++b->n_q) {
      b->qs[b->n_q] = &a.q[t * Q + h * hd];
      b->outs[b->n_q] = &a.out[t * Q + h * hd];
      // Token t's own row is (t1 - 1 - t) rows before the block's last.
      b->visible[b->n_q] = p.sliding ? b->n_rows - (t1 - 1 - t) : RowsOf(places[t]);
      b->first[b->n_q] = b->visible[b->n_q] - RowsOf(places[t]);
    }
  }
  b->n_first = p.sliding ? b->first : nullptr;
}

void RunBlock(const Block& b, size_t stride, int head_dim, float scale, float* scores) {
  Active().attend_block(b.qs, b.n_first, b.visible, b.n_q, b.spans, b.n_spans, stride, head_dim,
                        scale, scores, b.outs);
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

namespace {

// Rows a block needs before it is split over threads: below this the two
// extra barriers cost more than the idle thread.
constexpr int64_t kSplitMinRows = 256;
// Row runs of a split block's scores start at multiples of this (the AVX2
// scores take keys 8 at a time and prefetch 16 ahead).
constexpr int64_t kSplitRowUnit = 32;
// Dims of the values go to threads in runs of this many (a head dim that is
// not a multiple: one run). Two threads reading the halves of the same
// 128-byte line pairs (SmolLM2's 64 dims of f16) each pull the whole pair:
// measured 1.4x slower than one thread reading them all.
constexpr int64_t kSplitDimUnit = 64;

int64_t Gcd(int64_t a, int64_t b) { return b == 0 ? a : Gcd(b, a % b); }

// Into how many parts each block job of a step is split: 1 (none) unless
// every job is a block of at most kAttendLanes queries over kSplitMinRows
// rows or more, and the jobs do not fill the threads evenly; then enough
// parts for every thread to get the same number (a decode step of SmolLM2's 3
// KV heads on 2 threads: 2 parts each, 3 per thread; Gemma 3's one: 2).
int64_t SplitParts(const AttentionArgs* args, const AttendPlan* plans, int64_t count, int64_t total,
                   int n_threads) {
  if (n_threads <= 1) return 1;
  if (total >= n_threads) return 1;
  const int64_t parts = n_threads / Gcd(total, n_threads);
  for (int64_t i = 0; i < count; ++i) {
    const AttentionArgs& a = args[i];
    const AttendPlan& p = plans[i];
    if (!p.block || std::min(a.n, p.tokens) * p.heads > kAttendLanes) return 1;
    if (RowsOf(a.places[a.n - 1]) < kSplitMinRows) return 1;
  }
  return parts;
}

// The rows [r0, r1) of run `part` of a block's rows split in `parts` runs.
void RowRun(int64_t n_rows, int64_t part, int64_t parts, int64_t* r0, int64_t* r1) {
  const int64_t run =
      (n_rows + parts * kSplitRowUnit - 1) / (parts * kSplitRowUnit) * kSplitRowUnit;
  *r0 = std::min(n_rows, part * run);
  *r1 = std::min(n_rows, *r0 + run);
}

// The split form of AttendMany's block jobs (ops/attention.h's stages), in
// three rounds over the threads, each job in `parts` tasks per round:
//   1. the scores of a run of the rows, and their maximum per query;
//   2. the probabilities of the same run (thread by thread the same rows as
//      in round 1: a static schedule of the same loop);
//   3. the values of a run of the dims (each task sums the probabilities).
// The bits are those of one attend_block call per job.
void AttendSplit(const AttentionArgs* args, const AttendPlan* plans, const int64_t* first_job,
                 int64_t count, int64_t parts, size_t per_thread) {
  const int64_t total = first_job[count];
  // Per job: its operands, sequence, and where its floats start in `shared`:
  // st [n_rows][8], qt [head_dim][8], then the runs' maxima [parts][8].
  struct Job {
    Block b;
    const AttentionArgs* a;
    float *st, *qt, *mx;
  };
  thread_local std::vector<Job> jobs;
  thread_local std::vector<float> shared;
  jobs.resize(static_cast<size_t>(total));
  thread_local std::vector<size_t> at;
  at.resize(static_cast<size_t>(total));
  size_t floats = 0;
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t job = first_job[i]; job < first_job[i + 1]; ++job) {
      Job& j = jobs[static_cast<size_t>(job)];
      MakeBlock(args[i], plans[i], job - first_job[i], &j.b);
      j.a = &args[i];
      at[static_cast<size_t>(job)] = floats;
      floats += static_cast<size_t>((j.b.n_rows + args[i].head_dim + parts) * kAttendLanes);
    }
  }
  if (shared.size() < floats) shared.resize(floats);
  for (int64_t job = 0; job < total; ++job) {
    Job& j = jobs[static_cast<size_t>(job)];
    j.st = shared.data() + at[static_cast<size_t>(job)];
    j.qt = j.st + j.b.n_rows * kAttendLanes;
    j.mx = j.qt + j.a->head_dim * kAttendLanes;
    AttendQueriesT(j.b.qs, j.b.n_q, static_cast<int>(j.a->head_dim), j.qt);
  }
  const Kernels& k = Active();
  float* const scores = args[0].scores;
  const Job* const js = jobs.data();  // workers see their own thread_local `jobs`
  // Runs of the dims for the values: whole kSplitDimUnit, as many as parts.
  int64_t vparts = 1;
  for (int64_t job = 0; job < total; ++job) {
    const int64_t hd = js[job].a->head_dim;
    if (hd % kSplitDimUnit == 0) vparts = std::max(vparts, std::min(parts, hd / kSplitDimUnit));
  }
#pragma omp parallel num_threads(args[0].n_threads)
  {
    float* kf = &scores[static_cast<size_t>(omp_get_thread_num()) * per_thread];
#pragma omp for schedule(static, 1)
    for (int64_t task = 0; task < total * parts; ++task) {
      const Job& j = js[task / parts];
      const int64_t part = task % parts;
      const size_t stride = j.a->kv->row_stride();
      int64_t r0, r1;
      RowRun(j.b.n_rows, part, parts, &r0, &r1);
      KvSpan sub[kMaxBlockSpans];
      const int n_sub = SubSpans(j.b.spans, j.b.n_spans, stride, r0, r1, sub);
      k.attend_scores(j.qt, j.b.n_q, sub, n_sub, stride, static_cast<int>(j.a->head_dim),
                      j.a->scale, kf, j.st + r0 * kAttendLanes);
      k.attend_max(j.b.n_first, j.b.visible, j.b.n_q, r0, r1, j.st, j.mx + part * kAttendLanes);
    }
#pragma omp for schedule(static, 1)
    for (int64_t task = 0; task < total * parts; ++task) {
      const Job& j = js[task / parts];
      float mx[kAttendLanes];
      for (int m = 0; m < j.b.n_q; ++m) {
        mx[m] = j.mx[m];
        for (int64_t r = 1; r < parts; ++r) mx[m] = std::max(mx[m], j.mx[r * kAttendLanes + m]);
      }
      int64_t r0, r1;
      RowRun(j.b.n_rows, task % parts, parts, &r0, &r1);
      k.attend_exp(j.b.n_first, j.b.visible, j.b.n_q, r0, r1, mx, j.st);
    }
#pragma omp for schedule(static, 1)
    for (int64_t task = 0; task < total * vparts; ++task) {
      const Job& j = js[task / vparts];
      const int64_t part = task % vparts, hd = j.a->head_dim;
      const int64_t unit = hd % kSplitDimUnit == 0 ? kSplitDimUnit : hd;
      const int64_t units = hd / unit, n = std::min(vparts, units);
      const int64_t d0 = part * units / n * unit, d1 = (part + 1) * units / n * unit;
      if (part < n) {
        k.attend_values(j.st, j.b.n_q, j.b.spans, j.b.n_spans, j.a->kv->row_stride(),
                        static_cast<int>(d0), static_cast<int>(d1), j.b.outs);
      }
    }
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
  int64_t parts = 1;
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
    // Whole groups first: split over rows and dims when the jobs leave
    // threads idle and are long; halving the groups' heads instead reads
    // every key and value row once per part.
    if (heads == kAttendBlockQueries)
      parts = SplitParts(args, plans.data(), count, total, n_threads);
    if (parts > 1 || total >= n_threads || max_heads <= 1) break;
    heads = (max_heads + 1) / 2;
  }
  // The threads' scratch: one stride for all sequences (their caches may
  // differ in rows), the largest; the caller sized scores for it.
  size_t per_thread = 0;
  for (int64_t i = 0; i < count; ++i) {
    per_thread = std::max(
        per_thread, static_cast<size_t>(AttentionScratchPerThread(*args[i].kv, args[i].layer)));
  }
  if (parts > 1) {
    AttendSplit(args, plans.data(), first_job.data(), count, parts, per_thread);
    return;
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
      Block b;
      MakeBlock(as[i], ps[i], job - firsts[i], &b);
      RunBlock(b, as[i].kv->row_stride(), static_cast<int>(as[i].head_dim), as[i].scale, s);
    } else {
      RunHeadJob(as[i], job - firsts[i], s);
    }
  }
}

}  // namespace ember
