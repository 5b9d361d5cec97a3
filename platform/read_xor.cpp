#include "platform/read_xor.h"

namespace ember {

ReadXorFn ReadXorFor(Isa isa) {
  switch (isa) {
    case Isa::kRef:
      return ReadXor_ref;
#if defined(__x86_64__)
    case Isa::kAvx2:
      return ReadXor_avx2;
    case Isa::kAvx512:
    case Isa::kAvx512Vnni:
      return ReadXor_avx512;
#elif defined(__aarch64__) || (defined(__arm__) && defined(__ARM_NEON))
    case Isa::kNeon:
    case Isa::kNeonDot:
    case Isa::kNeonI8mm:
      return ReadXor_neon;
#endif
    default:
      return nullptr;
  }
}

ReadXorFn HostReadXor() {
  const ReadXorFn fn = ReadXorFor(HostCpu().Best());
  return fn != nullptr ? fn : ReadXor_ref;
}

}  // namespace ember
