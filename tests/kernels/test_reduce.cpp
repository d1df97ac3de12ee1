// Tests of the reference reductions, softmax and layer normalisation.
#include <catch2/catch.hpp>

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

using V = std::vector<float>;

// A [2, 3] f32 tensor holding 1..6.
static Tensor one_to_six() { return Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}); }

TEST_CASE("reduce sum over one axis with and without keepdims", "[unit][reduce]") {
  Tensor y;
  reduce({ReduceOp::Sum, {1}, true, false}, one_to_six(), y);
  CHECK(y.shape() == Shape{2, 1});
  CHECK(values_of<float>(y) == V{6, 15});
  reduce({ReduceOp::Sum, {0}, false, false}, one_to_six(), y);
  CHECK(y.shape() == Shape{3});
  CHECK(values_of<float>(y) == V{5, 7, 9});
}

TEST_CASE("reduce accepts negative axes and several axes", "[unit][reduce]") {
  Tensor y;
  reduce({ReduceOp::Mean, {-1}, false, false}, one_to_six(), y);
  CHECK(values_of<float>(y) == V{2, 5});
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  reduce({ReduceOp::Sum, {0, -1}, true, false}, x, y);
  CHECK(y.shape() == Shape{1, 2, 1});
  CHECK(values_of<float>(y) == V{1 + 2 + 5 + 6, 3 + 4 + 7 + 8});
  reduce({ReduceOp::Max, {2, 0}, false, false}, x, y);
  CHECK(values_of<float>(y) == V{6, 8});
}

TEST_CASE("reduce with empty axes reduces everything or is a no-op", "[unit][reduce]") {
  Tensor y;
  reduce({ReduceOp::Sum, {}, true, false}, one_to_six(), y);
  CHECK(y.shape() == Shape{1, 1});
  CHECK(values_of<float>(y) == V{21});
  reduce({ReduceOp::Max, {}, false, false}, one_to_six(), y);
  CHECK(y.rank() == 0);
  CHECK(values_of<float>(y) == V{6});
  Tensor x = one_to_six();
  reduce({ReduceOp::Sum, {}, true, true}, x, y);
  CHECK(y.shape() == Shape{2, 3});
  CHECK(values_of<float>(y) == V{1, 2, 3, 4, 5, 6});
}

TEST_CASE("reduce rejects bad axes", "[unit][reduce]") {
  Tensor y;
  require_error([&] { reduce({ReduceOp::Sum, {2}, true, false}, one_to_six(), y); }, ErrorKind::Shape,
                {"ReduceSum", "axis 2", "[2, 3]"});
  require_error([&] { reduce({ReduceOp::Sum, {-3}, true, false}, one_to_six(), y); }, ErrorKind::Shape, {"axis -3"});
  require_error([&] { reduce({ReduceOp::Mean, {1, -1}, true, false}, one_to_six(), y); }, ErrorKind::Shape,
                {"ReduceMean", "twice"});
}

TEST_CASE("reduce over empty dims", "[unit][reduce]") {
  Tensor x = Tensor::empty(DType::F32, {2, 0});
  Tensor y;
  reduce({ReduceOp::Sum, {1}, false, false}, x, y);
  CHECK(values_of<float>(y) == V{0, 0});
  reduce({ReduceOp::Mean, {1}, false, false}, x, y);
  CHECK(std::isnan(y.data<float>()[0]));  // 0 / 0
  reduce({ReduceOp::Max, {1}, false, false}, x, y);  // ONNX: the max of nothing is -Inf
  CHECK(values_of<float>(y) == V{-INFINITY, -INFINITY});
  reduce({ReduceOp::Max, {1}, false, false}, Tensor::empty(DType::F32, {0, 3}), y);  // empty output is fine
  CHECK(y.shape() == Shape{0});
}

TEST_CASE("reduce on integers, NaN and dtype errors", "[unit][reduce]") {
  Tensor y;
  reduce({ReduceOp::Sum, {0}, false, false}, Tensor::from_vector<std::int64_t>({1, -5, 10, 7}, {2, 2}), y);
  CHECK(values_of<std::int64_t>(y) == std::vector<std::int64_t>{11, 2});
  reduce({ReduceOp::Max, {0}, false, false}, Tensor::from_vector<std::int32_t>({-4, -9}, {2}), y);
  CHECK(values_of<std::int32_t>(y) == std::vector<std::int32_t>{-4});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  reduce({ReduceOp::Max, {0}, false, false}, Tensor::from_vector<float>({1, nan, 3}, {3}), y);
  CHECK(std::isnan(y.data<float>()[0]));
  require_error([&] { reduce({ReduceOp::Sum, {0}, false, false}, Tensor::from_vector<bool>({true}, {1}), y); },
                ErrorKind::Input, {"ReduceSum", "bool"});
}

TEST_CASE("reduce sums f32 in double precision", "[unit][reduce]") {
  // 1e8 followed by ten 1s: a float accumulator would stay at 1e8.
  std::vector<float> v(11, 1.0f);
  v[0] = 1e8f;
  Tensor y;
  reduce({ReduceOp::Sum, {0}, false, false}, Tensor::from_vector<float>(v, {11}), y);
  CHECK(y.data<float>()[0] == 100000010.0f);
  reduce({ReduceOp::Mean, {0}, false, false}, Tensor::from_vector<double>({0.1, 0.2, 0.3}, {3}), y);
  CHECK(y.dtype() == DType::F64);
  CHECK(y.data<double>()[0] == Approx(0.2).epsilon(1e-15));
}

TEST_CASE("softmax along the last axis", "[unit][reduce]") {
  Tensor y;
  softmax(-1, Tensor::from_vector<float>({1, 2, 3, 1000, 1000, 1000}, {2, 3}), y);
  const V v = values_of<float>(y);
  CHECK(v[0] == Approx(0.09003057317038046));
  CHECK(v[1] == Approx(0.24472847105479767));
  CHECK(v[2] == Approx(0.6652409557748219));
  CHECK(v[3] == Approx(1.0 / 3.0));  // stable: no overflow at 1000
  CHECK(v[5] == Approx(1.0 / 3.0));
}

TEST_CASE("log-softmax is x - max - log(sum(exp(x - max))), stable for large inputs", "[unit][reduce]") {
  Tensor y;
  log_softmax(-1, Tensor::from_vector<float>({1, 2, 3, 1000, 1000, 1000}, {2, 3}), y);
  const double lse = std::log(std::exp(-2.0) + std::exp(-1.0) + 1.0);
  CHECK(y.data<float>()[0] == Approx(-2.0 - lse).epsilon(1e-6));
  CHECK(y.data<float>()[2] == Approx(-lse).epsilon(1e-6));
  CHECK(y.data<float>()[4] == Approx(-std::log(3.0)).epsilon(1e-6));
  // Along a leading axis, in f64; a row of -inf is NaN throughout, as Softmax's.
  log_softmax(0, Tensor::from_vector<double>({0, -INFINITY, std::log(3.0), -INFINITY}, {2, 2}), y);
  CHECK(y.data<double>()[0] == Approx(std::log(0.25)).epsilon(1e-12));
  CHECK(y.data<double>()[2] == Approx(std::log(0.75)).epsilon(1e-12));
  CHECK(std::isnan(y.data<double>()[1]));
  CHECK(std::isnan(y.data<double>()[3]));
  require_error([&] { log_softmax(2, Tensor::empty(DType::F32, {2, 2}), y); }, ErrorKind::Shape,
                {"LogSoftmax", "[2, 2]"});
}

TEST_CASE("ArgMax and ArgMin: ties, select_last_index, NaN, keepdims, i64 and the empty axis", "[unit][reduce]") {
  const Tensor x = Tensor::from_vector<float>({1, 5, 5, 0,  //
                                              2, -1, 7, -1, //
                                              3, NAN, 0, NAN},
                                             {3, 4});
  Tensor y;
  ArgReduceParams p;
  p.axis = 1;
  arg_reduce(p, x, y);
  CHECK(y.dtype() == DType::I64);
  CHECK(y.shape() == Shape{3, 1});
  CHECK(values_of<std::int64_t>(y) == std::vector<std::int64_t>{1, 2, 1});  // first tie; first NaN
  p.select_last_index = true;
  arg_reduce(p, x, y);
  CHECK(values_of<std::int64_t>(y) == std::vector<std::int64_t>{2, 2, 3});  // last tie; last NaN
  p.max = false;
  p.select_last_index = false;
  p.keepdims = false;
  arg_reduce(p, x, y);
  CHECK(y.shape() == Shape{3});
  CHECK(values_of<std::int64_t>(y) == std::vector<std::int64_t>{3, 1, 1});  // a NaN wins ArgMin too
  p.select_last_index = true;
  arg_reduce(p, x, y);
  CHECK(values_of<std::int64_t>(y) == std::vector<std::int64_t>{3, 3, 3});
  // Along axis 0 (negative form), on integers.
  ArgReduceParams q;
  q.axis = -2;
  arg_reduce(q, Tensor::from_vector<std::int64_t>({4, 1, 9, 1, 4, 2}, {3, 2}), y);
  CHECK(y.shape() == Shape{1, 2});
  CHECK(values_of<std::int64_t>(y) == std::vector<std::int64_t>{1, 2});
  require_error([&] { arg_reduce(q, Tensor::empty(DType::F32, {0, 2}), y); }, ErrorKind::Shape,
                {"ArgMax", "empty axis", "[0, 2]"});
  q.axis = 2;
  require_error([&] { arg_reduce(q, Tensor::empty(DType::F32, {3, 2}), y); }, ErrorKind::Shape, {"ArgMax"});
}

TEST_CASE("softmax along a leading axis in f64", "[unit][reduce]") {
  Tensor y;
  softmax(0, Tensor::from_vector<double>({1, 5, 2, 5, 3, 5}, {3, 2}), y);
  CHECK(y.dtype() == DType::F64);
  const std::vector<double> v = values_of<double>(y);
  CHECK(v[0] == Approx(0.09003057317038046).epsilon(1e-14));
  CHECK(v[2] == Approx(0.24472847105479767).epsilon(1e-14));
  CHECK(v[4] == Approx(0.6652409557748219).epsilon(1e-14));
  CHECK(v[1] == Approx(1.0 / 3.0).epsilon(1e-14));
  require_error([&] { softmax(2, Tensor::empty(DType::F32, {2, 2}), y); }, ErrorKind::Shape, {"Softmax", "[2, 2]"});
  require_error([&] { softmax(0, Tensor::empty(DType::I64, {2}), y); }, ErrorKind::Input, {"Softmax", "i64"});
}

TEST_CASE("layer norm over the last axis with scale, bias and statistics", "[unit][reduce]") {
  Tensor x = Tensor::from_vector<float>({1, 3, 2, 6}, {2, 2});
  Tensor scale = Tensor::from_vector<float>({2, 0.5f}, {2});
  Tensor bias = Tensor::from_vector<float>({1, -1}, {2});
  Tensor y, mean, inv_std;
  layer_norm({-1, 0.0}, x, scale, &bias, y, &mean, &inv_std);
  // Row [1, 3]: mean 2, variance 1. Row [2, 6]: mean 4, variance 4.
  CHECK(values_of<float>(y) == V{-2 + 1, 0.5f - 1, -2 + 1, 0.5f - 1});
  CHECK(mean.shape() == Shape{2, 1});
  CHECK(values_of<float>(mean) == V{2, 4});
  CHECK(values_of<float>(inv_std) == V{1, 0.5f});
}

TEST_CASE("layer norm with epsilon, leading axis and broadcast scale", "[unit][reduce]") {
  Tensor x = Tensor::from_vector<double>({1, 3, 2, 6}, {2, 2, 1});
  Tensor scale = Tensor::scalar<double>(1.0);
  Tensor y, mean, inv_std;
  layer_norm({-2, 1e-5}, x, scale, nullptr, y, &mean, &inv_std);
  CHECK(mean.shape() == Shape{2, 1, 1});
  CHECK(inv_std.data<double>()[0] == Approx(0.9999950000374997).epsilon(1e-14));
  CHECK(inv_std.data<double>()[1] == Approx(0.49999937500117186).epsilon(1e-14));
  CHECK(y.data<double>()[0] == Approx(-0.9999950000374997).epsilon(1e-14));
  CHECK(y.data<double>()[3] == Approx(2 * 0.49999937500117186).epsilon(1e-14));
  layer_norm({0, 0.0}, x, scale, nullptr, y, &mean, nullptr);
  CHECK(mean.shape() == Shape{1, 1, 1});
  CHECK(mean.data<double>()[0] == 3.0);
}

TEST_CASE("layer norm rejects mismatched scale and bad axis", "[unit][reduce]") {
  Tensor x = Tensor::empty(DType::F32, {2, 3});
  Tensor y;
  Tensor bad = Tensor::empty(DType::F32, {2});
  require_error([&] { layer_norm({-1, 1e-5}, x, bad, nullptr, y, nullptr, nullptr); }, ErrorKind::Shape,
                {"scale", "[2]", "[3]"});
  require_error([&] { layer_norm({2, 1e-5}, x, Tensor::empty(DType::F32, {3}), nullptr, y, nullptr, nullptr); },
                ErrorKind::Shape, {"axis 2"});
  require_error([&] { layer_norm({-1, 1e-5}, x, Tensor::empty(DType::F64, {3}), nullptr, y, nullptr, nullptr); },
                ErrorKind::Input, {"LayerNormalization"});
}

TEST_CASE("reductions over one run of dims sum in the same order as a per-element walk, bit for bit",
          "[unit][reduce]") {
  // The reference walks [outer, reduced, inner] row by row when the reduced
  // dims are contiguous (ignoring size-1 dims); each output still takes its
  // terms in ascending order, so the double sums match a naive loop exactly.
  const Shape shape{3, 1, 4, 5, 6};
  std::vector<double> values(3 * 4 * 5 * 6);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<double>(i) * 1.7) * 1e3 + 0.1;
  const Tensor x = Tensor::from_vector<double>(values, shape);
  const std::vector<std::vector<std::int64_t>> axes_sets = {{2}, {2, 3}, {3, 4}, {0}, {1, 2}, {0, 2}, {2, 4}};
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max}) {
    for (const auto& axes : axes_sets) {
      INFO("axes " << shape_to_string(axes));
      std::vector<bool> reduced(shape.size(), false);
      for (std::int64_t a : axes) reduced[static_cast<std::size_t>(a)] = true;
      // Naive: every element in index order into its output slot.
      Shape kept;
      for (std::size_t d = 0; d < shape.size(); ++d) kept.push_back(reduced[d] ? 1 : shape[d]);
      const double init = op == ReduceOp::Max ? -std::numeric_limits<double>::infinity() : 0.0;
      std::vector<double> want(static_cast<std::size_t>(checked_numel(kept)), init);
      std::vector<std::int64_t> at(shape.size(), 0);
      for (std::size_t i = 0; i < values.size(); ++i) {
        std::int64_t slot = 0;
        for (std::size_t d = 0; d < shape.size(); ++d) slot = slot * kept[d] + (reduced[d] ? 0 : at[d]);
        double& s = want[static_cast<std::size_t>(slot)];
        s = op == ReduceOp::Max ? std::max(s, values[i]) : s + values[i];
        for (std::size_t d = shape.size(); d-- > 0;) {
          if (++at[d] < shape[d]) break;
          at[d] = 0;
        }
      }
      Tensor y;
      reduce({op, axes, true, false}, x, y);
      CHECK(values_of<double>(y) == want);
    }
  }
}
