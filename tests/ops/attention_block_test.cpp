// AttendBlock (causal prefill attention over a block of queries, each query
// over a window of the rows): _ref against attention computed in double,
// every ISA variant bit for bit against _ref.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ops/attention.h"
#include "ops/kernels.h"
#include "quant/fp16.h"
#include "support/simd_isas.h"

using namespace ember;

namespace {

constexpr float kScale = 0.125f;

struct Case {
  int head_dim = 64;
  int n_q = 1;
  size_t stride = 64;
  std::vector<uint16_t> k, v;         // [n_rows_total, stride]
  std::vector<std::vector<float>> q;  // [n_q][head_dim]
  std::vector<int64_t> n_first;       // [n_q], or empty: n_first = nullptr
  std::vector<int64_t> n_visible;     // [n_q]
  std::vector<KvSpan> spans;

  int64_t n_rows() const {
    int64_t n = 0;
    for (const KvSpan& s : spans) n += s.n;
    return n;
  }
  int64_t first(int m) const { return n_first.empty() ? 0 : n_first[m]; }
};

// Rows in two spans (n_a, then n_b) with unrelated rows between them; visible
// counts random, with the last query seeing every row (as the block's latest
// token does); no windows (n_first empty).
Case MakeCase(std::mt19937& rng, int head_dim, int n_q, int64_t n_a, int64_t n_b) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  Case c;
  c.head_dim = head_dim;
  c.n_q = n_q;
  c.stride = static_cast<size_t>(head_dim) * 2;  // two KV heads interleaved
  const int64_t gap = 3, total = n_a + gap + n_b;
  c.k.resize(c.stride * total);
  c.v.resize(c.stride * total);
  for (auto& x : c.k) x = Fp32ToFp16(d(rng));
  for (auto& x : c.v) x = Fp32ToFp16(d(rng));
  c.spans.push_back({c.k.data(), c.v.data(), n_a});
  if (n_b > 0) {
    c.spans.push_back(
        {c.k.data() + (n_a + gap) * c.stride, c.v.data() + (n_a + gap) * c.stride, n_b});
  }
  const int64_t n_rows = n_a + n_b;
  std::uniform_int_distribution<int64_t> vis(1, n_rows);
  for (int m = 0; m < n_q; ++m) {
    std::vector<float> qm(head_dim);
    for (float& x : qm) x = 2.0f * d(rng);
    c.q.push_back(qm);
    c.n_visible.push_back(m == n_q - 1 ? n_rows : vis(rng));
  }
  return c;
}

// A random window [n_first, n_visible) per query, in no particular order:
// one row, a few rows, one across the boundary of the two spans, any size,
// or all visible rows.
void AddWindows(std::mt19937& rng, Case* c) {
  const int64_t n_a = c->spans[0].n;
  const auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  c->n_first.clear();
  for (int m = 0; m < c->n_q; ++m) {
    const int64_t n_vis = c->n_visible[m];
    int64_t first = 0;
    switch (uniform(0, 4)) {
      case 0:
        first = n_vis - 1;
        break;
      case 1:
        first = std::max<int64_t>(0, n_vis - uniform(2, 4));
        break;
      case 2:  // rows n_a - 1 and n_a both visible when the second span is
        first = n_vis > n_a ? uniform(0, n_a - 1) : uniform(0, n_vis - 1);
        break;
      case 3:
        first = uniform(0, n_vis - 1);
        break;
      default:
        break;
    }
    c->n_first.push_back(first);
  }
}

// A sliding window of w rows over a prompt chunk: the block holds
// tokens x heads queries (token-major), token t seeing the first
// n_rows - (tokens - 1 - t) rows (n_rows >= tokens), and of those the last w.
void SlidingWindows(int heads, int64_t w, Case* c) {
  const int tokens = c->n_q / heads;
  c->n_first.clear();
  c->n_visible.clear();
  for (int m = 0; m < c->n_q; ++m) {
    const int64_t n_vis = c->n_rows() - (tokens - 1 - m / heads);
    c->n_visible.push_back(n_vis);
    c->n_first.push_back(std::max<int64_t>(0, n_vis - w));
  }
}

std::vector<std::vector<float>> Run(AttendBlockFn fn, const Case& c) {
  std::vector<float> scratch(static_cast<size_t>(AttendBlockScratch(c.n_rows(), c.head_dim)));
  std::vector<std::vector<float>> out(c.n_q, std::vector<float>(c.head_dim, -7.0f));
  std::vector<const float*> qp;
  std::vector<float*> op;
  for (int m = 0; m < c.n_q; ++m) {
    qp.push_back(c.q[m].data());
    op.push_back(out[m].data());
  }
  fn(qp.data(), c.n_first.empty() ? nullptr : c.n_first.data(), c.n_visible.data(), c.n_q,
     c.spans.data(), static_cast<int>(c.spans.size()), c.stride, c.head_dim, kScale, scratch.data(),
     op.data());
  return out;
}

// _ref and every compiled variant this CPU runs.
std::vector<std::pair<std::string, AttendBlockFn>> Variants() {
  std::vector<std::pair<std::string, AttendBlockFn>> v = {{"ref", AttendBlock_ref}};
  for (Isa isa :
       {Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Vnni, Isa::kNeon, Isa::kNeonDot, Isa::kNeonI8mm}) {
    if (test::CanTestVariants(isa)) {
      v.emplace_back(IsaName(isa), KernelsFor(isa).attend_block);
    }
  }
  return v;
}

// out of query m in double over exactly its window rows, and a bound on
// _ref's error scaled to the inputs (u = 2^-24, the f32 unit roundoff):
//   a score s_j is off by (hd + 1) u a_j, a_j = scale * sum_d |qr_d k_j[d]|;
//   s_j - max adds u |s_j - max| and ExpPoly 2 ulp (4 u), so each p_j is off
//   by at most rho relative, the weights p_j / sum p by 2 rho; the fma chain
//   over n rows and the final scaling add (n + 3) u of sum_j w_j |v_j[d]|.
// The tolerance is twice that bound.
void CheckAgainstDouble(const Case& c, const std::vector<std::vector<float>>& got) {
  const double u = std::ldexp(1.0, -24);
  std::vector<const uint16_t*> ks, vs;  // every row, in span order
  for (const KvSpan& s : c.spans) {
    for (int64_t r = 0; r < s.n; ++r) {
      ks.push_back(s.k + r * c.stride);
      vs.push_back(s.v + r * c.stride);
    }
  }
  for (int m = 0; m < c.n_q; ++m) {
    const int64_t f = c.first(m), n = c.n_visible[m];
    std::vector<double> s(n - f), a(n - f);
    double mx = -1e300;
    for (int64_t j = f; j < n; ++j) {
      double dot = 0.0, abs_dot = 0.0;
      for (int d = 0; d < c.head_dim; ++d) {
        const double x = double(Fp16ToFp32(Fp32ToFp16(c.q[m][d]))) * Fp16ToFp32(ks[j][d]);
        dot += x;
        abs_dot += std::fabs(x);
      }
      s[j - f] = kScale * dot;
      a[j - f] = kScale * abs_dot;
      mx = std::max(mx, s[j - f]);
    }
    double sum = 0.0, rho = 0.0;
    std::vector<double> w(n - f);
    for (int64_t i = 0; i < n - f; ++i) {
      rho = std::max(rho, ((c.head_dim + 1) * a[i] + std::fabs(s[i] - mx) + 4.0) * u);
      sum += (w[i] = std::exp(s[i] - mx));
    }
    for (double& x : w) x /= sum;
    for (int d = 0; d < c.head_dim; ++d) {
      double want = 0.0, mag = 0.0;
      for (int64_t j = f; j < n; ++j) {
        want += w[j - f] * Fp16ToFp32(vs[j][d]);
        mag += w[j - f] * std::fabs(Fp16ToFp32(vs[j][d]));
      }
      const double tol = 2.0 * (2.0 * rho + double(n - f + 3) * u) * mag;
      INFO("head_dim " << c.head_dim << " query " << m << " rows [" << f << ", " << n << ") dim "
                       << d << " tol " << tol);
      REQUIRE(std::fabs(got[m][d] - want) <= tol);
    }
  }
}

}  // namespace

TEST_CASE("attention block: _ref is windowed causal softmax attention (double math)",
          "[attention]") {
  std::mt19937 rng(8);
  for (int head_dim : {16, 64}) {
    for (auto [n_a, n_b] : {std::pair<int64_t, int64_t>{11, 6}, {1, 0}, {40, 25}}) {
      Case c = MakeCase(rng, head_dim, 9, n_a, n_b);
      CheckAgainstDouble(c, Run(AttendBlock_ref, c));  // no windows
      for (int rep = 0; rep < 4; ++rep) {
        AddWindows(rng, &c);
        CheckAgainstDouble(c, Run(AttendBlock_ref, c));
      }
      if (c.n_rows() >= 3) {  // 3 tokens x 3 heads
        SlidingWindows(3, 7, &c);
        CheckAgainstDouble(c, Run(AttendBlock_ref, c));
      }
    }
  }
}

TEST_CASE("attention block: rows outside a query's window do not matter", "[attention][isa]") {
  std::mt19937 rng(9);
  for (const auto& [name, fn] : Variants()) {
    for (int head_dim : {16, 64, 72}) {
      for (int n_q : {2, 4, 8, 16}) {
        // Queries but the last see windows inside rows [5, 14) of 20 (two
        // spans, 12 + 8); the last sees all 20.
        Case c = MakeCase(rng, head_dim, n_q, 12, 8);
        std::uniform_int_distribution<int64_t> first(5, 13);
        c.n_first.assign(n_q, 0);
        for (int m = 0; m + 1 < n_q; ++m) {
          c.n_first[m] = first(rng);
          c.n_visible[m] = std::uniform_int_distribution<int64_t>(c.n_first[m] + 1, 14)(rng);
        }
        const auto want = Run(fn, c);
        // Rows no window but the last one's holds: they would dominate max and
        // sum if they counted.
        Case d = c;
        // Rows 0..4 and 14..19 (stored rows 17..22: 3 between the spans).
        for (size_t r : {0, 1, 2, 3, 4, 17, 18, 19, 20, 21, 22}) {
          for (size_t i = r * d.stride; i < (r + 1) * d.stride; ++i) {
            d.k[i] = Fp32ToFp16(i % 2 ? 60.0f : -60.0f);
            d.v[i] = Fp32ToFp16(100.0f);
          }
        }
        d.spans[0] = {d.k.data(), d.v.data(), 12};
        d.spans[1] = {d.k.data() + 15 * d.stride, d.v.data() + 15 * d.stride, 8};
        const auto got = Run(fn, d);
        for (int m = 0; m + 1 < n_q; ++m) {
          INFO(name << " head_dim " << head_dim << " n_q " << n_q << " query " << m);
          CHECK(got[m] == want[m]);
        }
        CHECK(got[n_q - 1] != want[n_q - 1]);
      }
    }
  }
}

TEST_CASE("attention block: n_first == nullptr gives the bits of all-zero n_first",
          "[attention][isa]") {
  std::mt19937 rng(11);
  for (const auto& [name, fn] : Variants()) {
    for (int head_dim : {16, 64, 72, 128}) {
      for (int n_q : {1, 3, 4, 8, 9, 16}) {
        Case c = MakeCase(rng, head_dim, n_q, 13, 21);
        const auto want = Run(fn, c);
        c.n_first.assign(n_q, 0);
        const auto got = Run(fn, c);
        for (int m = 0; m < n_q; ++m) {
          INFO(name << " head_dim " << head_dim << " n_q " << n_q << " query " << m);
          REQUIRE(got[m] == want[m]);
        }
      }
    }
  }
}

TEST_CASE("attention block: dropping the rows no query sees gives the same bits",
          "[attention][isa]") {
  std::mt19937 rng(12);
  for (const auto& [name, fn] : Variants()) {
    for (int head_dim : {16, 64, 72}) {
      for (int n_q : {1, 4, 7, 16}) {
        for (int rep = 0; rep < 8; ++rep) {
          Case c = MakeCase(rng, head_dim, n_q, 12, 9);
          AddWindows(rng, &c);
          const int64_t lo = *std::min_element(c.n_first.begin(), c.n_first.end());
          if (lo == 0) continue;
          Case d = c;  // spans from row lo on, windows lowered by lo
          if (lo < d.spans[0].n) {
            d.spans[0] = {d.spans[0].k + lo * d.stride, d.spans[0].v + lo * d.stride,
                          d.spans[0].n - lo};
          } else {
            const int64_t skip = lo - d.spans[0].n;
            d.spans = {{d.spans[1].k + skip * d.stride, d.spans[1].v + skip * d.stride,
                        d.spans[1].n - skip}};
          }
          for (int m = 0; m < n_q; ++m) {
            d.n_first[m] -= lo;
            d.n_visible[m] -= lo;
          }
          const auto want = Run(fn, c);
          const auto got = Run(fn, d);
          for (int m = 0; m < n_q; ++m) {
            INFO(name << " head_dim " << head_dim << " n_q " << n_q << " dropped " << lo
                      << " query " << m);
            REQUIRE(got[m] == want[m]);
          }
        }
      }
    }
  }
}

TEST_CASE("attention block: every ISA variant gives _ref's bits", "[attention][isa]") {
  std::mt19937 rng(10);
  int checked = 0;
  for (const auto& [name, fn] : Variants()) {
    if (fn == AttendBlock_ref) continue;
    for (int head_dim :
         {16, 64, 72, 80, 96, 128}) {  // 72: _ref; 80, 96: AVX-512 via AVX2 / run-time hd
      for (int n_q = 1; n_q <= kAttendBlockQueries; ++n_q) {
        for (auto [n_a, n_b] : {std::pair<int64_t, int64_t>{1, 0},
                                {5, 0},
                                {13, 0},
                                {3, 2},
                                {12, 7},
                                {33, 40},
                                {100, 31}}) {
          Case c = MakeCase(rng, head_dim, n_q, n_a, n_b);
          // Causal only (n_first null), then two sets of random windows.
          for (int windows = 0; windows < 3; ++windows) {
            if (windows > 0) AddWindows(rng, &c);
            const auto want = Run(AttendBlock_ref, c);
            const auto got = Run(fn, c);
            for (int m = 0; m < n_q; ++m) {
              INFO(name << " head_dim " << head_dim << " n_q " << n_q << " rows " << n_a << "+"
                        << n_b << " windows " << windows << " query " << m << " rows ["
                        << c.first(m) << ", " << c.n_visible[m] << ")");
              REQUIRE(got[m] == want[m]);
            }
            ++checked;
          }
        }
        // Sliding windows over a prompt chunk, as Gemma 3's local layers.
        for (int heads : {1, 2, 4}) {
          if (n_q % heads != 0) continue;
          for (int64_t w : {1, 4, 17}) {
            Case c = MakeCase(rng, head_dim, n_q, 20, 30);
            SlidingWindows(heads, w, &c);
            const auto want = Run(AttendBlock_ref, c);
            const auto got = Run(fn, c);
            for (int m = 0; m < n_q; ++m) {
              INFO(name << " head_dim " << head_dim << " n_q " << n_q << " sliding " << w
                        << " query " << m);
              REQUIRE(got[m] == want[m]);
            }
            ++checked;
          }
        }
      }
    }
  }
  INFO("variant checks: " << checked);
  SUCCEED();
}

namespace {

struct Stages {
  std::string name;
  AttendScoresFn scores;
  AttendMaxFn max;
  AttendExpFn exp;
  AttendValuesFn values;
};

// _ref's stages and those of every compiled variant this CPU runs.
std::vector<Stages> StageVariants() {
  std::vector<Stages> v = {
      {"ref", AttendScores_ref, AttendMax_ref, AttendExp_ref, AttendValues_ref}};
  for (Isa isa :
       {Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Vnni, Isa::kNeon, Isa::kNeonDot, Isa::kNeonI8mm}) {
    if (test::CanTestVariants(isa)) {
      const Kernels k = KernelsFor(isa);
      v.push_back({IsaName(isa), k.attend_scores, k.attend_max, k.attend_exp, k.attend_values});
    }
  }
  return v;
}

// Sorted cut points 0 = c_0 < ... < c_parts = n, at multiples of `unit`
// (parts may come out fewer when n is small).
std::vector<int64_t> Cuts(std::mt19937& rng, int64_t n, int64_t unit, int parts) {
  std::vector<int64_t> cuts = {0, n};
  std::uniform_int_distribution<int64_t> at(1, n / unit > 1 ? n / unit - 1 : 1);
  for (int i = 1; i < parts && n / unit > 1; ++i) cuts.push_back(at(rng) * unit);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  return cuts;
}

// The stages as the scheduler runs them for one block split over threads:
// for each run of rows its scores and maximum, then its probabilities (under
// the maximum of the runs' maxima), then the values of each run of dims,
// part i by stages[(i + shift) % size].
std::vector<std::vector<float>> RunStaged(const std::vector<Stages>& stages, int shift,
                                          const std::vector<int64_t>& row_cuts,
                                          const std::vector<int64_t>& dim_cuts, const Case& c) {
  const int64_t n_rows = c.n_rows();
  std::vector<float> st(static_cast<size_t>(n_rows) * kAttendLanes, -3.0f);
  std::vector<float> qt(static_cast<size_t>(c.head_dim) * kAttendLanes);
  std::vector<float> kf(static_cast<size_t>(kAttendBlockKeyRows) * c.head_dim);
  std::vector<std::vector<float>> out(c.n_q, std::vector<float>(c.head_dim, -7.0f));
  std::vector<const float*> qp;
  std::vector<float*> op;
  for (int m = 0; m < c.n_q; ++m) {
    qp.push_back(c.q[m].data());
    op.push_back(out[m].data());
  }
  const auto pick = [&](size_t part) -> const Stages& {
    return stages[(part + static_cast<size_t>(shift)) % stages.size()];
  };
  const int64_t* first = c.n_first.empty() ? nullptr : c.n_first.data();
  AttendQueriesT(qp.data(), c.n_q, c.head_dim, qt.data());
  std::vector<float> mx(kAttendLanes, -std::numeric_limits<float>::infinity());
  for (size_t i = 0; i + 1 < row_cuts.size(); ++i) {
    std::vector<KvSpan> sub(c.spans.size());
    const int n_sub = SubSpans(c.spans.data(), static_cast<int>(c.spans.size()), c.stride,
                               row_cuts[i], row_cuts[i + 1], sub.data());
    pick(i).scores(qt.data(), c.n_q, sub.data(), n_sub, c.stride, c.head_dim, kScale, kf.data(),
                   &st[static_cast<size_t>(row_cuts[i]) * kAttendLanes]);
    float run_mx[kAttendLanes];
    pick(i + 1).max(first, c.n_visible.data(), c.n_q, row_cuts[i], row_cuts[i + 1], st.data(),
                    run_mx);
    for (int m = 0; m < c.n_q; ++m) mx[m] = std::max(mx[m], run_mx[m]);
  }
  for (size_t i = 0; i + 1 < row_cuts.size(); ++i) {
    pick(i + 2).exp(first, c.n_visible.data(), c.n_q, row_cuts[i], row_cuts[i + 1], mx.data(),
                    st.data());
  }
  for (size_t i = 0; i + 1 < dim_cuts.size(); ++i) {
    pick(i + 3).values(st.data(), c.n_q, c.spans.data(), static_cast<int>(c.spans.size()), c.stride,
                       static_cast<int>(dim_cuts[i]), static_cast<int>(dim_cuts[i + 1]), op.data());
  }
  return out;
}

}  // namespace

TEST_CASE("attention block: the stages split over rows and dims give AttendBlock_ref's bits",
          "[attention][isa]") {
  std::mt19937 rng(13);
  const std::vector<Stages> all = StageVariants();
  int checked = 0;
  for (size_t only = 0; only <= all.size(); ++only) {
    // Each variant alone, then all of them mixed in one block.
    const std::vector<Stages> stages = only < all.size() ? std::vector<Stages>{all[only]} : all;
    const std::string name = only < all.size() ? all[only].name : "mixed";
    for (int head_dim : {16, 64, 72, 128, 256}) {  // 72: not a multiple of 16, _ref's stages
      for (int n_q = 1; n_q <= kAttendLanes; ++n_q) {
        for (auto [n_a, n_b] :
             {std::pair<int64_t, int64_t>{1, 0}, {13, 0}, {12, 7}, {33, 40}, {300, 77}}) {
          Case c = MakeCase(rng, head_dim, n_q, n_a, n_b);
          for (int windows = 0; windows < 2; ++windows) {
            if (windows > 0) AddWindows(rng, &c);
            const auto want = Run(AttendBlock_ref, c);
            const int64_t dim_unit =
                head_dim % kAttendBlockDimMultiple == 0 ? kAttendBlockDimMultiple : head_dim;
            for (int parts : {1, 2, 3, 5}) {
              const auto rows = Cuts(rng, c.n_rows(), 1, parts);
              const auto dims = Cuts(rng, head_dim, dim_unit, parts);
              const auto got = RunStaged(stages, parts, rows, dims, c);
              for (int m = 0; m < n_q; ++m) {
                INFO(name << " head_dim " << head_dim << " n_q " << n_q << " rows " << n_a << "+"
                          << n_b << " windows " << windows << " parts " << rows.size() - 1 << " x "
                          << dims.size() - 1 << " query " << m);
                REQUIRE(got[m] == want[m]);
              }
              ++checked;
            }
          }
        }
      }
    }
  }
  INFO("staged checks: " << checked);
  CHECK(checked > 0);
}

// The ISA variants read values in tiles of rows for up to 8 spans (the
// runtime passes at most 6) and all rows at once for more: both ways, whole
// block and stages, give the bits of the same rows in one span.
TEST_CASE("attention block: rows in more spans than a values tile takes give the same bits",
          "[attention][isa]") {
  std::mt19937 rng(14);
  const std::vector<Stages> stages = StageVariants();
  int checked = 0;
  for (int n_spans : {8, 10}) {
    for (int n_q : {1, 3, 8, 16}) {
      Case c = MakeCase(rng, 64, n_q, 290, 0);
      AddWindows(rng, &c);
      const auto want = Run(AttendBlock_ref, c);
      std::vector<KvSpan> pieces(static_cast<size_t>(n_spans));
      for (int i = 0; i < n_spans; ++i) {
        REQUIRE(SubSpans(c.spans.data(), 1, c.stride, 290 * i / n_spans, 290 * (i + 1) / n_spans,
                         &pieces[static_cast<size_t>(i)]) == 1);
      }
      c.spans = pieces;
      for (const auto& [name, fn] : Variants()) {
        const auto got = Run(fn, c);
        for (int m = 0; m < n_q; ++m) {
          INFO(name << " spans " << n_spans << " n_q " << n_q << " query " << m);
          REQUIRE(got[m] == want[m]);
        }
        ++checked;
      }
      if (n_q > kAttendLanes) continue;
      for (size_t i = 0; i < stages.size(); ++i) {
        const std::vector<int64_t> rows = {0, 100, 290}, dims = {0, 32, 64};
        const auto got = RunStaged({stages[i]}, 0, rows, dims, c);
        for (int m = 0; m < n_q; ++m) {
          INFO(stages[i].name << " stages, spans " << n_spans << " n_q " << n_q << " query " << m);
          REQUIRE(got[m] == want[m]);
        }
        ++checked;
      }
    }
  }
  INFO("checks: " << checked);
  CHECK(checked > 0);
}
