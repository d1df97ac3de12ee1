// Bounds on the thread-local f32 scratch buffers the oneDNN recurrent kernels
// keep between calls: a size check against the tensor allocation limit before
// a buffer is grown, and a release of large buffers after the call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "canary/tensor.h"

namespace canary::kernels::onednn {

// Scratch buffers above this size are freed after each call instead of kept.
inline constexpr std::size_t kMaxRetainedScratchBytes = std::size_t{64} << 20;

// True when an f32 buffer of the product of dims fits tensor_allocation_limit()
// (false on negative dims or overflow), so scratch obeys the same bound as tensors.
inline bool scratch_fits_limit(std::initializer_list<std::int64_t> dims) {
  std::uint64_t bytes = sizeof(float);
  for (std::int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(bytes, static_cast<std::uint64_t>(d), &bytes)) return false;
  }
  return bytes <= tensor_allocation_limit();
}

// Frees each buffer whose capacity exceeds kMaxRetainedScratchBytes.
inline void release_large_scratch(std::initializer_list<std::vector<float>*> buffers) {
  for (std::vector<float>* v : buffers)
    if (v->capacity() * sizeof(float) > kMaxRetainedScratchBytes) std::vector<float>().swap(*v);
}

}  // namespace canary::kernels::onednn
