// Allocation guards: output-size pre-checks with int64 overflow detection.
#include "vm/allocation_guard.h"

#include <algorithm>
#include <string>

#include "canary/error.h"

namespace canary::vm {
namespace {

// Accumulates a product of dims, remembering overflow.
struct ElementCount {
  std::int64_t value = 1;
  bool overflow = false;
  void times(std::int64_t d) {
    if (d < 0) d = 0;
    if (__builtin_mul_overflow(value, d, &value)) overflow = true;
  }
};

// Throws Resource when count elements of dtype exceed max_bytes (or overflowed).
void check_count(const ElementCount& n, DType dtype, std::size_t max_bytes) {
  if (n.overflow)
    throw Error(ErrorKind::Resource, "output element count overflows int64");
  const std::size_t elem = dtype_size(dtype);
  const auto count = static_cast<std::size_t>(n.value);
  if (count != 0 && count > max_bytes / elem)
    throw Error(ErrorKind::Resource, "output of " + std::to_string(n.value) + " elements (" +
                                         std::to_string(count * elem) + " bytes) exceeds the limit of " +
                                         std::to_string(max_bytes) + " bytes");
}

// Dim i counted from the right (1 when beyond the rank).
std::int64_t dim_from_right(std::span<const std::int64_t> s, std::size_t i) {
  return i < s.size() ? s[s.size() - 1 - i] : 1;
}

// Multiplies the broadcast of up to three shapes into n.
void multiply_broadcast(ElementCount& n, std::span<const std::int64_t> a, std::span<const std::int64_t> b,
                        std::span<const std::int64_t> c) {
  const std::size_t rank = std::max({a.size(), b.size(), c.size()});
  for (std::size_t i = 0; i < rank; ++i)
    n.times(std::max({dim_from_right(a, i), dim_from_right(b, i), dim_from_right(c, i)}));
}

}  // namespace

// Broadcast of two shapes.
void guard_broadcast(std::span<const std::int64_t> a, std::span<const std::int64_t> b, DType dtype,
                     std::size_t max_bytes) {
  ElementCount n;
  multiply_broadcast(n, a, b, {});
  check_count(n, dtype, max_bytes);
}

// Broadcast of three shapes.
void guard_broadcast3(std::span<const std::int64_t> a, std::span<const std::int64_t> b,
                      std::span<const std::int64_t> c, DType dtype, std::size_t max_bytes) {
  ElementCount n;
  multiply_broadcast(n, a, b, c);
  check_count(n, dtype, max_bytes);
}

// Matmul: batch broadcast × M × N.
void guard_matmul(std::span<const std::int64_t> a, std::span<const std::int64_t> b, DType dtype,
                  std::size_t max_bytes) {
  if (a.empty() || b.empty()) return;
  ElementCount n;
  n.times(a.size() >= 2 ? a[a.size() - 2] : 1);
  n.times(b.size() >= 2 ? b.back() : 1);
  auto batch = [](std::span<const std::int64_t> s) { return s.size() > 2 ? s.first(s.size() - 2) : s.first(0); };
  multiply_broadcast(n, batch(a), batch(b), {});
  check_count(n, dtype, max_bytes);
}

// Gather: indices × data without the gathered axis.
void guard_gather(const Tensor& data, const Tensor& indices, std::int64_t axis, std::size_t max_bytes) {
  ElementCount n;
  n.times(indices.numel());
  const std::int64_t r = data.rank();
  const std::int64_t ax = axis < 0 ? axis + r : axis;
  for (std::int64_t i = 0; i < r; ++i)
    if (i != ax) n.times(data.shape()[static_cast<std::size_t>(i)]);
  check_count(n, data.dtype(), max_bytes);
}

// Expand: broadcast of x's shape and the shape values.
void guard_expand(const Tensor& x, const Tensor& shape, std::size_t max_bytes) {
  if (shape.rank() > 1 || (shape.dtype() != DType::I64 && shape.dtype() != DType::I32)) return;
  constexpr std::size_t kMaxRank = 64;
  const auto count = static_cast<std::size_t>(shape.numel());
  if (count > kMaxRank) return;
  std::int64_t dims[kMaxRank];
  for (std::size_t i = 0; i < count; ++i)
    dims[i] = shape.dtype() == DType::I64 ? shape.data<std::int64_t>()[i] : shape.data<std::int32_t>()[i];
  ElementCount n;
  multiply_broadcast(n, x.shape(), std::span<const std::int64_t>(dims, count), {});
  check_count(n, x.dtype(), max_bytes);
}

// A tensor a kernel produced.
void guard_tensor(const Tensor& t, std::size_t max_bytes) {
  if (t.nbytes() > max_bytes)
    throw Error(ErrorKind::Resource, "output " + t.type_string() + " (" + std::to_string(t.nbytes()) +
                                         " bytes) exceeds the limit of " + std::to_string(max_bytes) + " bytes");
}

}  // namespace canary::vm
