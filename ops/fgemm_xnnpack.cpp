// XNNPACK's f32 fully-connected operator behind FloatLibrary
// (ops/fgemm_library.h).
//
// An XNNPACK operator packs its weights when it is created. Keeping one
// operator per matrix would hold a second, f32 copy of every weight (twice an
// f16 model's size), so blocks of kFloatLibraryStageElems weights are packed per call
// instead: the packing reads the weights once, as the multiplication does,
// and a call is only made for batches large enough to pay for it. f32 only:
// the f16 operator rounds the activations to f16 and needs ARMv8.2's FP16
// arithmetic (not on a Pi 4).
//
// Facts (../shared/DEPS.md, XNNPACK 2022-02): weights [n, k] without
// XNN_FLAG_TRANSPOSE_WEIGHTS; the input is read up to XNN_EXTRA_BYTES past
// its end, so it is copied into a padded buffer; threads come from a
// pthreadpool, made once per thread count.
#if defined(EMBER_HAVE_XNNPACK)
#include <pthreadpool.h>
#include <xnnpack.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ops/fgemm_library.h"

namespace ember {
namespace {

struct Xnnpack {
  xnn_status init = xnn_initialize(nullptr);
  std::mutex mu;
  std::map<int, pthreadpool_t> pools;  // by thread count, never destroyed

  pthreadpool_t Pool(int n) {
    std::lock_guard<std::mutex> lock(mu);
    auto [it, added] = pools.emplace(n, nullptr);
    if (added) it->second = pthreadpool_create(static_cast<size_t>(n));
    return it->second;
  }
};

Xnnpack& XnnpackInstance() {
  static Xnnpack* x = new Xnnpack;
  return *x;
}

Status XnnpackGemm(const FloatMatrix& w, const float* x, int64_t m, float* y, int64_t ldy,
                   int n_threads) {
  Xnnpack& xp = XnnpackInstance();
  if (xp.init != xnn_status_success) {
    return Status(Code::kInternal, "XNNPACK: xnn_initialize failed (status " +
                                       std::to_string(static_cast<int>(xp.init)) + ")");
  }
  const int64_t k = w.n_cols;
  thread_local std::vector<float> input, stage;
  input.resize(static_cast<size_t>(m * k) + XNN_EXTRA_BYTES / sizeof(float));
  std::memcpy(input.data(), x, static_cast<size_t>(m * k) * sizeof(float));
  const int64_t block = std::max<int64_t>(16, kFloatLibraryStageElems / k / 16 * 16);
  if (w.type != FloatWeight::kF32) stage.resize(static_cast<size_t>(std::min(block, w.n_rows) * k));
  pthreadpool_t pool = n_threads > 1 ? xp.Pool(n_threads) : nullptr;
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t r0 = 0; r0 < w.n_rows; r0 += block) {
    const int64_t n = std::min(block, w.n_rows - r0);
    const float* wp = reinterpret_cast<const float*>(w.row(r0));
    if (w.type != FloatWeight::kF32) {
      WidenRows(w, r0, n, stage.data(), n_threads);
      wp = stage.data();
    }
    xnn_operator_t op = nullptr;
    xnn_status s = xnn_create_fully_connected_nc_f32(
        static_cast<size_t>(k), static_cast<size_t>(n), static_cast<size_t>(k),
        static_cast<size_t>(ldy), wp, nullptr, -inf, inf, 0, &op);
    if (s == xnn_status_success) {
      s = xnn_setup_fully_connected_nc_f32(op, static_cast<size_t>(m), input.data(), y + r0, pool);
    }
    if (s == xnn_status_success) s = xnn_run_operator(op, pool);
    if (op != nullptr) xnn_delete_operator(op);
    if (s != xnn_status_success) {
      return Status(Code::kInternal, "XNNPACK: fully-connected f32 failed (status " +
                                         std::to_string(static_cast<int>(s)) + ")");
    }
  }
  return Status::Ok();
}

}  // namespace

extern const FloatLibrary kXnnpackLibrary;
const FloatLibrary kXnnpackLibrary = {"xnnpack", 64, XnnpackGemm};  // when forced

}  // namespace ember
#endif  // EMBER_HAVE_XNNPACK
