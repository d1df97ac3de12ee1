// Memory descriptors for Canary's plain (dense row-major, f32) buffers.
#pragma once

#include <cstdint>
#include <span>

#include <oneapi/dnnl/dnnl.hpp>

namespace canary::kernels::onednn {

// True when a dense f32 buffer of dims has an element count and byte size
// that fit in int64 (so strides cannot overflow); zero dims always fit.
inline bool dense_size_fits(std::span<const std::int64_t> dims) {
  std::int64_t n = static_cast<std::int64_t>(sizeof(float));
  for (std::int64_t d : dims) {
    if (d == 0) return true;
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return false;
  }
  return true;
}

// An f32 descriptor of dims with explicit strides (in elements).
inline dnnl::memory::desc strided_desc(std::span<const std::int64_t> dims, std::span<const std::int64_t> strides) {
  return dnnl::memory::desc(dnnl::memory::dims(dims.begin(), dims.end()), dnnl::memory::data_type::f32,
                            dnnl::memory::dims(strides.begin(), strides.end()));
}

// An f32 descriptor of dims laid out densely in row-major order.
inline dnnl::memory::desc row_major_desc(std::span<const std::int64_t> dims) {
  dnnl::memory::dims strides(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strided_desc(dims, strides);
}

}  // namespace canary::kernels::onednn
