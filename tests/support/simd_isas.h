// The SIMD levels whose kernel-table variants a test can run on this CPU (the
// build has variants for them and the CPU supports them); tests compare each
// against the _ref twin and skip the others, so no test depends on the host.
//
// ember_kernel_tests_avx512emu (tests/CMakeLists.txt) is built with
// EMBER_TEST_EMULATED_AVX512: its AVX-512 kernels are compiled against SIMDe
// (support/avx512_emulated.h) and run on any host with AVX2, so there the
// AVX-512 levels are the ones to test, and the native levels are left to
// ember_kernel_tests.
#pragma once

#include <vector>

#include "ops/kernels.h"
#include "platform/cpu_features.h"

namespace ember::test {

// Whether this test binary can run code of level `isa` on this CPU.
inline bool CanRunOnHost(Isa isa) {
#if defined(EMBER_TEST_EMULATED_AVX512)
  // The emulated kernels share the tables with AVX2 ones (activations, norms).
  return (isa == Isa::kAvx512 || isa == Isa::kAvx512Vnni) && HostCpu().Supports(Isa::kAvx2);
#else
  return HostCpu().Supports(isa);
#endif
}

// Whether the kernel table of level `isa` can be tested here.
inline bool CanTestVariants(Isa isa) { return HasVariantsFor(isa) && CanRunOnHost(isa); }

inline std::vector<Isa> SimdIsasToTest() {
  std::vector<Isa> out;
  for (Isa isa :
       {Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Vnni, Isa::kNeon, Isa::kNeonDot, Isa::kNeonI8mm}) {
    if (CanTestVariants(isa)) out.push_back(isa);
  }
  return out;
}

}  // namespace ember::test
