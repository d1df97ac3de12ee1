// A float scratch buffer that grows without zero-filling, on huge pages when
// large (runtime/core/host_memory.h), for scratch a kernel writes whole
// before reading it.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>

#include "kernels/onednn/scratch_limit.h"
#include "runtime/core/host_memory.h"

namespace canary::kernels::onednn {

// The recurrent kernels' gate buffer G is written whole by the input
// projection before it is read; on a new largest shape, filling it first
// would touch every fresh page twice.
class UninitializedFloats {
 public:
  float* reserve(std::size_t n) {
    if (n > capacity_) {
      data_.reset();
      capacity_ = 0;
      if (n > std::numeric_limits<std::size_t>::max() / sizeof(float)) throw std::bad_alloc();
      data_.reset(static_cast<float*>(allocate_host_buffer(n * sizeof(float))));
      if (!data_) throw std::bad_alloc();
      capacity_ = n;
    }
    return data_.get();
  }
  // Frees a buffer above kMaxRetainedScratchBytes (as release_large_scratch does).
  void release_if_large() {
    if (capacity_ * sizeof(float) > kMaxRetainedScratchBytes) {
      data_.reset();
      capacity_ = 0;
    }
  }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> data_;
  std::size_t capacity_ = 0;
};

}  // namespace canary::kernels::onednn
