// Tests of the unary elementwise ops of runtime/core/unary_ops.def through
// the reference kernel: hand-computed values of the trigonometric and
// activation rows in f32 and f64, NaN through every row, the dtypes each
// row's domain admits, and in-place calls.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "canary/error.h"
#include "canary/tensor.h"
#include "kernels/reference.h"
#include "tests/kernels/tensor_checks.h"

using namespace canary;
using namespace canary::kernels;
using canary::test::check_values;
using canary::test::require_error;
using canary::test::values_of;

namespace {

struct Row {
  UnaryOp op;
  bool numeric;   // the table's domain: every numeric dtype
  UnaryParams defaults;
};

// Every row of the table, with its domain and default attributes.
const std::vector<Row>& table_rows() {
  static const std::vector<Row> rows = {
#define CANARY_UNARY_OP(o, domain, attr0, default0, attr1, default1) \
  {UnaryOp::o, std::string(#domain) == "Numeric", {default0, default1}},
#include "runtime/core/unary_ops.def"
#undef CANARY_UNARY_OP
  };
  return rows;
}

// op(x) in f64 and in f32, both against `want` (f32 within a relative 1e-6).
void check_both(UnaryOp op, const std::vector<double>& x, const std::vector<double>& want, UnaryParams p = {}) {
  INFO(unary_op_name(op));
  const auto n = static_cast<std::int64_t>(x.size());
  Tensor y;
  unary(op, Tensor::from_vector<double>(x, {n}), y, p);
  CHECK(y.dtype() == DType::F64);
  check_values(y, {n}, want, 1e-12);
  unary(op, Tensor::from_vector<float>(std::vector<float>(x.begin(), x.end()), {n}), y, p);
  CHECK(y.dtype() == DType::F32);
  check_values(y, {n}, want, 1e-6);
}

}  // namespace

TEST_CASE("trigonometric and hyperbolic ops against hand-computed values", "[unit][unary_table]") {
  using std::numbers::pi;
  check_both(UnaryOp::Sin, {0, pi / 2, -pi / 6}, {0, 1, -0.5});
  check_both(UnaryOp::Cos, {0, pi / 3, pi}, {1, 0.5, -1});
  check_both(UnaryOp::Tan, {0, pi / 4, -pi / 4}, {0, 1, -1});
  check_both(UnaryOp::Asin, {0, 1, -0.5}, {0, pi / 2, -pi / 6});
  check_both(UnaryOp::Acos, {1, 0.5, -1}, {0, pi / 3, pi});
  check_both(UnaryOp::Atan, {0, 1, -1}, {0, pi / 4, -pi / 4});
  check_both(UnaryOp::Sinh, {0, 1}, {0, 1.1752011936438014});
  check_both(UnaryOp::Cosh, {0, 1}, {1, 1.5430806348152437});
  check_both(UnaryOp::Asinh, {0, 1}, {0, 0.88137358701954305});
  check_both(UnaryOp::Acosh, {1, 2}, {0, 1.3169578969248166});
  check_both(UnaryOp::Atanh, {0, 0.5}, {0, 0.54930614433405489});
}

TEST_CASE("activation rows with their attributes", "[unit][unary_table]") {
  check_both(UnaryOp::Softsign, {-3, 0, 1}, {-0.75, 0, 0.5});
  check_both(UnaryOp::HardSwish, {-4, -3, 0, 1, 3, 5}, {0, 0, 0, 1.0 * (1.0 / 6 + 0.5), 3, 5});
  // Elu and Celu: alpha (e^(x / alpha) - 1) below 0 (Elu: e^x), x above.
  check_both(UnaryOp::Elu, {-1, 0, 2}, {2 * (std::exp(-1.0) - 1), 0, 2}, {2.0});
  check_both(UnaryOp::Celu, {-1, 0, 2}, {2 * (std::exp(-0.5) - 1), 0, 2}, {2.0});
  const double a = 1.67326319217681884765625, g = 1.05070102214813232421875;
  check_both(UnaryOp::Selu, {-1, 0, 2}, {g * a * (std::exp(-1.0) - 1), 0, 2 * g}, {a, g});
  check_both(UnaryOp::ThresholdedRelu, {0.5, 1, 2, -3}, {0, 0, 2, 0}, {1.0});
  // Shrink: alpha is bias, beta is lambd.
  check_both(UnaryOp::Shrink, {-2, -1, 0, 1, 2}, {-1.5, 0, 0, 0, 1.5}, {0.5, 1.0});
  check_both(UnaryOp::LeakyRelu, {-2, 3}, {-0.2, 3}, {0.1});
  check_both(UnaryOp::HardSigmoid, {-5, 0, 1, 5}, {0, 0.5, 0.7, 1}, {0.2, 0.5});
}

TEST_CASE("the table's default attributes are ONNX's", "[unit][unary_table]") {
  // The operator documentation's defaults (Selu's as float32 values).
  const std::vector<std::pair<UnaryOp, UnaryParams>> onnx = {
      {UnaryOp::LeakyRelu, {0.01, 0}},   {UnaryOp::HardSigmoid, {0.2, 0.5}},  {UnaryOp::Elu, {1.0, 0}},
      {UnaryOp::Celu, {1.0, 0}},         {UnaryOp::ThresholdedRelu, {1.0, 0}}, {UnaryOp::Shrink, {0.0, 0.5}},
      {UnaryOp::Selu, {1.67326319217681884765625, 1.05070102214813232421875}}};
  for (const Row& r : table_rows()) {
    INFO(unary_op_name(r.op));
    UnaryParams want;
    for (const auto& [op, p] : onnx)
      if (op == r.op) want = p;
    CHECK(r.defaults.alpha == want.alpha);
    CHECK(r.defaults.beta == want.beta);
  }
}

TEST_CASE("NaN stays NaN through every row but HardSigmoid, ThresholdedRelu and Shrink", "[unit][unary_table]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const Row& r : table_rows()) {
    INFO(unary_op_name(r.op));
    Tensor y;
    unary(r.op, Tensor::from_vector<double>({nan, nan}, {2}), y, r.defaults);
    const std::vector<double> got = values_of<double>(y);
    // HardSigmoid's fmax/fmin clamp (shared with the fused kernels) gives its
    // upper bound; ThresholdedRelu and Shrink give 0, as ONNX defines them.
    if (r.op == UnaryOp::HardSigmoid) CHECK(got[0] == 1.0);
    else if (r.op == UnaryOp::ThresholdedRelu || r.op == UnaryOp::Shrink) CHECK(got[0] == 0.0);
    else CHECK(std::isnan(got[0]));
  }
}

TEST_CASE("each row takes the dtypes of its domain and names itself when refusing one", "[unit][unary_table]") {
  for (const Row& r : table_rows()) {
    const std::string name = unary_op_name(r.op);
    INFO(name);
    Tensor y;
    const Tensor ints = Tensor::from_vector<std::int64_t>({-3, 0, 4}, {3});
    if (r.numeric) {
      unary(r.op, ints, y, r.defaults);
      CHECK(y.dtype() == DType::I64);
    } else {
      require_error([&] { unary(r.op, ints, y, r.defaults); }, ErrorKind::Input, {name, "i64"});
    }
    require_error([&] { unary(r.op, Tensor::from_vector<bool>({true}, {1}), y, r.defaults); }, ErrorKind::Input,
                  {name});
  }
}

TEST_CASE("integer Neg and Abs wrap at the most negative value", "[unit][unary_table]") {
  const std::int64_t lowest = std::numeric_limits<std::int64_t>::lowest();
  Tensor y;
  unary(UnaryOp::Neg, Tensor::from_vector<std::int64_t>({lowest, -5, 7}, {3}), y);
  CHECK(values_of<std::int64_t>(y) == std::vector<std::int64_t>{lowest, 5, -7});
  unary(UnaryOp::Abs, Tensor::from_vector<std::int64_t>({lowest, -5, 7}, {3}), y);
  CHECK(values_of<std::int64_t>(y) == std::vector<std::int64_t>{lowest, 5, 7});
  unary(UnaryOp::Sign, Tensor::from_vector<std::int64_t>({-9, 0, 3}, {3}), y);
  CHECK(values_of<std::int64_t>(y) == std::vector<std::int64_t>{-1, 0, 1});
}

TEST_CASE("a unary op may write over its input", "[unit][unary_table]") {
  Tensor x = Tensor::from_vector<float>({0.0f, 1.0f, -1.0f}, {3});
  unary(UnaryOp::Cos, x, x);
  check_values(x, {3}, {1.0, std::cos(1.0), std::cos(-1.0)}, 1e-6);
  unary(UnaryOp::Neg, x, x);
  check_values(x, {3}, {-1.0, -std::cos(1.0), -std::cos(-1.0)}, 1e-6);
}
