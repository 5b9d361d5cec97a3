// oneDNN's f32 matmul behind FloatLibrary (ops/fgemm_library.h).
//
// Facts this relies on (../shared/DEPS.md, oneDNN 2.6): a matmul primitive
// with fixed shapes runs the brgemm kernels (a runtime M falls back to the
// slower gemm:jit), so one primitive is made per shape (m, rows, k, ldy,
// threads) and cached; GGUF's [n, k] weights are the {k, n} matrix in tag::ba
// order, used in place. f16 and bf16 weights are widened into a buffer of
// kStageRows rows at a time, and each block is one matmul into its columns
// of y (a strided destination).
#if defined(EMBER_HAVE_ONEDNN)
#include <omp.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "ops/fgemm_library.h"

namespace ember {
namespace {

using Shape = std::tuple<int64_t, int64_t, int64_t, int64_t, int>;  // m, n, k, ldy, threads

struct OneDnn {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  std::mutex mu;
  std::map<Shape, dnnl::matmul> cache;  // bounded: cleared past kMaxCached

  static constexpr size_t kMaxCached = 64;

  dnnl::matmul Get(const Shape& s) {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(s); it != cache.end()) return it->second;
    const auto [m, n, k, ldy, threads] = s;
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const dnnl::memory::desc src({m, k}, dt::f32, tag::ab);
    const dnnl::memory::desc wei({k, n}, dt::f32, tag::ba);
    const dnnl::memory::desc dst({m, n}, dt::f32, dnnl::memory::dims{ldy, 1});
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, wei, dst), engine);
    if (cache.size() >= kMaxCached) cache.clear();
    return cache.emplace(s, dnnl::matmul(pd)).first->second;
  }
};

OneDnn& OneDnnInstance() {
  static OneDnn* d = new OneDnn;  // never destroyed: OpenMP may outlive statics
  return *d;
}

Status OneDnnGemm(const FloatMatrix& w, const float* x, int64_t m, float* y, int64_t ldy,
                  int n_threads) {
  try {
    OneDnn& d = OneDnnInstance();
    struct Threads {  // the caller's OpenMP thread count, restored on every exit
      int saved = omp_get_max_threads();
      ~Threads() { omp_set_num_threads(saved); }
    } restore;
    omp_set_num_threads(n_threads);
    dnnl::stream stream(d.engine);
    const int64_t k = w.n_cols;
    const bool widen = w.type != FloatWeight::kF32;
    const int64_t block =
        widen ? std::max<int64_t>(16, kFloatLibraryStageElems / k / 16 * 16) : w.n_rows;
    thread_local std::vector<float> stage;
    if (widen) stage.resize(static_cast<size_t>(std::min(block, w.n_rows) * k));
    using dt = dnnl::memory::data_type;
    for (int64_t r0 = 0; r0 < w.n_rows; r0 += block) {
      const int64_t n = std::min(block, w.n_rows - r0);
      const float* wp = reinterpret_cast<const float*>(w.row(r0));
      if (widen) {
        WidenRows(w, r0, n, stage.data(), n_threads);
        wp = stage.data();
      }
      dnnl::matmul mm = d.Get(Shape{m, n, k, ldy, n_threads});
      const dnnl::memory src({{m, k}, dt::f32, dnnl::memory::format_tag::ab}, d.engine,
                             const_cast<float*>(x));
      const dnnl::memory wei({{k, n}, dt::f32, dnnl::memory::format_tag::ba}, d.engine,
                             const_cast<float*>(wp));
      const dnnl::memory dst({{m, n}, dt::f32, dnnl::memory::dims{ldy, 1}}, d.engine, y + r0);
      mm.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
    }
    stream.wait();
    return Status::Ok();
  } catch (const dnnl::error& e) {
    return Status(Code::kInternal, std::string("oneDNN: ") + e.what());
  }
}

}  // namespace

extern const FloatLibrary kOneDnnLibrary;
const FloatLibrary kOneDnnLibrary = {"onednn", 32, OneDnnGemm};  // from 32 tokens

}  // namespace ember
#endif  // EMBER_HAVE_ONEDNN
