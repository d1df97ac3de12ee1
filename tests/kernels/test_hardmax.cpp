// Tests of the reference Hardmax: the one-hot of the first largest element
// along the last, first and a middle axis, ties, NaN and infinities, f64,
// empty dims, running in place, and the errors for a bad axis or dtype.
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

Tensor hardmaxed(std::int64_t axis, const Tensor& x) {
  Tensor y;
  hardmax(axis, x, y);
  return y;
}

// [[3, 1, 2], [0, 5, 5]]: row 1 ties between its last two elements.
Tensor rows() { return Tensor::from_vector<float>({3, 1, 2, 0, 5, 5}, {2, 3}); }

}  // namespace

TEST_CASE("Hardmax: the first largest element along the last or first axis", "[unit][hardmax]") {
  check_values(hardmaxed(-1, rows()), {2, 3}, {1, 0, 0, 0, 1, 0});
  check_values(hardmaxed(1, rows()), {2, 3}, {1, 0, 0, 0, 1, 0});
  check_values(hardmaxed(0, rows()), {2, 3}, {1, 0, 0, 0, 1, 1});
  check_values(hardmaxed(-2, rows()), {2, 3}, {1, 0, 0, 0, 1, 1});
}

TEST_CASE("Hardmax: a middle axis, all-equal lines and f64", "[unit][hardmax]") {
  // x[o][k][i]: along k, line (0, i=0) is {1, 4}, (0, 1) {2, 2}, (1, 0) {9, 0}, (1, 1) {-1, -3}.
  const Tensor x = Tensor::from_vector<double>({1, 2, 4, 2, 9, -1, 0, -3}, {2, 2, 2});
  const Tensor y = hardmaxed(1, x);
  CHECK(y.dtype() == DType::F64);
  CHECK(values_of<double>(y) == std::vector<double>{0, 1, 1, 0, 1, 1, 0, 0});
  check_values(hardmaxed(0, Tensor::from_vector<float>({7, 7, 7}, {3})), {3}, {1, 0, 0});
}

TEST_CASE("Hardmax: NaN counts as largest, infinities compare as numbers", "[unit][hardmax]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  check_values(hardmaxed(0, Tensor::from_vector<float>({1, nan, 5, nan}, {4})), {4}, {0, 1, 0, 0});
  check_values(hardmaxed(0, Tensor::from_vector<float>({nan, inf}, {2})), {2}, {1, 0});
  check_values(hardmaxed(0, Tensor::from_vector<float>({-inf, -inf}, {2})), {2}, {1, 0});
  check_values(hardmaxed(0, Tensor::from_vector<float>({-inf, 2, inf}, {3})), {3}, {0, 0, 1});
}

TEST_CASE("Hardmax: empty dims and size-1 axes", "[unit][hardmax]") {
  CHECK(hardmaxed(1, Tensor::empty(DType::F32, {2, 0})).shape() == Shape{2, 0});
  CHECK(hardmaxed(1, Tensor::empty(DType::F32, {0, 3})).shape() == Shape{0, 3});
  check_values(hardmaxed(1, Tensor::from_vector<float>({-4, 8}, {2, 1})), {2, 1}, {1, 1});
}

TEST_CASE("Hardmax: the output may be the input", "[unit][hardmax]") {
  Tensor x = rows();
  hardmax(0, x, x);
  check_values(x, {2, 3}, {1, 0, 0, 0, 1, 1});
}

TEST_CASE("Hardmax: errors name the axis or the dtype", "[unit][hardmax]") {
  require_error([] { hardmaxed(2, rows()); }, ErrorKind::Shape, {"Hardmax", "axis 2", "[2, 3]"});
  require_error([] { hardmaxed(-3, rows()); }, ErrorKind::Shape, {"Hardmax", "axis -3"});
  require_error([] { hardmaxed(-1, Tensor::scalar<float>(1)); }, ErrorKind::Shape, {"Hardmax", "axis -1"});
  require_error([] { hardmaxed(0, Tensor::from_vector<std::int64_t>({1, 2}, {2})); }, ErrorKind::Input,
                {"Hardmax", "i64"});
}
