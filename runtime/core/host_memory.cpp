// Host buffer allocation with huge pages for large buffers (see host_memory.h).
#include "runtime/core/host_memory.h"

#include <cstdlib>

#include <sys/mman.h>

#include "canary/tensor.h"

namespace canary {

void* allocate_host_buffer(std::size_t bytes) noexcept {
  if (bytes < kHugePageBytes) {
    const std::size_t rounded = (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
    return rounded < bytes ? nullptr : std::aligned_alloc(kTensorAlignment, rounded);
  }
  const std::size_t pages = bytes / kHugePageBytes + (bytes % kHugePageBytes != 0);
  const std::size_t rounded = pages * kHugePageBytes;
  if (rounded / kHugePageBytes != pages) return nullptr;
  void* p = std::aligned_alloc(kHugePageBytes, rounded);
  // Advice only: where it is refused (no THP, an old kernel) the pages are 4 KiB ones.
  if (p != nullptr) (void)madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

}  // namespace canary
