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

void Attend(const AttentionArgs& a) {
  const KvCache& kv = *a.kv;
  const int64_t l = a.layer, n = a.n, hd = a.head_dim, Q = a.n_head * hd;
  const int64_t n_head = a.n_head, n_head_kv = a.n_head_kv, group = n_head / n_head_kv;
  const TokenPlace* places = a.places;
  const int n_threads = a.n_threads;
  const bool chain = RowsChain(places, n);
  const bool sliding = !chain && SlidingChain(places, n);
  const float scale = a.scale;
  const size_t per_thread = static_cast<size_t>(AttentionScratchPerThread(kv, l));
  const KvType type = kv.type();
  if (type == KvType::kF16 && (chain || sliding) && hd % kAttendBlockDimMultiple == 0) {
    // Blocks of consecutive tokens x heads of one GQA group (up to
    // kAttendBlockQueries queries) share each converted key and value row: a
    // prompt chunk, and a single decoded token (its group's heads). Every
    // query's result is AttendBlock_ref's whatever block it is in, so the
    // blocks may follow the thread count: a group's heads are split into
    // parts until every thread has a job (a decode step of a model with
    // fewer KV heads than threads). In a chain the block's rows are its last
    // token's and each query sees a prefix of them; under a sliding window
    // they are the rows of all its tokens and each query sees a range.
    const AttendBlockFn attend_block = Active().attend_block;
    int64_t heads = std::min<int64_t>(group, kAttendBlockQueries);             // per job
    const int64_t tokens = std::max<int64_t>(1, kAttendBlockQueries / heads);  // per job
    const int64_t n_blocks = (n + tokens - 1) / tokens;
    while (heads > 1 && n_blocks * n_head_kv * ((group + heads - 1) / heads) < n_threads) {
      heads = (heads + 1) / 2;
    }
    const int64_t head_parts = (group + heads - 1) / heads;
    const int64_t n_work = n_blocks * n_head_kv * head_parts;
    // Jobs go round the threads one by one: later blocks see more rows.
#pragma omp parallel for num_threads(n_threads) schedule(static, 1) if (n_threads > 1)
    for (int64_t job = 0; job < n_work; ++job) {
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
      rows = sliding ? BlockRows(places[t0], last, t1 - 1 - t0) : RowsFrom(last, 0);
      int64_t n_rows = 0;
      for (const RowRange& r : rows) n_rows += r.n;
      int n_q = 0;
      for (int64_t t = t0; t < t1; ++t) {
        for (int64_t h = h0; h < h1; ++h, ++n_q) {
          qs[n_q] = &a.q[t * Q + h * hd];
          outs[n_q] = &a.out[t * Q + h * hd];
          // Token t's own row is (t1 - 1 - t) rows before the block's last.
          visible[n_q] = sliding ? n_rows - (t1 - 1 - t) : RowsOf(places[t]);
          first[n_q] = visible[n_q] - RowsOf(places[t]);
        }
      }
      thread_local std::vector<KvSpan> spans;
      spans.clear();
      for (const RowRange& r : rows) spans.push_back(kv.SpanF16(l, r.begin, r.n, kvh));
      attend_block(qs, sliding ? first : nullptr, visible, n_q, spans.data(),
                   static_cast<int>(spans.size()), kv.row_stride(), static_cast<int>(hd), scale,
                   &a.scores[static_cast<size_t>(omp_get_thread_num()) * per_thread], outs);
    }
    return;
  }
  // One query head per job (the int8 and f32 caches, batches of several
  // sequences), which balances the threads for a single token.
  const AttendHeadFn attend = Active().attend_head;
  const AttendHeadQ8Fn attend_q8 = Active().attend_head_q8;
  const AttendHeadF32Fn attend_f32 = Active().attend_head_f32;
  const int64_t n_work = n * n_head;
#pragma omp parallel for num_threads(n_threads) schedule(static, 1) if (n_threads > 1)
  for (int64_t job = 0; job < n_work; ++job) {
    const int64_t t = job / n_head, h = job % n_head, kvh = h / group;
    float* scores = &a.scores[static_cast<size_t>(omp_get_thread_num()) * per_thread];
    const TokenPlace& pl = places[t];
    if (type == KvType::kQ8) {
      KvSpanQ8 spans[3];
      for (int r = 0; r < pl.n_rows; ++r) {
        spans[r] = kv.SpanQ8(l, pl.rows[r].begin, pl.rows[r].n, kvh);
      }
      attend_q8(&a.q[t * Q + h * hd], spans, pl.n_rows, kv.row_stride(), kv.scale_stride(),
                static_cast<int>(hd), scale, scores, &a.out[t * Q + h * hd]);
    } else if (type == KvType::kF32) {
      KvSpanF32 spans[3];
      for (int r = 0; r < pl.n_rows; ++r) {
        spans[r] = kv.SpanF32(l, pl.rows[r].begin, pl.rows[r].n, kvh);
      }
      attend_f32(&a.q[t * Q + h * hd], spans, pl.n_rows, kv.row_stride(), static_cast<int>(hd),
                 scale, scores, &a.out[t * Q + h * hd]);
    } else {
      KvSpan spans[3];
      for (int r = 0; r < pl.n_rows; ++r) {
        spans[r] = kv.SpanF16(l, pl.rows[r].begin, pl.rows[r].n, kvh);
      }
      attend(&a.q[t * Q + h * hd], spans, pl.n_rows, kv.row_stride(), static_cast<int>(hd), scale,
             scores, &a.out[t * Q + h * hd]);
    }
  }
}

}  // namespace ember
