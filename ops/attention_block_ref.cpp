// AttendBlock_ref: the definition every AttendBlock variant reproduces bit for
// bit (ops/attention.h). One query at a time, in the order of the formulas.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/attention.h"
#include "ops/exp_poly.h"
#include "quant/fp16.h"

namespace ember {

void AttendBlock_ref(const float* const* q, const int64_t* n_first, const int64_t* n_visible,
                     int n_q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                     float scale, float* scratch, float* const* out) {
  float* qr = scratch;            // [head_dim]
  float* p = scratch + head_dim;  // [n_visible[m]], entries n_first[m].. used
  for (int m = 0; m < n_q; ++m) {
    for (int d = 0; d < head_dim; ++d) qr[d] = Fp16ToFp32(Fp32ToFp16(q[m][d]));
    const int64_t n_fst = n_first ? n_first[m] : 0, n_vis = n_visible[m];
    // Scores of the visible rows, in span order.
    int64_t j = 0;
    for (int i = 0; i < n_spans && j < n_vis; ++i) {
      for (int64_t r = 0; r < spans[i].n && j < n_vis; ++r, ++j) {
        if (j < n_fst) continue;
        const uint16_t* k = spans[i].k + static_cast<size_t>(r) * stride;
        float acc = 0.0f;
        for (int d = 0; d < head_dim; ++d) acc = std::fma(qr[d], Fp16ToFp32(k[d]), acc);
        p[j] = acc * scale;
      }
    }
    float mx = -std::numeric_limits<float>::infinity();
    for (int64_t t = n_fst; t < n_vis; ++t) mx = std::max(mx, p[t]);
    double sum = 0.0;
    for (int64_t t = n_fst; t < n_vis; ++t) {
      p[t] = ExpPoly_ref(p[t] - mx);
      sum += static_cast<double>(p[t]);
    }
    const float inv = static_cast<float>(1.0 / sum);
    // out[m] accumulates the fma chain of each dim in row order.
    float* o = out[m];
    for (int d = 0; d < head_dim; ++d) o[d] = 0.0f;
    j = 0;
    for (int i = 0; i < n_spans && j < n_vis; ++i) {
      for (int64_t r = 0; r < spans[i].n && j < n_vis; ++r, ++j) {
        if (j < n_fst) continue;
        const uint16_t* v = spans[i].v + static_cast<size_t>(r) * stride;
        for (int d = 0; d < head_dim; ++d) o[d] = std::fma(p[j], Fp16ToFp32(v[d]), o[d]);
      }
    }
    for (int d = 0; d < head_dim; ++d) o[d] *= inv;
  }
}

}  // namespace ember

// The stages (ops/attention.h): the same formulas, every row scored and
// probabilities 0 outside a query's window, which leaves the value chains'
// bits as they are (see AttendBlock above).
namespace ember {

// Each query is rounded once; the lanes past n_q copy the last one (the
// rounding of 8 lanes was ~0.012 ms of a 256-dim block, serial before the
// split: 2% of a Gemma 3 token on 2 threads, stop 46).
void AttendQueriesT(const float* const* q, int n_q, int head_dim, float* qt) {
  for (int m = 0; m < n_q; ++m) {
    for (int d = 0; d < head_dim; ++d) {
      qt[d * kAttendLanes + m] = Fp16ToFp32(Fp32ToFp16(q[m][d]));
    }
  }
  for (int d = 0; d < head_dim; ++d) {
    float* row = qt + d * kAttendLanes;
    for (int m = n_q; m < kAttendLanes; ++m) row[m] = row[n_q - 1];
  }
}

void AttendScores_ref(const float* qt, int n_q, const KvSpan* spans, int n_spans, size_t stride,
                      int head_dim, float scale, float* /*kf*/, float* st) {
  for (int i = 0; i < n_spans; ++i) {
    for (int64_t r = 0; r < spans[i].n; ++r, st += kAttendLanes) {
      const uint16_t* k = spans[i].k + static_cast<size_t>(r) * stride;
      for (int m = 0; m < n_q; ++m) {
        float acc = 0.0f;
        for (int d = 0; d < head_dim; ++d) {
          acc = std::fma(qt[d * kAttendLanes + m], Fp16ToFp32(k[d]), acc);
        }
        st[m] = acc * scale;
      }
    }
  }
}

void AttendMax_ref(const int64_t* n_first, const int64_t* n_visible, int n_q, int64_t r0,
                   int64_t r1, const float* st, float* mx) {
  for (int m = 0; m < n_q; ++m) {
    const int64_t f = std::max(r0, n_first ? n_first[m] : 0), n = std::min(r1, n_visible[m]);
    mx[m] = -std::numeric_limits<float>::infinity();
    for (int64_t j = f; j < n; ++j) mx[m] = std::max(mx[m], st[j * kAttendLanes + m]);
  }
}

void AttendExp_ref(const int64_t* n_first, const int64_t* n_visible, int n_q, int64_t r0,
                   int64_t r1, const float* mx, float* st) {
  for (int m = 0; m < n_q; ++m) {
    const int64_t f = n_first ? n_first[m] : 0, n = n_visible[m];
    for (int64_t j = r0; j < r1; ++j) {
      float& p = st[j * kAttendLanes + m];
      p = j >= f && j < n ? ExpPoly_ref(p - mx[m]) : 0.0f;
    }
  }
}

void AttendValues_ref(const float* st, int n_q, const KvSpan* spans, int n_spans, size_t stride,
                      int d0, int d1, float* const* out) {
  for (int m = 0; m < n_q; ++m) {
    float* o = out[m];
    for (int d = d0; d < d1; ++d) o[d] = 0.0f;
    double sum = 0.0;
    const float* p = st + m;
    for (int i = 0; i < n_spans; ++i) {
      for (int64_t r = 0; r < spans[i].n; ++r, p += kAttendLanes) {
        const uint16_t* v = spans[i].v + static_cast<size_t>(r) * stride;
        for (int d = d0; d < d1; ++d) o[d] = std::fma(*p, Fp16ToFp32(v[d]), o[d]);
        sum += static_cast<double>(*p);
      }
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int d = d0; d < d1; ++d) o[d] *= inv;
  }
}

}  // namespace ember
