// The process-wide cache of released host buffers (see host_memory.h):
// buffers of one size class each, least recently released evicted first
// once the cache would hold more than its limit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "canary/tensor.h"
#include "runtime/core/host_memory.h"

namespace canary {

class HostBufferCache {
 public:
  // The smallest kept buffer of `bytes` (a size class) to twice that, whose
  // pages are backed already; data is nullptr when there is none.
  HostBuffer take(std::size_t bytes) noexcept;
  // Keeps `data` (`bytes` bytes, from std::aligned_alloc) for a later take;
  // false when the limit leaves no room for it (the caller then frees it).
  bool keep(void* data, std::size_t bytes) noexcept;
  void set_limit(std::size_t bytes) noexcept;
  HostBufferCacheStats stats() const noexcept;
};

// The one cache of the process; never destroyed, so tensors released during
// static destruction still have it.
HostBufferCache& host_buffer_cache() noexcept;

}  // namespace canary
