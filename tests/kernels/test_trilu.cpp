// Tests of the reference Trilu: upper and lower triangles of a wide matrix
// at diagonals on, above and below the main one, k beyond the matrix (all or
// nothing kept), k absent, stacks of matrices, dtypes, empty dims, running in
// place, and the errors that name a bad rank or k.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/reference.h"
#include "tests/kernels/tensor_checks.h"

using namespace canary;
using namespace canary::kernels;
using canary::test::check_values;
using canary::test::require_error;
using canary::test::values_of;

namespace {

// [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]].
Tensor wide() {
  return Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {3, 4});
}

Tensor masked(bool upper, const Tensor& x, std::int64_t k) {
  const Tensor kt = Tensor::scalar<std::int64_t>(k);
  Tensor y;
  trilu(upper, x, &kt, y);
  return y;
}

const std::vector<double> kAll = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
const std::vector<double> kNone(12, 0.0);

}  // namespace

TEST_CASE("Trilu: upper and lower triangles at k = 0, above and below the diagonal", "[unit][trilu]") {
  check_values(masked(true, wide(), 0), {3, 4}, {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12});
  check_values(masked(false, wide(), 0), {3, 4}, {1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0});
  check_values(masked(true, wide(), 1), {3, 4}, {0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12});
  check_values(masked(true, wide(), -1), {3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12});
  check_values(masked(false, wide(), -1), {3, 4}, {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0});
  check_values(masked(false, wide(), 2), {3, 4}, {1, 2, 3, 0, 5, 6, 7, 8, 9, 10, 11, 12});
}

TEST_CASE("Trilu: k beyond the matrix keeps all or nothing", "[unit][trilu]") {
  check_values(masked(true, wide(), 4), {3, 4}, kNone);
  check_values(masked(true, wide(), -2), {3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  check_values(masked(true, wide(), -3), {3, 4}, kAll);
  check_values(masked(false, wide(), 3), {3, 4}, kAll);
  check_values(masked(false, wide(), -3), {3, 4}, kNone);
  check_values(masked(true, wide(), std::numeric_limits<std::int64_t>::max()), {3, 4}, kNone);
  check_values(masked(true, wide(), std::numeric_limits<std::int64_t>::min()), {3, 4}, kAll);
  check_values(masked(false, wide(), std::numeric_limits<std::int64_t>::min()), {3, 4}, kNone);
}

TEST_CASE("Trilu: an absent k is the main diagonal", "[unit][trilu]") {
  Tensor y;
  trilu(true, wide(), nullptr, y);
  check_values(y, {3, 4}, {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12});
  const Tensor undefined;
  trilu(false, wide(), &undefined, y);
  check_values(y, {3, 4}, {1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0});
}

TEST_CASE("Trilu: every matrix of a stack, integer and bool dtypes", "[unit][trilu]") {
  const Tensor stack = Tensor::from_vector<std::int32_t>({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2});
  CHECK(values_of<std::int32_t>(masked(true, stack, 0)) == std::vector<std::int32_t>{0, 1, 0, 3, 4, 5, 0, 7});
  const Tensor tall = Tensor::from_vector<std::int64_t>({1, 2, 3, 4, 5, 6}, {1, 3, 2});
  CHECK(values_of<std::int64_t>(masked(false, tall, 0)) == std::vector<std::int64_t>{1, 0, 3, 4, 5, 6});
  const Tensor b = Tensor::from_vector<bool>({true, true, true, true}, {2, 2});
  CHECK(values_of<bool>(masked(false, b, 0)) == std::vector<bool>{true, false, true, true});
  const Tensor d = masked(true, Tensor::from_vector<double>({1.5, -2.5, 3.5, -4.5}, {2, 2}), 0);
  CHECK(d.dtype() == DType::F64);
  CHECK(values_of<double>(d) == std::vector<double>{1.5, -2.5, 0, -4.5});
}

TEST_CASE("Trilu: empty dims and one row", "[unit][trilu]") {
  CHECK(masked(true, Tensor::empty(DType::F32, {0, 3, 3}), 0).shape() == Shape{0, 3, 3});
  CHECK(masked(false, Tensor::empty(DType::F32, {2, 0, 3}), 0).shape() == Shape{2, 0, 3});
  CHECK(masked(true, Tensor::empty(DType::I64, {3, 0}), -1).shape() == Shape{3, 0});
  const Tensor row = Tensor::from_vector<float>({1, 2, 3}, {1, 3});
  check_values(masked(false, row, -7), {1, 3}, {0, 0, 0});
  check_values(masked(true, row, 1), {1, 3}, {0, 2, 3});
}

TEST_CASE("Trilu: the output may be the input", "[unit][trilu]") {
  Tensor x = wide();
  const Tensor k = Tensor::scalar<std::int64_t>(1);
  trilu(true, x, &k, x);
  check_values(x, {3, 4}, {0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12});
}

TEST_CASE("Trilu: errors name a rank below 2 or a bad k", "[unit][trilu]") {
  require_error([] { masked(true, Tensor::from_vector<float>({1, 2}, {2}), 0); }, ErrorKind::Shape,
                {"Trilu", "rank >= 2", "f32[2]"});
  require_error([] { masked(true, Tensor::scalar<float>(1), 0); }, ErrorKind::Shape, {"Trilu", "rank >= 2"});
  const Tensor vector_k = Tensor::from_vector<std::int64_t>({1}, {1});
  require_error([&] { Tensor y; trilu(true, wide(), &vector_k, y); }, ErrorKind::Shape,
                {"Trilu", "k", "scalar", "i64[1]"});
  const Tensor i32_k = Tensor::scalar<std::int32_t>(1);
  require_error([&] { Tensor y; trilu(true, wide(), &i32_k, y); }, ErrorKind::Input, {"Trilu", "k", "i64", "i32"});
}
