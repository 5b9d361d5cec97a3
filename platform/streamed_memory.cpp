#include "platform/streamed_memory.h"

#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ember {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

}  // namespace

void StreamedFree::operator()(uint8_t* p) const { std::free(p); }

StreamedBuffer AllocStreamed(size_t bytes) {
  // Whole huge pages: aligned_alloc wants a multiple of the alignment, and the
  // kernel backs only whole aligned 2 MiB ranges.
  const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  if (bytes == 0 || rounded < bytes) throw std::bad_alloc();
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Advice only: where THP is off or unsupported this fails and changes nothing.
  (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return StreamedBuffer(static_cast<uint8_t*>(p));
}

}  // namespace ember
