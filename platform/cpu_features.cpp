#include "platform/cpu_features.h"

#include <cstdlib>

#if defined(__linux__) && (defined(__aarch64__) || defined(__arm__))
#include <sys/auxv.h>
#endif

namespace ember {
namespace {

CpuFeatures Detect() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.f16c = false;
  {
    // GCC 12's __builtin_cpu_supports has no "f16c": read CPUID leaf 1 ECX bit 29.
    unsigned eax = 1, ebx = 0, ecx = 0, edx = 0;
    __asm__ volatile("cpuid" : "+a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx));
    f.f16c = (ecx >> 29) & 1;
    const unsigned base = (eax >> 8) & 0xF;
    f.family = static_cast<int>(base == 0xF ? base + ((eax >> 20) & 0xFF) : base);
  }
  {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    __asm__ volatile("cpuid" : "+a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx));
    f.amd = ebx == 0x68747541 && edx == 0x69746E65 && ecx == 0x444D4163;  // "AuthenticAMD"
  }
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512dq = __builtin_cpu_supports("avx512dq");
  f.avx512vnni = __builtin_cpu_supports("avx512vnni");
  f.avx512bf16 = __builtin_cpu_supports("avx512bf16");
#elif defined(__aarch64__)
  f.neon = true;  // Advanced SIMD is mandatory in AArch64
#if defined(__linux__)
  const unsigned long hwcap = getauxval(AT_HWCAP);
  const unsigned long hwcap2 = getauxval(AT_HWCAP2);
  f.dotprod = (hwcap & (1UL << 20)) != 0;  // HWCAP_ASIMDDP
  f.i8mm = (hwcap2 & (1UL << 13)) != 0;    // HWCAP2_I8MM
#endif
#elif defined(__arm__)
#if defined(__linux__)
  f.neon = (getauxval(AT_HWCAP) & (1UL << 12)) != 0;  // HWCAP_NEON
#endif
#endif
  return f;
}

struct IsaName_ {
  Isa isa;
  const char* name;
};
constexpr IsaName_ kIsaNames[] = {
    {Isa::kRef, "ref"},         {Isa::kAvx2, "avx2"},         {Isa::kAvx512, "avx512"},
    {Isa::kAvx512Vnni, "avx512vnni"}, {Isa::kNeon, "neon"}, {Isa::kNeonDot, "neon_dot"},
    {Isa::kNeonI8mm, "neon_i8mm"},
};

}  // namespace

const char* IsaName(Isa isa) {
  for (const auto& n : kIsaNames) {
    if (n.isa == isa) return n.name;
  }
  return "unknown";
}

bool ParseIsa(const std::string& name, Isa* out) {
  for (const auto& n : kIsaNames) {
    if (name == n.name) {
      *out = n.isa;
      return true;
    }
  }
  return false;
}

bool CpuFeatures::Supports(Isa isa) const {
  const bool avx512 = avx512f && avx512bw && avx512vl && avx512dq && fma && f16c;
  switch (isa) {
    case Isa::kRef: return true;
    case Isa::kAvx2: return avx2 && fma && f16c;
    case Isa::kAvx512: return avx512;
    case Isa::kAvx512Vnni: return avx512 && avx512vnni;
    case Isa::kNeon: return neon;
    case Isa::kNeonDot: return neon && dotprod;
    case Isa::kNeonI8mm: return neon && dotprod && i8mm;
  }
  return false;
}

Isa CpuFeatures::Best() const {
  for (Isa isa : {Isa::kAvx512Vnni, Isa::kAvx512, Isa::kAvx2, Isa::kNeonI8mm, Isa::kNeonDot,
                  Isa::kNeon}) {
    if (Supports(isa)) return isa;
  }
  return Isa::kRef;
}

const CpuFeatures& HostCpu() {
  static const CpuFeatures f = Detect();
  return f;
}

Status SelectIsa(Isa* out) {
  const char* env = std::getenv("EMBER_ISA");
  if (env == nullptr || *env == '\0') {
    *out = HostCpu().Best();
    return Status::Ok();
  }
  Isa isa;
  if (!ParseIsa(env, &isa)) {
    return InvalidArgument(std::string("EMBER_ISA='") + env +
                           "' is not an ISA ember knows (ref, avx2, avx512, avx512vnni, neon, "
                           "neon_dot, neon_i8mm)");
  }
  if (!HostCpu().Supports(isa)) {
    return Unsupported(std::string("EMBER_ISA=") + env + " asks for " + IsaName(isa) +
                       ", which this CPU does not support (best here: " +
                       IsaName(HostCpu().Best()) + ")");
  }
  *out = isa;
  return Status::Ok();
}

}  // namespace ember
