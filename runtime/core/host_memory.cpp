// Host buffer allocation: size classes, huge pages for large buffers, and the
// cache of released ones (see host_memory.h).
#include "runtime/core/host_memory.h"

#include <bit>
#include <cstdlib>

#include <sys/mman.h>

#include "canary/tensor.h"
#include "runtime/core/host_buffer_cache.h"

namespace canary {
namespace {

// `bytes` rounded up to a multiple of `step` (a power of two); 0 on overflow.
std::size_t round_up(std::size_t bytes, std::size_t step) noexcept {
  const std::size_t rounded = (bytes + step - 1) & ~(step - 1);
  return rounded < bytes ? 0 : rounded;
}

}  // namespace

std::size_t host_buffer_class(std::size_t bytes) noexcept {
  if (bytes < kCachedMinBytes) return round_up(bytes, kTensorAlignment);
  // Four classes per octave: [2^m, 2^(m+1)) in steps of 2^(m-2).
  const std::size_t quarter = round_up(bytes, std::bit_floor(bytes) / 4);
  if (quarter == 0 || quarter < kHugePageMinBytes) return quarter;
  return round_up(quarter, kHugePageBytes);
}

HostBuffer allocate_host_buffer(std::size_t bytes) noexcept {
  const std::size_t size = host_buffer_class(bytes);
  if (size == 0) return {};
  if (size >= kCachedMinBytes) {
    if (const HostBuffer kept = host_buffer_cache().take(size); kept.data != nullptr) return kept;
  }
  if (size < kHugePageMinBytes) {
    void* p = std::aligned_alloc(kTensorAlignment, size);
    return p ? HostBuffer{p, size} : HostBuffer{};
  }
  void* p = std::aligned_alloc(kHugePageBytes, size);
  if (p == nullptr) return {};
  // Advice only: where it is refused (no THP, an old kernel) the pages are 4 KiB ones.
  (void)madvise(p, size, MADV_HUGEPAGE);
  return {p, size};
}

void release_host_buffer(HostBuffer buffer) noexcept {
  if (buffer.data == nullptr) return;
  if (buffer.bytes >= kCachedMinBytes && host_buffer_cache().keep(buffer.data, buffer.bytes)) return;
  std::free(buffer.data);
}

}  // namespace canary
