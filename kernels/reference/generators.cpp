// Reference kernels that generate tensors from scalars and shapes:
// ConstantOfShape and Range.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/element_dispatch.h"

namespace canary::kernels {
namespace {

// Reads one Range operand: a one-element tensor of the start's dtype.
template <typename T>
T range_operand(const Tensor& t, const char* what, DType want) {
  if (t.dtype() != want || t.numel() != 1) {
    throw Error(ErrorKind::Input, std::string("Range: ") + what + " must be a one-element " +
                                      std::string(dtype_name(want)) + " tensor, got " + t.type_string());
  }
  return t.data<T>()[0];
}

// max(ceil((limit - start) / delta), 0) for integers, without overflow.
template <typename T>
std::int64_t integer_range_length(T start, T limit, T delta) {
  const __int128 span = static_cast<__int128>(limit) - static_cast<__int128>(start);
  const __int128 d = delta;
  __int128 n = span / d;
  if (n * d != span && ((span < 0) == (d < 0))) ++n;  // round the quotient up
  return n > 0 ? static_cast<std::int64_t>(n) : 0;
}

// max(ceil((limit - start) / delta), 0) for floats; non-finite is Error(Input).
template <typename T>
std::int64_t float_range_length(T start, T limit, T delta) {
  const double n = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
  if (!std::isfinite(n) || n >= 9.0e18) {
    throw Error(ErrorKind::Input, "Range: the length (limit - start) / delta is not a finite count (start " +
                                      std::to_string(start) + ", limit " + std::to_string(limit) + ", delta " +
                                      std::to_string(delta) + ")");
  }
  return n > 0 ? static_cast<std::int64_t>(n) : 0;
}

// Fills y with start + i * delta.
template <typename T>
void fill_range(T start, T limit, T delta, Tensor& y) {
  if (delta == T{0}) throw Error(ErrorKind::Input, "Range: delta is 0");
  std::int64_t n = 0;
  if constexpr (std::is_integral_v<T>) n = integer_range_length(start, limit, delta);
  else n = float_range_length(start, limit, delta);
  const std::int64_t shape[1] = {n};
  y.reset(dtype_of<T>::value, shape);
  T* py = y.data<T>();
  if constexpr (std::is_integral_v<T>) {
    // Every element lies between start and limit, but i * delta alone may not
    // fit T (start INT64_MIN, delta 2^62, i 2): compute in 128 bits.
    for (std::int64_t i = 0; i < n; ++i)
      py[i] = static_cast<T>(static_cast<__int128>(start) + static_cast<__int128>(i) * delta);
  } else {
    for (std::int64_t i = 0; i < n; ++i) py[i] = static_cast<T>(start + static_cast<T>(i) * delta);
  }
}

}  // namespace

void constant_of_shape(const Tensor& shape, const Tensor& value, Tensor& y) {
  if (shape.rank() != 1) {
    throw Error(ErrorKind::Shape, "ConstantOfShape: the shape input must be 1-D, got " + shape.type_string());
  }
  if (shape.numel() > static_cast<std::int64_t>(kMaxTensorRank)) {
    throw Error(ErrorKind::Shape, "ConstantOfShape: the shape input " + shape.type_string() + " asks for rank " +
                                      std::to_string(shape.numel()) + ", above the limit " +
                                      std::to_string(kMaxTensorRank));
  }
  const std::vector<std::int64_t> dims = read_int_values(shape, "ConstantOfShape input");
  for (std::int64_t d : dims) {
    if (d < 0) throw Error(ErrorKind::Input, "ConstantOfShape: shape " + shape_to_string(dims) + " has a negative dim");
  }
  if (value.defined() && value.numel() != 1) {
    throw Error(ErrorKind::Input, "ConstantOfShape: value must have one element, got " + value.type_string());
  }
  const Tensor fill = value.defined() ? value : Tensor::scalar<float>(0.0f);
  y.reset(fill.dtype(), dims);
  const std::size_t size = dtype_size(fill.dtype());
  auto* out = static_cast<unsigned char*>(y.raw());
  for (std::int64_t i = 0; i < y.numel(); ++i) std::memcpy(out + i * size, fill.raw(), size);
}

void range(const Tensor& start, const Tensor& limit, const Tensor& delta, Tensor& y) {
  detail::dispatch_numeric(start.dtype(), "Range", [&](auto tag) {
    using T = decltype(tag);
    const DType want = start.dtype();
    const T s = range_operand<T>(start, "start", want);
    const T l = range_operand<T>(limit, "limit", want);
    const T d = range_operand<T>(delta, "delta", want);
    fill_range(s, l, d, y);
  });
}

}  // namespace canary::kernels
