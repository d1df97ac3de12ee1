// Test support for kernel tests: tensor construction shortcuts, value
// extraction, closeness checks and error assertions.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "canary/error.h"
#include "canary/tensor.h"

namespace canary::test {

// Copies a tensor's elements out as a vector of T (T must match the dtype).
template <typename T>
std::vector<T> values_of(const Tensor& t) {
  const T* p = t.data<T>();
  return std::vector<T>(p, p + t.numel());
}

// An i64 1-D tensor holding `v` (shape-like inputs).
inline Tensor ints(const std::vector<std::int64_t>& v) {
  return Tensor::from_vector<std::int64_t>(v, {static_cast<std::int64_t>(v.size())});
}

// Checks a tensor's shape and every element (as double) against the expected values.
inline void check_values(const Tensor& y, const Shape& shape, const std::vector<double>& want, double tol = 1e-5) {
  REQUIRE(y.shape() == shape);
  REQUIRE(y.numel() == static_cast<std::int64_t>(want.size()));
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    CHECK(std::abs(y.element_as_double(static_cast<std::int64_t>(i)) - want[i]) <= tol);
  }
}

// A tensor of element type T holding the given values.
template <typename T>
Tensor make(const std::vector<double>& v, const Shape& shape) {
  return Tensor::from_vector(std::vector<T>(v.begin(), v.end()), shape);
}

// A tensor of the given dtype (f32 or f64) holding the values.
inline Tensor make(DType dt, const std::vector<double>& v, const Shape& shape) {
  if (dt == DType::F32) return Tensor::from_vector(std::vector<float>(v.begin(), v.end()), shape);
  return Tensor::from_vector(v, shape);
}

// n deterministic values in [-0.5, 0.5].
inline std::vector<double> wave(std::size_t n, double seed) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = 0.5 * std::sin(seed + 0.9 * double(i));
  return v;
}

// All elements of a tensor as doubles.
inline std::vector<double> values(const Tensor& t) {
  std::vector<double> v(static_cast<std::size_t>(t.numel()));
  for (std::int64_t i = 0; i < t.numel(); ++i) v[static_cast<std::size_t>(i)] = t.element_as_double(i);
  return v;
}

// Checks two value lists agree element by element within tol.
inline void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    CHECK(std::abs(got[i] - want[i]) <= tol);
  }
}

// Runs f and returns the canary::Error it throws; fails the test when it throws nothing.
inline Error error_from(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  FAIL("expected a canary::Error");
  return Error(ErrorKind::Internal, "unreachable");
}

// Asserts that f throws a canary::Error of `kind` whose message contains every fragment.
inline void require_error(const std::function<void()>& f, ErrorKind kind, const std::vector<std::string>& fragments) {
  const Error e = error_from(f);
  CHECK(e.kind() == kind);
  for (const std::string& s : fragments) CHECK_THAT(std::string(e.what()), Catch::Matchers::Contains(s));
}

}  // namespace canary::test
