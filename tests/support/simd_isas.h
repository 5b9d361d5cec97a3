// The SIMD levels whose kernel-table variants a test can run on this CPU (the
// build has variants for them and the CPU supports them); tests compare each
// against the _ref twin and skip the others, so no test depends on the host.
#pragma once

#include <vector>

#include "ops/kernels.h"
#include "platform/cpu_features.h"

namespace ember::test {

inline std::vector<Isa> SimdIsasToTest() {
  std::vector<Isa> out;
  for (Isa isa :
       {Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Vnni, Isa::kNeon, Isa::kNeonDot, Isa::kNeonI8mm}) {
    if (HasVariantsFor(isa) && HostCpu().Supports(isa)) out.push_back(isa);
  }
  return out;
}

}  // namespace ember::test
