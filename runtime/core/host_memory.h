// Host buffers for tensors and kernel scratch: 64-byte aligned, and large
// ones backed by transparent huge pages where the kernel offers them.
//
// A fresh buffer costs a page fault per 4 KiB page on its first touch. On
// the virtual machines Canary is measured on, a fault costs about 10 us, so
// a call at a new largest shape paid more for its fresh pages than for its
// arithmetic (the vehicle LSTM at batch 52, window 95: a 24 ms first call,
// 60% of it in page faults, against a 2.8 ms repeat). A buffer of 2 MiB or
// more is therefore placed on 2 MiB boundaries, rounded up to whole 2 MiB
// pages and advised MADV_HUGEPAGE: one fault per 2 MiB where transparent
// huge pages are enabled ("always" or "madvise"); elsewhere the advice is
// ignored and the buffer is an ordinary one.
#pragma once

#include <cstddef>

namespace canary {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

// At least `bytes` bytes (bytes > 0), 64-byte aligned, released with std::free;
// nullptr when the allocator fails.
void* allocate_host_buffer(std::size_t bytes) noexcept;

}  // namespace canary
