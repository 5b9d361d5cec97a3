#include "ops/fgemm_library.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "ops/kernels.h"

namespace ember {

// Defined in fgemm_onednn.cpp / fgemm_xnnpack.cpp when built with them.
#if defined(EMBER_HAVE_ONEDNN)
extern const FloatLibrary kOneDnnLibrary;
#endif
#if defined(EMBER_HAVE_XNNPACK)
extern const FloatLibrary kXnnpackLibrary;
#endif

const FloatLibrary* FindFloatLibrary(const char* name) {
  const std::string n = name;
#if defined(EMBER_HAVE_ONEDNN)
  if (n == kOneDnnLibrary.name) return &kOneDnnLibrary;
#endif
#if defined(EMBER_HAVE_XNNPACK)
  if (n == kXnnpackLibrary.name) return &kXnnpackLibrary;
#endif
  return nullptr;
}

const FloatLibrary* DefaultFloatLibrary() {
  static const FloatLibrary* lib = [] {
    // XNNPACK is not a default anywhere: on x86 it never beat the own kernel
    // (its weights are packed per call), and on ARM it is unmeasured
    // (docs/FLOAT.md); EMBER_FGEMM=xnnpack selects it.
    const char* env = std::getenv("EMBER_FGEMM");
    if (env != nullptr && *env != '\0') return FindFloatLibrary(env);  // "own": none
#if defined(__x86_64__)
    return FindFloatLibrary("onednn");
#else
    return static_cast<const FloatLibrary*>(nullptr);
#endif
  }();
  return lib;
}

const FloatLibrary* FloatLibraryFor(FloatWeight type, int64_t m, int n_threads) {
  const FloatLibrary* lib = DefaultFloatLibrary();
  if (lib == nullptr || m < lib->from_m) return nullptr;
  static const bool forced = [] {
    const char* env = std::getenv("EMBER_FGEMM");
    return env != nullptr && *env != '\0';
  }();
  const int own_from = Active().fgemm_widened_from_threads;
  if (type != FloatWeight::kF32 && own_from > 0 && n_threads >= own_from && !forced) {
    return nullptr;
  }
  return lib;
}

void WidenRows(const FloatMatrix& w, int64_t r0, int64_t n, float* out, int n_threads) {
  const int64_t k = w.n_cols;
  if (w.type == FloatWeight::kF32) {
    std::memcpy(out, w.row(r0), static_cast<size_t>(n * k) * 4);
    return;
  }
  const FloatRowFn widen = Active().float_row;
#pragma omp parallel for num_threads(n_threads) schedule(static) if (n_threads > 1 && n > 1)
  for (int64_t r = 0; r < n; ++r) widen(w, r0 + r, out + r * k);
}

}  // namespace ember
