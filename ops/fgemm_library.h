// Float GEMM through a library, for the shapes where it beats ember's own
// kernel (ops/fgemm.h): oneDNN's f32 matmul on x86-64, XNNPACK's f32
// fully-connected operator (meant for ARM, where oneDNN has no fast path;
// built on x86 too so that it is tested and measured there).
//
// Both multiply in f32: f16 and bf16 weights are widened to f32 a block of
// rows at a time (exact), the activations are used as they are. The sum's
// order is the library's, not ops/fgemm.h's contract: logits through a library
// differ from ember's own kernel by float rounding, and a prompt in one batch
// from the same prompt token by token. matmul.cpp therefore uses a library
// only from the batch size where docs/FLOAT.md measured it faster
// (FloatLibrary::from_m), i.e. for prefill, never for decode.
//
// Built when CMake finds the library (EMBER_HAVE_ONEDNN, EMBER_HAVE_XNNPACK);
// otherwise Find returns nullptr.
#pragma once

#include <cstdint>

#include "ops/fgemm.h"
#include "platform/status.h"

namespace ember {

struct FloatLibrary {
  const char* name;  // "onednn", "xnnpack"
  // The smallest batch MatMul hands to it: where its time per matrix beat the
  // own kernel's in bench/fgemm_bench.cpp (docs/FLOAT.md), for every weight
  // type (widening f16 and bf16 costs the same; f32 is used in place).
  int64_t from_m;
  // Y[m, n] = X[m, k] · W^T over all rows of w with up to n_threads threads,
  // called outside any parallel region. Errors from the library come back as
  // Internal with its message.
  Status (*gemm)(const FloatMatrix& w, const float* x, int64_t m, float* y, int64_t ldy,
                 int n_threads);
};

// The library of that name when this build has it, else nullptr.
const FloatLibrary* FindFloatLibrary(const char* name);

// What MatMul uses for float weights: EMBER_FGEMM=own|onednn|xnnpack if set
// (own: never a library), else oneDNN on x86-64 when built (XNNPACK is not a
// default: docs/FLOAT.md). nullptr: ember's own kernel for every m.
const FloatLibrary* DefaultFloatLibrary();

// The library MatMul hands a batch of m tokens over `type` weights on
// n_threads threads, or nullptr for ember's own kernel: DefaultFloatLibrary()
// from its from_m, except F16 and BF16 where the active kernels' own GEMM is
// the faster at every m with that many threads
// (Kernels::fgemm_widened_from_threads). On a Zen 4 core (AVX-512) the own 4 x
// 4 block prefilled the F16 TinyLlama shape 25% faster than oneDNN at 2
// threads and 11% slower at 1 (docs/FLOAT.md). EMBER_FGEMM, when set, applies
// to every type and thread count.
const FloatLibrary* FloatLibraryFor(FloatWeight type, int64_t m, int n_threads);

// Rows widened per block (the libraries' staging below): 4 MiB of f32 at
// k = 2048, in L3 while it is used.
constexpr int64_t kFloatLibraryStageElems = int64_t{1} << 20;

// Widens rows [r0, r0 + n) of w to f32 into out [n, w.n_cols] with up to
// n_threads threads (the libraries' staging for f16 and bf16 weights).
void WidenRows(const FloatMatrix& w, int64_t r0, int64_t n, float* out, int n_threads);

}  // namespace ember
