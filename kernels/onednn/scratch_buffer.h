// Scratch buffers that grow without zero-filling, from the host buffers of
// runtime/core/host_memory.h (size classes, huge pages, released ones kept
// for reuse), for scratch a kernel writes whole before reading it.
#pragma once

#include <cstddef>
#include <limits>
#include <new>
#include <utility>

#include "kernels/onednn/scratch_limit.h"
#include "runtime/core/host_memory.h"

namespace canary::kernels::onednn {

class UninitializedBytes {
 public:
  UninitializedBytes() = default;
  UninitializedBytes(UninitializedBytes&& other) noexcept : buffer_(std::exchange(other.buffer_, {})) {}
  UninitializedBytes& operator=(UninitializedBytes&& other) noexcept {
    if (this != &other) {
      release();
      buffer_ = std::exchange(other.buffer_, {});
    }
    return *this;
  }
  ~UninitializedBytes() { release(); }

  // At least `bytes` bytes, 64-byte aligned; the contents are unspecified.
  void* reserve(std::size_t bytes) {
    if (bytes > buffer_.bytes) {
      release();
      buffer_ = allocate_host_buffer(bytes);
      if (!buffer_.data) {
        buffer_ = {};
        throw std::bad_alloc();
      }
    }
    return buffer_.data;
  }
  // Gives back a buffer above kMaxRetainedScratchBytes (as release_large_scratch does).
  void release_if_large() {
    if (buffer_.bytes > kMaxRetainedScratchBytes) release();
  }

 private:
  void release() noexcept {
    release_host_buffer(buffer_);
    buffer_ = {};
  }
  HostBuffer buffer_;
};

// The recurrent kernels' gate buffer G is written whole by the input
// projection before it is read; on a new largest shape, filling it first
// would touch every fresh page twice.
class UninitializedFloats {
 public:
  float* reserve(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(float)) throw std::bad_alloc();
    return static_cast<float*>(bytes_.reserve(n * sizeof(float)));
  }
  void release_if_large() { bytes_.release_if_large(); }

 private:
  UninitializedBytes bytes_;
};

}  // namespace canary::kernels::onednn
