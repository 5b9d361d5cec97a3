// AttendBlock (causal prefill attention over a block of queries): _ref against
// attention computed in double, every ISA variant bit for bit against _ref.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "ops/attention.h"
#include "ops/kernels.h"
#include "quant/fp16.h"

using namespace ember;

namespace {

struct Case {
  int head_dim = 64;
  int n_q = 1;
  size_t stride = 64;
  std::vector<uint16_t> k, v;         // [n_rows_total, stride]
  std::vector<std::vector<float>> q;  // [n_q][head_dim]
  std::vector<int64_t> n_visible;     // [n_q]
  std::vector<KvSpan> spans;
};

// Rows in two spans with unrelated rows between them; visible counts random,
// with the last query seeing every row (as the block's latest token does).
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

std::vector<std::vector<float>> Run(AttendBlockFn fn, const Case& c) {
  int64_t n_rows = 0;
  for (const KvSpan& s : c.spans) n_rows += s.n;
  std::vector<float> scratch(static_cast<size_t>(AttendBlockScratch(n_rows, c.head_dim)));
  std::vector<std::vector<float>> out(c.n_q, std::vector<float>(c.head_dim, -7.0f));
  std::vector<const float*> qp;
  std::vector<float*> op;
  for (int m = 0; m < c.n_q; ++m) {
    qp.push_back(c.q[m].data());
    op.push_back(out[m].data());
  }
  fn(qp.data(), nullptr, c.n_visible.data(), c.n_q, c.spans.data(),
     static_cast<int>(c.spans.size()), c.stride, c.head_dim, 0.125f, scratch.data(), op.data());
  return out;
}

}  // namespace

TEST_CASE("attention block: _ref is causal softmax attention (double math)", "[attention]") {
  std::mt19937 rng(8);
  for (int head_dim : {16, 64}) {
    const Case c = MakeCase(rng, head_dim, 5, 11, 6);
    const auto got = Run(AttendBlock_ref, c);
    for (int m = 0; m < c.n_q; ++m) {
      // The visible rows of query m, in span order.
      std::vector<const uint16_t*> ks, vs;
      for (const KvSpan& s : c.spans) {
        for (int64_t r = 0; r < s.n; ++r) {
          ks.push_back(s.k + r * c.stride);
          vs.push_back(s.v + r * c.stride);
        }
      }
      ks.resize(c.n_visible[m]);
      vs.resize(c.n_visible[m]);
      std::vector<double> w(ks.size());
      double mx = -1e300, sum = 0.0;
      for (size_t j = 0; j < ks.size(); ++j) {
        double s = 0.0;
        for (int d = 0; d < head_dim; ++d) {
          s += double(Fp16ToFp32(Fp32ToFp16(c.q[m][d]))) * Fp16ToFp32(ks[j][d]);
        }
        w[j] = 0.125 * s;
        mx = std::max(mx, w[j]);
      }
      for (double& x : w) sum += (x = std::exp(x - mx));
      for (int d = 0; d < head_dim; ++d) {
        double want = 0.0;
        for (size_t j = 0; j < vs.size(); ++j) want += w[j] / sum * Fp16ToFp32(vs[j][d]);
        INFO("head_dim " << head_dim << " query " << m << " dim " << d);
        REQUIRE(std::fabs(got[m][d] - want) <= 1e-5);
      }
    }
  }
}

TEST_CASE("attention block: rows past n_visible do not matter", "[attention]") {
  std::mt19937 rng(9);
  Case c = MakeCase(rng, 64, 4, 20, 0);
  c.n_visible = {3, 7, 7, 20};
  const auto want = Run(AttendBlock_ref, c);
  // Rows 7.. are seen by the last query only: change them for the others.
  Case d = c;
  for (size_t i = 7 * d.stride; i < d.k.size(); ++i) d.k[i] = d.v[i] = Fp32ToFp16(100.0f);
  d.spans[0] = {d.k.data(), d.v.data(), 20};
  const auto got = Run(AttendBlock_ref, d);
  for (int m = 0; m < 3; ++m) CHECK(got[m] == want[m]);
  CHECK(got[3] != want[3]);
}

TEST_CASE("attention block: every ISA variant gives _ref's bits", "[attention][isa]") {
  std::mt19937 rng(10);
  int checked = 0;
  for (Isa isa :
       {Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Vnni, Isa::kNeon, Isa::kNeonDot, Isa::kNeonI8mm}) {
    if (!HasVariantsFor(isa) || !HostCpu().Supports(isa)) continue;
    const AttendBlockFn fn = KernelsFor(isa).attend_block;
    for (int head_dim : {16, 64, 72, 80, 96, 128}) {  // 96: AVX-512 with a run-time hd
      for (int n_q : {1, 3, 4, 5, 7, 8, 9, 15, 16}) {
        for (auto [n_a, n_b] :
             {std::pair<int64_t, int64_t>{1, 0}, {5, 0}, {13, 0}, {12, 7}, {100, 31}}) {
          const Case c = MakeCase(rng, head_dim, n_q, n_a, n_b);
          const auto want = Run(AttendBlock_ref, c);
          const auto got = Run(fn, c);
          for (int m = 0; m < n_q; ++m) {
            INFO(IsaName(isa) << " head_dim " << head_dim << " n_q " << n_q << " rows " << n_a
                              << "+" << n_b << " query " << m);
            REQUIRE(got[m] == want[m]);
          }
          ++checked;
        }
      }
    }
  }
  INFO("variant checks: " << checked);
  SUCCEED();
}
