// Every compiled attention variant against AttendHead_ref.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "ops/kernels.h"
#include "quant/fp16.h"
#include "quant/quantize.h"
#include "support/simd_isas.h"

using namespace ember;

TEST_CASE("attention: every ISA variant matches _ref", "[attention][isa]") {
  std::mt19937 rng(21);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (Isa isa :
       {Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Vnni, Isa::kNeon, Isa::kNeonDot, Isa::kNeonI8mm}) {
    if (!test::CanTestVariants(isa)) continue;
    const AttendHeadFn fn = KernelsFor(isa).attend_head;
    for (int head_dim : {8, 40, 64, 72, 80, 120, 128}) {
      for (int64_t n_kv : {1, 2, 7, 64, 300}) {
        const size_t stride = static_cast<size_t>(head_dim) * 3;  // interleaved heads
        std::vector<float> q(head_dim);
        std::vector<uint16_t> k(stride * n_kv), v(stride * n_kv);
        for (float& x : q) x = 2.0f * d(rng);
        for (auto& x : k) x = Fp32ToFp16(d(rng));
        for (auto& x : v) x = Fp32ToFp16(d(rng));
        std::vector<float> s1(n_kv), s2(n_kv), want(head_dim), got(head_dim);
        const float scale = 1.0f / std::sqrt(float(head_dim));
        const KvSpan one = {k.data(), v.data(), n_kv};
        AttendHead_ref(q.data(), &one, 1, stride, head_dim, scale, s1.data(), want.data());
        fn(q.data(), &one, 1, stride, head_dim, scale, s2.data(), got.data());
        for (int i = 0; i < head_dim; ++i) {
          INFO(IsaName(isa) << " head_dim " << head_dim << " n_kv " << n_kv << " i " << i);
          // Values are convex combinations of |v| <~ 4: float rounding of the
          // dot products (summed in another order) bounds the difference.
          REQUIRE(std::fabs(got[i] - want[i]) <= 2e-5f);
        }
      }
    }
  }
}

TEST_CASE("attention: two spans equal one span over the same rows", "[attention][isa]") {
  std::mt19937 rng(5);
  std::normal_distribution<float> d(0.0f, 1.0f);
  const int head_dim = 64;
  const int64_t n_a = 13, n_gap = 9, n_b = 6;  // rows: span A, unrelated rows, span B
  const size_t stride = head_dim;
  std::vector<uint16_t> k(stride * (n_a + n_gap + n_b)), v(k.size());
  for (auto& x : k) x = Fp32ToFp16(d(rng));
  for (auto& x : v) x = Fp32ToFp16(d(rng));
  std::vector<float> q(head_dim);
  for (float& x : q) x = d(rng);
  // The same rows made contiguous.
  std::vector<uint16_t> kc, vc;
  kc.insert(kc.end(), k.begin(), k.begin() + n_a * stride);
  kc.insert(kc.end(), k.begin() + (n_a + n_gap) * stride, k.end());
  vc.insert(vc.end(), v.begin(), v.begin() + n_a * stride);
  vc.insert(vc.end(), v.begin() + (n_a + n_gap) * stride, v.end());
  const float scale = 0.125f;
  for (Isa isa : {Isa::kRef, Isa::kAvx2, Isa::kNeon, Isa::kNeonDot, Isa::kNeonI8mm}) {
    if (!test::CanTestVariants(isa)) continue;
    const AttendHeadFn fn = KernelsFor(isa).attend_head;
    const KvSpan two[2] = {
        {k.data(), v.data(), n_a},
        {k.data() + (n_a + n_gap) * stride, v.data() + (n_a + n_gap) * stride, n_b}};
    const KvSpan one = {kc.data(), vc.data(), n_a + n_b};
    std::vector<float> s(n_a + n_b), got(head_dim), want(head_dim);
    fn(q.data(), two, 2, stride, head_dim, scale, s.data(), got.data());
    fn(q.data(), &one, 1, stride, head_dim, scale, s.data(), want.data());
    for (int i = 0; i < head_dim; ++i) {
      INFO(IsaName(isa) << " i " << i);
      REQUIRE(got[i] == want[i]);  // same rows in the same order: bit for bit
    }
  }
}

TEST_CASE("attention q8: every ISA variant matches _ref, and _ref matches f32 math",
          "[attention][isa]") {
  std::mt19937 rng(33);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (int head_dim : {8, 64, 72, 128}) {
    for (int64_t n_kv : {1, 2, 7, 64, 300}) {
      const int n_head_kv = 3;  // heads interleaved within a row, as in the cache
      const size_t stride = static_cast<size_t>(head_dim) * n_head_kv;
      std::vector<float> q(head_dim), kf(stride * n_kv), vf(stride * n_kv);
      for (float& x : q) x = 2.0f * d(rng);
      for (float& x : kf) x = d(rng);
      for (float& x : vf) x = d(rng);
      std::vector<int8_t> k(kf.size()), v(vf.size());
      std::vector<float> ks(n_kv * n_head_kv), vs(n_kv * n_head_kv);
      for (int64_t j = 0; j < n_kv; ++j) {
        for (int h = 0; h < n_head_kv; ++h) {
          const size_t o = j * stride + h * head_dim;
          QuantizeGroupI8(&kf[o], &k[o], &ks[j * n_head_kv + h], head_dim);
          QuantizeGroupI8(&vf[o], &v[o], &vs[j * n_head_kv + h], head_dim);
        }
      }
      const int h = 1;  // attend with the middle head
      const KvSpanQ8 one = {k.data() + h * head_dim, v.data() + h * head_dim, ks.data() + h,
                            vs.data() + h, n_kv};
      const float scale = 1.0f / std::sqrt(float(head_dim));
      std::vector<float> s(n_kv), want(head_dim), got(head_dim);
      AttendHeadQ8_ref(q.data(), &one, 1, stride, n_head_kv, head_dim, scale, s.data(),
                       want.data());
      // The reference against plain f32 attention over the dequantized rows.
      std::vector<float> sc(n_kv), exact(head_dim, 0.0f);
      float mx = -1e30f;
      for (int64_t j = 0; j < n_kv; ++j) {
        float dot = 0.0f;
        for (int i = 0; i < head_dim; ++i) {
          dot += q[i] * ks[j * n_head_kv + h] * k[j * stride + h * head_dim + i];
        }
        sc[j] = dot * scale;
        mx = std::max(mx, sc[j]);
      }
      double sum = 0.0;
      for (float& x : sc) sum += (x = std::exp(x - mx));
      for (int64_t j = 0; j < n_kv; ++j) {
        for (int i = 0; i < head_dim; ++i) {
          exact[i] += float(sc[j] / sum) * vs[j * n_head_kv + h] * v[j * stride + h * head_dim + i];
        }
      }
      for (int i = 0; i < head_dim; ++i) REQUIRE(std::fabs(want[i] - exact[i]) <= 1e-4f);
      for (Isa isa : {Isa::kRef, Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Vnni, Isa::kNeon,
                      Isa::kNeonDot, Isa::kNeonI8mm}) {
        if (!test::CanTestVariants(isa)) continue;
        const AttendHeadQ8Fn fn = KernelsFor(isa).attend_head_q8;
        fn(q.data(), &one, 1, stride, n_head_kv, head_dim, scale, s.data(), got.data());
        for (int i = 0; i < head_dim; ++i) {
          INFO(IsaName(isa) << " head_dim " << head_dim << " n_kv " << n_kv << " i " << i);
          REQUIRE(std::fabs(got[i] - want[i]) <= 2e-5f);
        }
        // The rows as two spans give the same bits as one.
        if (n_kv > 1) {
          const int64_t cut = n_kv / 3 + 1;
          const KvSpanQ8 two[2] = {
              {one.k, one.v, one.k_scale, one.v_scale, cut},
              {one.k + cut * stride, one.v + cut * stride, one.k_scale + cut * n_head_kv,
               one.v_scale + cut * n_head_kv, n_kv - cut}};
          std::vector<float> split(head_dim);
          fn(q.data(), two, 2, stride, n_head_kv, head_dim, scale, s.data(), split.data());
          for (int i = 0; i < head_dim; ++i) {
            INFO(IsaName(isa) << " split at " << cut << " i " << i);
            REQUIRE(split[i] == got[i]);
          }
        }
      }
    }
  }
}

TEST_CASE(
    "attention f32: _ref matches double math, every ISA variant matches _ref, and split spans "
    "give the same bits",
    "[attention][isa]") {
  std::mt19937 rng(77);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (int head_dim : {8, 40, 64, 72, 128}) {
    for (int64_t n_kv : {1, 2, 7, 64, 300}) {
      const int n_head_kv = 3;  // heads interleaved within a row, as in the cache
      const size_t stride = static_cast<size_t>(head_dim) * n_head_kv;
      std::vector<float> q(head_dim), k(stride * n_kv), v(stride * n_kv);
      for (float& x : q) x = 2.0f * d(rng);
      for (float& x : k) x = d(rng);
      for (float& x : v) x = d(rng);
      const int h = 2;
      const KvSpanF32 one = {k.data() + h * head_dim, v.data() + h * head_dim, n_kv};
      const float scale = 1.0f / std::sqrt(float(head_dim));
      std::vector<float> s(n_kv), want(head_dim), got(head_dim);
      AttendHeadF32_ref(q.data(), &one, 1, stride, head_dim, scale, s.data(), want.data());
      // Against the same attention in double, no rounding of q, k or v.
      std::vector<double> sc(n_kv), exact(head_dim, 0.0);
      double mx = -1e300, sum = 0.0;
      for (int64_t j = 0; j < n_kv; ++j) {
        double dot = 0.0;
        for (int i = 0; i < head_dim; ++i) dot += double(q[i]) * k[j * stride + h * head_dim + i];
        mx = std::max(mx, sc[j] = dot * scale);
      }
      for (double& x : sc) sum += (x = std::exp(x - mx));
      for (int64_t j = 0; j < n_kv; ++j) {
        for (int i = 0; i < head_dim; ++i)
          exact[i] += sc[j] / sum * v[j * stride + h * head_dim + i];
      }
      for (int i = 0; i < head_dim; ++i) {
        INFO("ref head_dim " << head_dim << " n_kv " << n_kv << " i " << i);
        REQUIRE(std::fabs(want[i] - exact[i]) <= 1e-5);
      }
      for (Isa isa : {Isa::kRef, Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Vnni, Isa::kNeon,
                      Isa::kNeonDot, Isa::kNeonI8mm}) {
        if (!test::CanTestVariants(isa)) continue;
        const AttendHeadF32Fn fn = KernelsFor(isa).attend_head_f32;
        fn(q.data(), &one, 1, stride, head_dim, scale, s.data(), got.data());
        for (int i = 0; i < head_dim; ++i) {
          INFO(IsaName(isa) << " head_dim " << head_dim << " n_kv " << n_kv << " i " << i);
          REQUIRE(std::fabs(got[i] - want[i]) <= 2e-5f);
        }
        // The rows as two spans (a split anywhere) give the same bits as one.
        if (n_kv > 1) {
          const int64_t cut = n_kv / 3 + 1;
          const KvSpanF32 two[2] = {{one.k, one.v, cut},
                                    {one.k + cut * stride, one.v + cut * stride, n_kv - cut}};
          std::vector<float> split(head_dim);
          fn(q.data(), two, 2, stride, head_dim, scale, s.data(), split.data());
          for (int i = 0; i < head_dim; ++i) {
            INFO(IsaName(isa) << " split at " << cut << " i " << i);
            REQUIRE(split[i] == got[i]);
          }
        }
      }
    }
  }
}
