// Memory descriptors for Canary's plain (dense row-major, f32) buffers.
#pragma once

#include <cstdint>
#include <span>

#include <oneapi/dnnl/dnnl.hpp>

#include "canary/tensor.h"

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

// An f32 descriptor of [N, C, spatial...] dims whose buffer is laid out
// channels-last, [N, spatial..., C] (Conv's and pooling's channels_last).
inline dnnl::memory::desc channels_last_desc(std::span<const std::int64_t> dims) {
  const std::size_t rank = dims.size();
  dnnl::memory::dims strides(rank, 1);
  std::int64_t step = dims[1];  // C is innermost
  for (std::size_t i = rank; i-- > 2;) {
    strides[i] = step;
    step *= dims[i];
  }
  strides[0] = step;
  return strided_desc(dims, strides);
}

// [N, spatial..., C] as [N, C, spatial...] and back.
inline Shape channels_first_dims(std::span<const std::int64_t> d) {
  Shape out{d.front(), d.back()};
  out.insert(out.end(), d.begin() + 1, d.end() - 1);
  return out;
}
inline Shape channels_last_dims(std::span<const std::int64_t> d) {
  Shape out{d.front()};
  out.insert(out.end(), d.begin() + 2, d.end());
  out.push_back(d[1]);
  return out;
}

// A view of x's buffer with [N, C, spatial...] dims, for planning a
// channels-last operand with the channels-first code (never read through).
inline Tensor channels_first_view(const Tensor& x) {
  const Shape dims = channels_first_dims(x.shape());
  return Tensor::wrap(const_cast<void*>(x.raw()), x.dtype(), dims);
}

}  // namespace canary::kernels::onednn
