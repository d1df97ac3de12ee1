// Host buffers for tensors and kernel scratch: 64-byte aligned, sized in
// classes, large ones on transparent huge pages, and released large ones
// kept for the next request of their class.
//
// A fresh buffer costs a page fault per 4 KiB page on its first touch. On
// the virtual machines Canary is measured on, a fault costs about 10 us
// (the guest hands freed pages back to the host, which backs them again on
// the next touch), so a call at a new largest shape paid more for its fresh
// pages than for its arithmetic (the vehicle LSTM at batch 52, window 95: a
// 24 ms first call, 60% of it in page faults, against a 2.8 ms repeat; a
// dilated TCN's first compiled call: 16 MiB of fresh registers, 40 ms).
// Hence three rules:
// - Sizes are rounded to classes, four per octave (at most 25% more address
//   space; pages never touched cost nothing), so a register that grows by a
//   few percent keeps its buffer and a released buffer fits the next request
//   of a similar size.
// - A buffer of kHugePageMinBytes or more is placed on 2 MiB boundaries,
//   rounded up to whole 2 MiB pages and advised MADV_HUGEPAGE: one fault per
//   2 MiB where transparent huge pages are enabled ("always" or "madvise");
//   elsewhere the advice is ignored and the buffer is an ordinary one.
// - A released buffer of kCachedMinBytes or more goes to a process-wide
//   cache (runtime/core/host_buffer_cache.h) instead of back to the system,
//   up to host_buffer_cache_limit() bytes, least recently released evicted
//   first; a request of its class, or of a class down to half of it, takes
//   it back, pages already backed.
#pragma once

#include <cstddef>

namespace canary {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
// Buffers from this size up are placed on huge pages (a 1 MiB buffer takes
// one 2 MiB page: 256 faults of 10 us against one fault and 2 MiB zeroed).
inline constexpr std::size_t kHugePageMinBytes = std::size_t{1} << 20;
// Buffers from this size up are sized in classes and cached when released.
inline constexpr std::size_t kCachedMinBytes = std::size_t{64} << 10;

struct HostBuffer {
  void* data = nullptr;
  // Usable bytes: the request's class, or a larger kept class (at most twice
  // it) that the cache handed out; what release_host_buffer must be given.
  std::size_t bytes = 0;
};

// The class a request of `bytes` bytes is served from (at least `bytes`, a
// multiple of 64); 0 when rounding overflows.
std::size_t host_buffer_class(std::size_t bytes) noexcept;

// A buffer of at least `bytes` bytes (bytes > 0), 64-byte aligned, from the
// cache where it holds one of the class or up to twice it (a call at a new,
// smaller shape then touches no fresh page); data is nullptr when the
// allocator fails.
HostBuffer allocate_host_buffer(std::size_t bytes) noexcept;

// Gives back a buffer from allocate_host_buffer, whole (its bytes as returned).
void release_host_buffer(HostBuffer buffer) noexcept;

}  // namespace canary
