// What the CPU can run, detected once, and the ISA level a user may force
// with EMBER_ISA=ref|avx2|avx512|avx512vnni|neon|neon_dot|neon_i8mm.
#pragma once

#include <string>

#include "platform/status.h"

namespace ember {

// Kernel variants in order of preference within an architecture.
enum class Isa {
  kRef = 0,     // scalar C++ (every architecture)
  kAvx2,        // x86-64: AVX2 + FMA + F16C
  kAvx512,      // x86-64: AVX-512 F/BW/VL/DQ
  kAvx512Vnni,  // x86-64: AVX-512 + VNNI
  kNeon,        // ARM: Advanced SIMD (aarch64, or armv7 with NEON)
  kNeonDot,     // ARM: + dotprod (sdot/udot)
  kNeonI8mm,    // ARM: + i8mm (smmla)
};

const char* IsaName(Isa isa);

struct CpuFeatures {
  bool avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false;
  bool avx512vnni = false, avx512bf16 = false;
  bool neon = false, dotprod = false, i8mm = false;
  // x86: the vendor and the display family of CPUID leaf 1 (base + extended:
  // 0x19 is AMD's Zen 3 and Zen 4, 0x1A Zen 5), where a kernel's tuning
  // depends on the core rather than on the ISA (ops/qgemm.h).
  bool amd = false;
  int family = 0;

  bool Supports(Isa isa) const;
  Isa Best() const;  // the most capable Isa this CPU supports
};

// Detected once per process.
const CpuFeatures& HostCpu();

// The ISA kernels should use: EMBER_ISA if set (an error if unknown or not
// supported by this CPU), else HostCpu().Best().
Status SelectIsa(Isa* out);

// Parses an ISA name; false when unknown.
bool ParseIsa(const std::string& name, Isa* out);

}  // namespace ember
