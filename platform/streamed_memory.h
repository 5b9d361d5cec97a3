// Memory for data that every step streams from RAM: the packed weights of a
// decode pass, and the bandwidth probe's buffer that rates them.
//
// Why: a decode step reads hundreds of MiB through 4 KiB pages, one TLB miss
// and page walk every 4 KiB. Backed by 2 MiB transparent huge pages the same
// reads cost one walk per 2 MiB. On the 2-vCPU Zen 3 guest of
// docs/PERFORMANCE.md (THP "madvise", Debian's default) the probe read 13-17%
// more with them and Qwen2.5-Coder's 1-thread decode ~8% more. Linux backs
// anonymous memory with huge pages only where the range covers whole aligned
// 2 MiB pages and, under "madvise", only where asked: so one allocation holds
// all of a model's packed matrices (a SmolLM2 layer's matrices are 0.2-0.6 MiB
// each), 2 MiB aligned, advised MADV_HUGEPAGE. Elsewhere (THP "never", other
// systems) the advice is a no-op and the memory is ordinary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ember {

struct StreamedFree {
  void operator()(uint8_t* p) const;
};
using StreamedBuffer = std::unique_ptr<uint8_t[], StreamedFree>;

// `bytes` (> 0) of uninitialized memory, 2 MiB aligned, advised for huge
// pages; pages come in on first touch, as with malloc. Throws std::bad_alloc.
StreamedBuffer AllocStreamed(size_t bytes);

}  // namespace ember
