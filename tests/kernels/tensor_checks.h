// Test support for kernel tests: tensor construction shortcuts, value
// extraction and error assertions.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
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
