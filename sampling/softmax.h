// The softmax of a run of logits, written once for the two layouts that take
// it: the candidates' {id, logit, p} items (Candidates::ComputeProbs) and the
// plain arrays of the vocabulary that the top-p fast path works on
// (top_p.cpp, ResetTopP), so that both give the same bits.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "sampling/candidates.h"
#include "sampling/vec_exp.h"

namespace ember {

// Item i of a run: logit(i), p(i), set_p(i, x), item(i) as a Candidate.
struct ItemsView {  // Candidate items
  Candidate* c;
  float logit(size_t i) const { return c[i].logit; }
  float p(size_t i) const { return c[i].p; }
  void set_p(size_t i, float x) const { c[i].p = x; }
  Candidate item(size_t i) const { return c[i]; }
};
struct ArraysView {  // the vocabulary as arrays: item i is token id i
  const float* x;
  float* prob;
  float logit(size_t i) const { return x[i]; }
  float p(size_t i) const { return prob[i]; }
  void set_p(size_t i, float v) const { prob[i] = v; }
  Candidate item(size_t i) const { return Candidate{static_cast<int32_t>(i), x[i], prob[i]}; }
};
// The vocabulary as arrays with the exps not yet normalized: p(i) is what
// SoftmaxOf's last step would store, computed when asked (a top-p over a
// trained model's logits reads few of them).
struct ScaledArraysView {
  const float* x;
  const float* e;  // exp(x - max), SumExps
  double inv;      // 1 / their sum
  float logit(size_t i) const { return x[i]; }
  float p(size_t i) const { return static_cast<float>(e[i] * inv); }
  Candidate item(size_t i) const { return Candidate{static_cast<int32_t>(i), x[i], p(i)}; }
};

// p(i) = softmax(logit)(i) over the n items, as Candidates::ComputeProbs
// defines it: exp(logit - max) four items at a time (vec_exp.h: within 3e-7
// of exp; libm's expf, a call per item, took ~1 ms at 151936 candidates), 0
// more than 87 below the maximum (exp(-87) = 1.6e-38: as good as nothing,
// and an -inf logit, a banned token, must stay at 0), and exactly 1 where
// logit == max, also when max is +-inf (inf - inf would be NaN): all -inf is
// a uniform distribution, and +inf logits share all the mass. Summed in
// double, items i and i + 1 of each four in one pair of lanes, i + 2 and
// i + 3 in another, the lanes added in order at the end (the rest one by one
// after them); then each p times 1 / sum, in double, rounded to float.
template <class View>
double SumExps(const View& v, size_t n, float max);

template <class View>
void SoftmaxOf(const View& v, size_t n) {
  // sum >= 1: the maximum's 1
  const double inv = 1.0 / SumExps(v, n, MaxAndFiniteMin(v, n).max);
  for (size_t j = 0; j < n; ++j) v.set_p(j, static_cast<float>(v.p(j) * inv));
}

// SoftmaxOf's first step: p(i) = exp(logit(i) - max) for the largest logit
// `max`, and their sum.
template <class View>
double SumExps(const View& v, size_t n, float max) {
  typedef float Float2 __attribute__((vector_size(8)));
  typedef double Double2 __attribute__((vector_size(16)));
  const Float4 max4 = Float4{} + max, one = Float4{} + 1.0f, zero = {}, lo = Float4{} - 87.0f;
  Double2 sum01 = {}, sum23 = {};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const Float4 l = {v.logit(i), v.logit(i + 1), v.logit(i + 2), v.logit(i + 3)};
    const Float4 d = l - max4;
    Float4 e = ExpNonPositive<Float4, Uint4>(d);
    e = d < lo ? zero : e;
    e = l == max4 ? one : e;
    for (int j = 0; j < 4; ++j) v.set_p(i + j, e[j]);
    sum01 += __builtin_convertvector((Float2{e[0], e[1]}), Double2);
    sum23 += __builtin_convertvector((Float2{e[2], e[3]}), Double2);
  }
  double sum = ((sum01[0] + sum01[1]) + sum23[0]) + sum23[1];
  for (; i < n; ++i) {
    const float l = v.logit(i), d = l - max;
    const float e = l == max ? 1.0f : d < -87.0f ? 0.0f : ExpNonPositive<float, uint32_t>(d);
    v.set_p(i, e);
    sum += e;
  }
  return sum;
}

}  // namespace ember
