// Tests of the reference elementwise kernels: unary, binary with NumPy
// broadcasting, where, clip and broadcast_shapes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/reference.h"
#include "tests/kernels/tensor_checks.h"

using namespace canary;
using namespace canary::kernels;
using canary::test::require_error;
using canary::test::values_of;

using I64 = std::int64_t;
using V = std::vector<float>;

TEST_CASE("add of equal shapes", "[unit][elementwise]") {
  Tensor a = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::from_vector<float>({10, 20, 30, 40, 50, 60}, {2, 3});
  Tensor y;
  binary(BinaryOp::Add, a, b, y);
  CHECK(y.shape() == Shape{2, 3});
  CHECK(values_of<float>(y) == V{11, 22, 33, 44, 55, 66});
}

TEST_CASE("broadcast add of [2,1,3] and [4,1]", "[unit][elementwise]") {
  Tensor a = Tensor::from_vector<float>({0, 1, 2, 3, 4, 5}, {2, 1, 3});
  Tensor b = Tensor::from_vector<float>({10, 20, 30, 40}, {4, 1});
  Tensor y;
  binary(BinaryOp::Add, a, b, y);
  CHECK(y.shape() == Shape{2, 4, 3});
  CHECK(values_of<float>(y) == V{10, 11, 12, 20, 21, 22, 30, 31, 32, 40, 41, 42,
                                 13, 14, 15, 23, 24, 25, 33, 34, 35, 43, 44, 45});
}

TEST_CASE("broadcast with rank-0 scalars on either side", "[unit][elementwise]") {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  Tensor s = Tensor::scalar<float>(10.0f);
  Tensor y;
  binary(BinaryOp::Sub, s, x, y);
  CHECK(y.shape() == Shape{2, 2});
  CHECK(values_of<float>(y) == V{9, 8, 7, 6});
  binary(BinaryOp::Div, x, s, y);
  CHECK(values_of<float>(y) == V{0.1f, 0.2f, 0.3f, 0.4f});
  binary(BinaryOp::Mul, s, s, y);
  CHECK(y.rank() == 0);
  CHECK(values_of<float>(y) == V{100});
}

TEST_CASE("a one-element operand of higher rank raises the output rank", "[unit][elementwise]") {
  Tensor a = Tensor::from_vector<float>({5}, {1, 1});
  Tensor b = Tensor::from_vector<float>({1, 2, 3}, {3});
  Tensor y;
  binary(BinaryOp::Add, a, b, y);
  CHECK(y.shape() == Shape{1, 3});
  CHECK(values_of<float>(y) == V{6, 7, 8});
  binary(BinaryOp::Add, b, a, y);
  CHECK(y.shape() == Shape{1, 3});
}

TEST_CASE("size-1 dims broadcast on both sides", "[unit][elementwise]") {
  Tensor a = Tensor::from_vector<float>({1, 2}, {2, 1});
  Tensor b = Tensor::from_vector<float>({10, 20, 30}, {1, 3});
  Tensor y;
  binary(BinaryOp::Mul, a, b, y);
  CHECK(y.shape() == Shape{2, 3});
  CHECK(values_of<float>(y) == V{10, 20, 30, 20, 40, 60});
}

TEST_CASE("broadcast with size-0 dims gives empty outputs", "[unit][elementwise]") {
  Tensor y;
  binary(BinaryOp::Add, Tensor::empty(DType::F32, {0, 3}), Tensor::from_vector<float>({1, 2, 3}, {3}), y);
  CHECK(y.shape() == Shape{0, 3});
  CHECK(y.numel() == 0);
  binary(BinaryOp::Add, Tensor::empty(DType::F32, {2, 0}), Tensor::empty(DType::F32, {2, 1}), y);
  CHECK(y.shape() == Shape{2, 0});
  binary(BinaryOp::Add, Tensor::empty(DType::F32, {0}), Tensor::scalar<float>(1.0f), y);
  CHECK(y.shape() == Shape{0});
  require_error([&] { binary(BinaryOp::Add, Tensor::empty(DType::F32, {0}), Tensor::empty(DType::F32, {2}), y); },
                ErrorKind::Shape, {"[0]", "[2]"});
}

TEST_CASE("incompatible shapes give a shape error naming both", "[unit][elementwise]") {
  Tensor y;
  require_error([&] { binary(BinaryOp::Add, Tensor::empty(DType::F32, {2, 3}), Tensor::empty(DType::F32, {4}), y); },
                ErrorKind::Shape, {"Add", "cannot broadcast [2, 3] with [4]"});
  require_error([] { broadcast_shapes(Shape{2, 3}, Shape{4}); }, ErrorKind::Shape, {"cannot broadcast [2, 3] with [4]"});
}

TEST_CASE("broadcast_shapes follows NumPy", "[unit][elementwise]") {
  CHECK(broadcast_shapes(Shape{2, 1, 3}, Shape{4, 1}) == Shape{2, 4, 3});
  CHECK(broadcast_shapes(Shape{}, Shape{3}) == Shape{3});
  CHECK(broadcast_shapes(Shape{}, Shape{}) == Shape{});
  CHECK(broadcast_shapes(Shape{1, 0}, Shape{5, 1}) == Shape{5, 0});
}

TEST_CASE("float arithmetic ops", "[unit][elementwise]") {
  Tensor a = Tensor::from_vector<float>({2, -3, 4}, {3});
  Tensor b = Tensor::from_vector<float>({3, 2, 0.5f}, {3});
  Tensor y;
  binary(BinaryOp::Pow, a, b, y);
  CHECK(values_of<float>(y) == V{8, 9, 2});
  binary(BinaryOp::Max, a, b, y);
  CHECK(values_of<float>(y) == V{3, 2, 4});
  binary(BinaryOp::Min, a, b, y);
  CHECK(values_of<float>(y) == V{2, -3, 0.5f});
  binary(BinaryOp::Div, a, b, y);
  CHECK(values_of<float>(y) == V{2.0f / 3.0f, -1.5f, 8});
  binary(BinaryOp::Sub, a, b, y);
  CHECK(values_of<float>(y) == V{-1, -5, 3.5f});
}

TEST_CASE("Max and Min propagate NaN", "[unit][elementwise]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = Tensor::from_vector<float>({nan, 1}, {2});
  Tensor b = Tensor::from_vector<float>({0, nan}, {2});
  Tensor y;
  binary(BinaryOp::Max, a, b, y);
  CHECK(std::isnan(y.data<float>()[0]));
  CHECK(std::isnan(y.data<float>()[1]));
  binary(BinaryOp::Min, a, b, y);
  CHECK(std::isnan(y.data<float>()[0]));
}

TEST_CASE("integer arithmetic truncates division toward zero", "[unit][elementwise]") {
  Tensor a = Tensor::from_vector<I64>({7, -7, 7, -7}, {4});
  Tensor b = Tensor::from_vector<I64>({2, 2, -2, -2}, {4});
  Tensor y;
  binary(BinaryOp::Div, a, b, y);
  CHECK(y.dtype() == DType::I64);
  CHECK(values_of<I64>(y) == std::vector<I64>{3, -3, -3, 3});
  binary(BinaryOp::Add, a, Tensor::scalar<I64>(1), y);
  CHECK(values_of<I64>(y) == std::vector<I64>{8, -6, 8, -6});
  binary(BinaryOp::Max, a, b, y);
  CHECK(values_of<I64>(y) == std::vector<I64>{7, 2, 7, -2});
  Tensor c = Tensor::from_vector<std::int32_t>({3, -4}, {2});
  binary(BinaryOp::Mul, c, c, y);
  CHECK(values_of<std::int32_t>(y) == std::vector<std::int32_t>{9, 16});
  binary(BinaryOp::Sub, c, Tensor::from_vector<std::int32_t>({5}, {1}), y);
  CHECK(values_of<std::int32_t>(y) == std::vector<std::int32_t>{-2, -9});
}

TEST_CASE("integer division by zero is an input error", "[unit][elementwise]") {
  Tensor y;
  require_error([&] { binary(BinaryOp::Div, Tensor::scalar<I64>(1), Tensor::scalar<I64>(0), y); }, ErrorKind::Input,
                {"Div", "zero"});
  const I64 min = std::numeric_limits<I64>::min();
  binary(BinaryOp::Div, Tensor::scalar<I64>(min), Tensor::scalar<I64>(-1), y);
  CHECK(y.data<I64>()[0] == min);  // wraps instead of trapping
}

TEST_CASE("comparisons produce bool", "[unit][elementwise]") {
  Tensor a = Tensor::from_vector<float>({1, 2, 3}, {3});
  Tensor b = Tensor::scalar<float>(2.0f);
  Tensor y;
  binary(BinaryOp::Equal, a, b, y);
  CHECK(y.dtype() == DType::Bool);
  CHECK(values_of<bool>(y) == std::vector<bool>{false, true, false});
  binary(BinaryOp::Less, a, b, y);
  CHECK(values_of<bool>(y) == std::vector<bool>{true, false, false});
  binary(BinaryOp::Greater, a, b, y);
  CHECK(values_of<bool>(y) == std::vector<bool>{false, false, true});
  binary(BinaryOp::Less, Tensor::from_vector<I64>({1, 5}, {2, 1}), Tensor::from_vector<I64>({2, 3}, {2}), y);
  CHECK(y.shape() == Shape{2, 2});
  CHECK(values_of<bool>(y) == std::vector<bool>{true, true, false, false});
  Tensor p = Tensor::from_vector<bool>({true, false}, {2});
  binary(BinaryOp::Equal, p, Tensor::scalar<bool>(true), y);
  CHECK(values_of<bool>(y) == std::vector<bool>{true, false});
}

TEST_CASE("binary dtype errors name the op and dtype", "[unit][elementwise]") {
  Tensor y;
  require_error([&] { binary(BinaryOp::Add, Tensor::scalar<float>(1), Tensor::scalar<double>(1), y); },
                ErrorKind::Input, {"Add", "f32", "f64"});
  require_error([&] { binary(BinaryOp::Pow, Tensor::scalar<I64>(2), Tensor::scalar<I64>(2), y); }, ErrorKind::Input,
                {"Pow", "i64"});
  require_error([&] { binary(BinaryOp::Less, Tensor::scalar<bool>(true), Tensor::scalar<bool>(false), y); },
                ErrorKind::Input, {"Less", "bool"});
  require_error([&] { binary(BinaryOp::Add, Tensor::scalar<bool>(true), Tensor::scalar<bool>(false), y); },
                ErrorKind::Input, {"Add", "bool"});
}

TEST_CASE("f64 binary ops compute in double", "[unit][elementwise]") {
  Tensor a = Tensor::from_vector<double>({0.1, 1e16}, {2});
  Tensor b = Tensor::from_vector<double>({0.2, 1.0}, {2});
  Tensor y;
  binary(BinaryOp::Add, a, b, y);
  CHECK(y.dtype() == DType::F64);
  CHECK(y.data<double>()[0] == 0.1 + 0.2);
  CHECK(y.data<double>()[1] == 1e16 + 1.0);  // representable in double, not in float
  binary(BinaryOp::Pow, Tensor::scalar<double>(2.0), Tensor::scalar<double>(0.5), y);
  CHECK(y.data<double>()[0] == Approx(1.4142135623730951).epsilon(1e-15));
}

TEST_CASE("unary float ops", "[unit][elementwise]") {
  Tensor x = Tensor::from_vector<float>({-2, 0, 1, 4}, {2, 2});
  Tensor y;
  unary(UnaryOp::Neg, x, y);
  CHECK(y.shape() == Shape{2, 2});
  CHECK(values_of<float>(y) == V{2, 0, -1, -4});
  unary(UnaryOp::Abs, x, y);
  CHECK(values_of<float>(y) == V{2, 0, 1, 4});
  unary(UnaryOp::Relu, x, y);
  CHECK(values_of<float>(y) == V{0, 0, 1, 4});
  unary(UnaryOp::Sqrt, Tensor::from_vector<float>({0, 4, 9}, {3}), y);
  CHECK(values_of<float>(y) == V{0, 2, 3});
  unary(UnaryOp::Exp, Tensor::from_vector<float>({0, 1}, {2}), y);
  CHECK(y.data<float>()[0] == 1.0f);
  CHECK(y.data<float>()[1] == Approx(2.718281828));
  unary(UnaryOp::Log, Tensor::from_vector<float>({1, 2.718281828f}, {2}), y);
  CHECK(y.data<float>()[0] == 0.0f);
  CHECK(y.data<float>()[1] == Approx(1.0));
  unary(UnaryOp::Tanh, Tensor::from_vector<float>({0, 0.5f}, {2}), y);
  CHECK(y.data<float>()[1] == Approx(0.46211715726));
  unary(UnaryOp::Erf, Tensor::from_vector<float>({0.5f}, {1}), y);
  CHECK(y.data<float>()[0] == Approx(0.5204998778));
}

TEST_CASE("sigmoid is stable for large magnitudes", "[unit][elementwise]") {
  Tensor x = Tensor::from_vector<float>({-1000, -1, 0, 1, 1000}, {5});
  Tensor y;
  unary(UnaryOp::Sigmoid, x, y);
  const V v = values_of<float>(y);
  CHECK(v[0] == 0.0f);
  CHECK(v[1] == Approx(0.2689414214));
  CHECK(v[2] == 0.5f);
  CHECK(v[3] == Approx(0.7310585786));
  CHECK(v[4] == 1.0f);
}

TEST_CASE("gelu exact and tanh approximation", "[unit][elementwise]") {
  Tensor x = Tensor::from_vector<double>({-1, 0, 1, 2}, {4});
  Tensor y;
  unary(UnaryOp::Gelu, x, y);
  CHECK(y.dtype() == DType::F64);
  // 0.5 x (1 + erf(x / sqrt 2)), evaluated independently (Python math.erf).
  CHECK(y.data<double>()[0] == Approx(-0.15865525393145707).epsilon(1e-14));
  CHECK(y.data<double>()[1] == 0.0);
  CHECK(y.data<double>()[2] == Approx(0.8413447460685429).epsilon(1e-14));
  CHECK(y.data<double>()[3] == Approx(1.9544997361036416).epsilon(1e-14));
  unary(UnaryOp::GeluTanh, x, y);
  CHECK(y.data<double>()[2] == Approx(0.8411919906082768).epsilon(1e-14));
  CHECK(y.data<double>()[3] == Approx(1.954597694087775).epsilon(1e-14));
}

TEST_CASE("f32 gelu keeps its relative accuracy in the negative tail", "[unit][differential][elementwise]") {
  // Where 1 + erf(..) and 1 + tanh(..) round to 0 in f32 (x below about -5.3)
  // the outputs are still normal numbers; against the same op in double.
  std::vector<float> xs;
  for (float v = -12.0f; v <= 6.0f; v += 0.125f) xs.push_back(v);
  std::vector<double> xd(xs.begin(), xs.end());
  const auto n = static_cast<std::int64_t>(xs.size());
  for (UnaryOp op : {UnaryOp::Gelu, UnaryOp::GeluTanh}) {
    Tensor y32, y64;
    unary(op, Tensor::from_vector<float>(xs, {n}), y32);
    unary(op, Tensor::from_vector<double>(xd, {n}), y64);
    for (std::int64_t i = 0; i < n; ++i) {
      const double want = y64.data<double>()[i], got = y32.data<float>()[i];
      INFO((op == UnaryOp::Gelu ? "Gelu" : "Gelu(tanh)") << " at x = " << xs[static_cast<std::size_t>(i)]);
      if (std::fabs(want) < 1e-37) CHECK(std::fabs(got) < 1e-37);  // f32 underflows there
      else CHECK(std::fabs(got - want) <= 1e-5 * std::fabs(want));
    }
  }
  Tensor special;
  const float inf = std::numeric_limits<float>::infinity();
  for (UnaryOp op : {UnaryOp::Gelu, UnaryOp::GeluTanh}) {
    unary(op, Tensor::from_vector<float>({inf, -inf, std::nanf("")}, {3}), special);
    CHECK(special.data<float>()[0] == inf);
    CHECK(std::isnan(special.data<float>()[1]));  // -inf * 0, as the textbook formula
    CHECK(std::isnan(special.data<float>()[2]));
  }
}

TEST_CASE("integer unary ops and unsupported dtypes", "[unit][elementwise]") {
  Tensor x = Tensor::from_vector<std::int32_t>({-3, 0, 5}, {3});
  Tensor y;
  unary(UnaryOp::Neg, x, y);
  CHECK(values_of<std::int32_t>(y) == std::vector<std::int32_t>{3, 0, -5});
  unary(UnaryOp::Abs, x, y);
  CHECK(values_of<std::int32_t>(y) == std::vector<std::int32_t>{3, 0, 5});
  unary(UnaryOp::Relu, Tensor::from_vector<I64>({-3, 4}, {2}), y);
  CHECK(values_of<I64>(y) == std::vector<I64>{0, 4});
  require_error([&] { unary(UnaryOp::Exp, Tensor::scalar<I64>(1), y); }, ErrorKind::Input, {"Exp", "i64"});
  require_error([&] { unary(UnaryOp::Neg, Tensor::scalar<bool>(true), y); }, ErrorKind::Input, {"Neg", "bool"});
}

TEST_CASE("where broadcasts condition and branches", "[unit][elementwise]") {
  Tensor cond = Tensor::from_vector<bool>({true, false}, {2, 1});
  Tensor a = Tensor::from_vector<float>({1, 2, 3}, {1, 3});
  Tensor b = Tensor::scalar<float>(-1.0f);
  Tensor y;
  where(cond, a, b, y);
  CHECK(y.shape() == Shape{2, 3});
  CHECK(values_of<float>(y) == V{1, 2, 3, -1, -1, -1});
  where(Tensor::scalar<bool>(false), Tensor::from_vector<I64>({1, 2}, {2}), Tensor::scalar<I64>(7), y);
  CHECK(values_of<I64>(y) == std::vector<I64>{7, 7});
  require_error([&] { where(Tensor::scalar<float>(1), a, b, y); }, ErrorKind::Input, {"Where", "bool"});
  require_error([&] { where(cond, a, Tensor::scalar<double>(1), y); }, ErrorKind::Input, {"Where"});
  require_error([&] { where(cond, Tensor::empty(DType::F32, {3, 3}), b, y); }, ErrorKind::Shape, {"[2, 1]", "[3, 3]"});
}

TEST_CASE("clip with optional bounds", "[unit][elementwise]") {
  Tensor x = Tensor::from_vector<float>({-5, 0.5f, 5}, {3});
  Tensor lo = Tensor::scalar<float>(-1.0f);
  Tensor hi = Tensor::scalar<float>(1.0f);
  Tensor y;
  clip(x, &lo, &hi, y);
  CHECK(values_of<float>(y) == V{-1, 0.5f, 1});
  clip(x, nullptr, &hi, y);
  CHECK(values_of<float>(y) == V{-5, 0.5f, 1});
  clip(x, &lo, nullptr, y);
  CHECK(values_of<float>(y) == V{-1, 0.5f, 5});
  Tensor lo_i = Tensor::scalar<I64>(0);
  clip(Tensor::from_vector<I64>({-2, 3}, {2}), &lo_i, nullptr, y);
  CHECK(values_of<I64>(y) == std::vector<I64>{0, 3});
  require_error([&] { clip(x, &lo_i, nullptr, y); }, ErrorKind::Input, {"Clip", "min"});
  require_error([&] { clip(Tensor::scalar<bool>(true), nullptr, nullptr, y); }, ErrorKind::Input, {"Clip", "bool"});
}

TEST_CASE("outputs reuse their buffer across resets", "[unit][elementwise]") {
  Tensor a = Tensor::from_vector<float>(V(16, 1.0f), {16});
  Tensor b = Tensor::from_vector<float>(V(16, 2.0f), {16});
  Tensor y;
  binary(BinaryOp::Add, a, b, y);
  const void* first = y.raw();
  binary(BinaryOp::Add, a, b, y);
  CHECK(y.raw() == first);
  unary(UnaryOp::Neg, a, y);
  CHECK(y.raw() == first);
  CHECK(values_of<float>(y) == V(16, -1.0f));
}

TEST_CASE("output may alias an input", "[unit][elementwise]") {
  Tensor a = Tensor::from_vector<float>({1, 2}, {2, 1});
  Tensor b = Tensor::from_vector<float>({10, 20}, {2});
  binary(BinaryOp::Add, a, b, a);
  CHECK(a.shape() == Shape{2, 2});
  CHECK(values_of<float>(a) == V{11, 21, 12, 22});
  unary(UnaryOp::Neg, a, a);
  CHECK(values_of<float>(a) == V{-11, -21, -12, -22});
}

TEST_CASE("vectorised rows agree with an element-by-element walk, NaN included", "[unit][elementwise]") {
  // x [2, 3, 4, 37]: rows longer than any vector width with a remainder; a
  // NaN and signed values in every row.
  const Shape shape{2, 3, 4, 37};
  Tensor x = Tensor::empty(DType::F32, shape);
  for (I64 i = 0; i < x.numel(); ++i)
    x.data<float>()[i] = i % 11 == 0 ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>((i * 7) % 23) - 11.0f;
  const auto same = [](float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; };
  Tensor relu;
  unary(UnaryOp::Relu, x, relu);
  for (I64 i = 0; i < x.numel(); ++i) {
    const float v = x.data<float>()[i];
    CHECK(same(relu.data<float>()[i], v < 0 ? 0.0f : v));
  }
  // Per-channel [3, 1, 1] (steps 0 along a row), a last-dim vector [37]
  // (steps 1) and a strided transpose-like [2, 1, 4, 1] operand.
  const Tensor channel = Tensor::from_vector<float>({0.5f, -2.0f, 3.0f}, {3, 1, 1});
  Tensor lane = Tensor::empty(DType::F32, {37});
  for (I64 i = 0; i < 37; ++i) lane.data<float>()[i] = static_cast<float>(i) - 18.0f;
  const Tensor plane = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 1, 4, 1});
  for (const Tensor* other : std::vector<const Tensor*>{&channel, &lane, &plane}) {
    for (BinaryOp op : {BinaryOp::Add, BinaryOp::Mul, BinaryOp::Max}) {
      Tensor y;
      binary(op, x, *other, y);
      REQUIRE(y.shape() == shape);
      const Shape& os = other->shape();
      for (I64 i = 0; i < x.numel(); ++i) {
        // The other operand's element under NumPy broadcasting.
        I64 rest = i, at = 0, stride = 1;
        for (std::size_t d = shape.size(); d-- > 0;) {
          const I64 idx = rest % shape[d];
          rest /= shape[d];
          const std::size_t od = d + os.size() - shape.size();
          if (d + os.size() >= shape.size() && os[od] != 1) at += idx * stride;
          if (d + os.size() >= shape.size()) stride *= os[od];
        }
        const float a = x.data<float>()[i], b = other->data<float>()[at];
        const float want = op == BinaryOp::Add ? a + b
                           : op == BinaryOp::Mul ? a * b
                           : std::isnan(a) || std::isnan(b) ? std::numeric_limits<float>::quiet_NaN()
                                                            : std::max(a, b);
        INFO("op " << static_cast<int>(op) << " element " << i);
        CHECK(same(y.data<float>()[i], want));
      }
    }
  }
}
