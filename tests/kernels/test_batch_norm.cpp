// Tests of the reference BatchNormalization kernel (inference form): per-channel
// values computed by hand, epsilon, ranks 2 and 3, and input validation.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"
#include "tests/kernels/tensor_checks.h"

using canary::DType;
using canary::ErrorKind;
using canary::Shape;
using canary::Tensor;
using canary::test::check_values;
using canary::test::make;
using canary::test::require_error;
namespace k = canary::kernels;

namespace {

// Per-channel statistics of two channels, in one dtype.
struct Channels {
  Tensor scale, bias, mean, var;
};

// Channel 0: y = 3 (x - 1) / 2 + 1; channel 1: y = 0.5 (x - 4) / 1 - 1 (with epsilon 0).
Channels two_channels(DType dt) {
  return {make(dt, {3, 0.5}, {2}), make(dt, {1, -1}, {2}), make(dt, {1, 4}, {2}), make(dt, {4, 1}, {2})};
}

}  // namespace

TEST_CASE("batch norm applies each channel's statistics", "[unit][batch_norm]") {
  const DType dt = GENERATE(DType::F32, DType::F64);
  const Channels c = two_channels(dt);
  // x [N=2, C=2, L=2]: n0 c0 {1, 3}, n0 c1 {4, 6}, n1 c0 {-1, 0}, n1 c1 {2, 8}.
  const Tensor x = make(dt, {1, 3, 4, 6, -1, 0, 2, 8}, {2, 2, 2});
  k::BatchNormParams p;
  p.epsilon = 0;
  Tensor y;
  k::batch_norm(p, x, c.scale, c.bias, c.mean, c.var, y);
  CHECK(y.dtype() == dt);
  check_values(y, {2, 2, 2}, {1, 4, -1, 0, -2, -0.5, -2, 1});
}

TEST_CASE("batch norm over [N, C] and the default epsilon", "[unit][batch_norm]") {
  const Channels c = two_channels(DType::F64);
  const Tensor x = make(DType::F64, {3, 5, 1, 4}, {2, 2});
  k::BatchNormParams p;
  CHECK(p.epsilon == 1e-5);
  Tensor y;
  k::batch_norm(p, x, c.scale, c.bias, c.mean, c.var, y);
  // y = scale (x - mean) / sqrt(var + 1e-5) + bias, channel by channel.
  const double s0 = 3 / std::sqrt(4 + 1e-5), s1 = 0.5 / std::sqrt(1 + 1e-5);
  check_values(y, {2, 2}, {s0 * 2 + 1, s1 * 1 - 1, s0 * 0 + 1, s1 * 0 - 1}, 1e-12);
  // Zero variance is finite thanks to epsilon.
  const Tensor zero_var = make(DType::F64, {0, 0}, {2});
  k::batch_norm(p, x, c.scale, c.bias, c.mean, zero_var, y);
  check_values(y, {2, 2}, {3 * 2 / std::sqrt(1e-5) + 1, 0.5 / std::sqrt(1e-5) - 1, 1, -1}, 1e-6);
}

TEST_CASE("batch norm rejects channel mismatches, dtypes and rank 1", "[unit][batch_norm]") {
  const Channels c = two_channels(DType::F64);
  const k::BatchNormParams p;
  Tensor y;
  const Tensor x3 = make(DType::F64, {1, 2, 3, 4, 5, 6}, {1, 3, 2});
  require_error([&] { k::batch_norm(p, x3, c.scale, c.bias, c.mean, c.var, y); }, ErrorKind::Shape,
                {"BatchNormalization", "'scale'", "[3]", "[2]"});
  const Tensor x = make(DType::F64, {1, 2}, {1, 2});
  const Tensor var32 = make(DType::F32, {1, 1}, {2});
  require_error([&] { k::batch_norm(p, x, c.scale, c.bias, c.mean, var32, y); }, ErrorKind::Input,
                {"'input_var'", "f64", "f32"});
  require_error([&] { k::batch_norm(p, make(DType::F64, {1, 2}, {2}), c.scale, c.bias, c.mean, c.var, y); },
                ErrorKind::Shape, {"rank >= 2"});
  const Tensor xi = Tensor::from_vector<std::int64_t>({1, 2}, {1, 2});
  require_error([&] { k::batch_norm(p, xi, c.scale, c.bias, c.mean, c.var, y); }, ErrorKind::Input, {"i64"});
}
