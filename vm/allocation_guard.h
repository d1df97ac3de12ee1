// Allocation guards: cheap pre-checks that an op's output stays under
// RunLimits::max_tensor_bytes before a kernel allocates and fills it. Each
// throws canary::Error(Resource) (the interpreter prefixes the node).
#pragma once

#include <cstddef>
#include <span>

#include "canary/tensor.h"

namespace canary::vm {

// True when count_a * count_b (* count_c) elements of dtype fit in max_bytes:
// a bound on any broadcast of the operands, so the exact guard can be skipped.
inline bool product_fits(std::int64_t a, std::int64_t b, std::int64_t c, DType dtype, std::size_t max_bytes) {
  std::int64_t n = 0;
  if (__builtin_mul_overflow(a, b, &n) || __builtin_mul_overflow(n, c, &n)) return false;
  return static_cast<std::size_t>(n) <= max_bytes / dtype_size(dtype);
}

// Output of NumPy broadcasting of a and b (dims that do not broadcast are left to the kernel).
void guard_broadcast(std::span<const std::int64_t> a, std::span<const std::int64_t> b, DType dtype,
                     std::size_t max_bytes);
void guard_broadcast3(std::span<const std::int64_t> a, std::span<const std::int64_t> b,
                      std::span<const std::int64_t> c, DType dtype, std::size_t max_bytes);
// NumPy matmul output: broadcast batch dims × M × N.
void guard_matmul(std::span<const std::int64_t> a, std::span<const std::int64_t> b, DType dtype,
                  std::size_t max_bytes);
// Gather output: indices' elements × the rest of data.
void guard_gather(const Tensor& data, const Tensor& indices, std::int64_t axis, std::size_t max_bytes);
// Expand output: broadcast of x's shape with the requested shape.
void guard_expand(const Tensor& x, const Tensor& shape, std::size_t max_bytes);
// A produced tensor (after the kernel ran).
void guard_tensor(const Tensor& t, std::size_t max_bytes);

}  // namespace canary::vm
