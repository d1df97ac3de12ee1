// Tests of the reference RNN kernel: exact Relu cases worked out by hand
// (W and R orientation, both biases, initial_h, sequence_lens, reverse,
// bidirectional, both layouts), scalar oracles for Tanh, Sigmoid and clip,
// f32 against f64, and the errors of bad input.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"
#include "tests/kernels/tensor_checks.h"

using canary::DType;
using canary::ErrorKind;
using canary::Shape;
using canary::Tensor;
using canary::test::check_close;
using canary::test::make;
using canary::test::require_error;
using canary::test::values;
using canary::test::wave;
namespace k = canary::kernels;

namespace {

// The two outputs of one RNN call.
struct RnnResult {
  Tensor y, y_h;
};

// Optional inputs of one RNN call.
struct RnnExtras {
  const Tensor* b = nullptr;
  const Tensor* lens = nullptr;
  const Tensor* h0 = nullptr;
};

// Runs the kernel with both outputs requested.
RnnResult run(const k::RnnParams& p, const Tensor& x, const Tensor& w, const Tensor& r, const RnnExtras& e = {}) {
  RnnResult out;
  k::rnn(p, x, w, r, e.b, e.lens, e.h0, &out.y, &out.y_h);
  return out;
}

// Params for hidden size h, the direction and one activation per direction.
k::RnnParams params(std::int64_t h, k::RnnDirection dir = k::RnnDirection::Forward,
                    std::vector<k::RnnActivation> acts = {k::RnnActivation::Relu}) {
  k::RnnParams p;
  p.hidden_size = h;
  p.direction = dir;
  p.activations = std::move(acts);
  return p;
}

// The one-unit case: W = 0.5, R = 2, Wb = 0.25, Rb = -0.5, so that with Relu
// every step is exact in binary. x is [T=3, B=2, I=1]: entry 0 reads
// {1, 2, -3}, entry 1 reads {4, 9, 9}.
const std::vector<double> kX{1, 4, 2, 9, -3, 9};
const Tensor kW = make<double>({0.5}, {1, 1, 1});
const Tensor kR = make<double>({2.0}, {1, 1, 1});
const Tensor kB = make<double>({0.25, -0.5}, {1, 2});

// Logistic sigmoid written out for the oracle.
double sig(double v) { return 1.0 / (1.0 + std::exp(-v)); }

}  // namespace

TEST_CASE("rnn Relu forward with bias and initial_h matches the hand-computed steps", "[unit][rnn]") {
  // h0 = 0.5: 0.5*1 + 2*0.5 - 0.25 = 1.25; 0.5*2 + 2*1.25 - 0.25 = 3.25; -1.5 + 6.5 - 0.25 = 4.75.
  const Tensor x = make<double>({1, 2, -3}, {3, 1, 1}), h0 = make<double>({0.5}, {1, 1, 1});
  const RnnResult out = run(params(1), x, kW, kR, {.b = &kB, .h0 = &h0});
  CHECK(out.y.shape() == Shape{3, 1, 1, 1});
  CHECK(out.y_h.shape() == Shape{1, 1, 1});
  check_close(values(out.y), {1.25, 3.25, 4.75}, 0);
  check_close(values(out.y_h), {4.75}, 0);
}

TEST_CASE("rnn multiplies x by W's rows and h by R's rows and adds both biases", "[unit][rnn]") {
  // W = [[1, 0], [0.5, 1]], R = [[0, 2], [1, 0]], Wb = [0.5, 0], Rb = [0, -0.5]; x0 = [1, 2], x1 = [2, 0].
  // t0: W x0 + b = [1.5, 2]; t1: W x1 + R [1.5, 2] + b = [2 + 4 + 0.5, 1 + 1.5 - 0.5] = [6.5, 2].
  // Transposing either matrix would give [2, ...] at t0 or [.., 3] at t1.
  const Tensor x = make<double>({1, 2, 2, 0}, {2, 1, 2});
  const Tensor w = make<double>({1, 0, 0.5, 1}, {1, 2, 2}), r = make<double>({0, 2, 1, 0}, {1, 2, 2});
  const Tensor b = make<double>({0.5, 0, 0, -0.5}, {1, 4});
  const RnnResult out = run(params(2), x, w, r, {.b = &b});
  CHECK(out.y.shape() == Shape{2, 1, 1, 2});
  check_close(values(out.y), {1.5, 2, 6.5, 2}, 0);
  check_close(values(out.y_h), {6.5, 2}, 0);
}

TEST_CASE("rnn sequence_lens shorter than T stops early and pads Y with zeros", "[unit][rnn]") {
  // lens {3, 1}. Entry 0: 0.25, 1.25, 0.75; entry 1: 2 - 0.25 = 1.75, then nothing.
  const Tensor lens = Tensor::from_vector<std::int32_t>({3, 1}, {2});
  const RnnResult out = run(params(1), make<double>(kX, {3, 2, 1}), kW, kR, {.b = &kB, .lens = &lens});
  check_close(values(out.y), {0.25, 1.75, 1.25, 0, 0.75, 0}, 0);  // [T, D, B, H]
  check_close(values(out.y_h), {0.75, 1.75}, 0);
}

TEST_CASE("rnn reverse starts at each entry's own last step", "[unit][rnn]") {
  // Entry 0 runs t = 2, 1, 0: relu(-1.5 - 0.25) = 0, 1 - 0.25 = 0.75, 0.5 + 1.5 - 0.25 = 1.75.
  // Entry 1 (length 1) runs t = 0 only: 1.75.
  const Tensor lens = Tensor::from_vector<std::int64_t>({3, 1}, {2});
  const RnnResult out =
      run(params(1, k::RnnDirection::Reverse), make<double>(kX, {3, 2, 1}), kW, kR, {.b = &kB, .lens = &lens});
  check_close(values(out.y), {1.75, 1.75, 0.75, 0, 0, 0}, 0);
  check_close(values(out.y_h), {1.75, 1.75}, 0);
}

TEST_CASE("rnn bidirectional in both layouts holds the forward and the reverse pass", "[unit][rnn]") {
  const Tensor lens = Tensor::from_vector<std::int64_t>({3, 1}, {2});
  const Tensor w = make<double>({0.5, 0.5}, {2, 1, 1}), r = make<double>({2, 2}, {2, 1, 1});
  const Tensor b = make<double>({0.25, -0.5, 0.25, -0.5}, {2, 2});
  k::RnnParams p = params(1, k::RnnDirection::Bidirectional);
  SECTION("layout 0") {
    const RnnResult out = run(p, make<double>(kX, {3, 2, 1}), w, r, {.b = &b, .lens = &lens});
    REQUIRE(out.y.shape() == Shape{3, 2, 2, 1});
    // [T, D, B, H]: each step holds forward {entry 0, entry 1} then reverse {entry 0, entry 1}.
    check_close(values(out.y), {0.25, 1.75, 1.75, 1.75, 1.25, 0, 0.75, 0, 0.75, 0, 0, 0}, 0);
    check_close(values(out.y_h), {0.75, 1.75, 1.75, 1.75}, 0);  // [D, B, H]
  }
  SECTION("layout 1") {
    p.layout = 1;
    const RnnResult out = run(p, make<double>({1, 2, -3, 4, 9, 9}, {2, 3, 1}), w, r, {.b = &b, .lens = &lens});
    REQUIRE(out.y.shape() == Shape{2, 3, 2, 1});
    // [B, T, D, H]: entry 0 then entry 1, each step forward then reverse.
    check_close(values(out.y), {0.25, 1.75, 1.25, 0.75, 0.75, 0, 1.75, 1.75, 0, 0, 0, 0}, 0);
    REQUIRE(out.y_h.shape() == Shape{2, 2, 1});
    check_close(values(out.y_h), {0.75, 1.75, 1.75, 1.75}, 0);  // [B, D, H]
  }
}

TEST_CASE("rnn layout 1 reads initial_h batch first", "[unit][rnn]") {
  // Entry 0 starts at 0.5 (as in the first case), entry 1 at -1: 0.5*4 - 2 - 0.25 = -0.25 -> 0,
  // then 0.5*9 + 0 - 0.25 = 4.25 and 0.5*(-5) + 8.5 - 0.25 = 5.75.
  k::RnnParams p = params(1);
  p.layout = 1;
  const Tensor x = make<double>({1, 2, -3, 4, 9, -5}, {2, 3, 1}), h0 = make<double>({0.5, -1}, {2, 1, 1});
  const RnnResult out = run(p, x, kW, kR, {.b = &kB, .h0 = &h0});
  check_close(values(out.y), {1.25, 3.25, 4.75, 0, 4.25, 5.75}, 0);
  check_close(values(out.y_h), {4.75, 5.75}, 0);
}

TEST_CASE("rnn Tanh (the default) and Sigmoid follow the scalar oracle; clip bounds their input", "[unit][rnn]") {
  const std::vector<double> xs{3.0, -4.0, 0.5};
  const double w = 0.9, r = -0.8, clip = 0.5;
  const auto act = GENERATE(k::RnnActivation::Tanh, k::RnnActivation::Sigmoid);
  const bool clipped = GENERATE(false, true);
  auto f = [&](double v) {
    if (clipped) v = std::clamp(v, -clip, clip);
    return act == k::RnnActivation::Tanh ? std::tanh(v) : sig(v);
  };
  double h = 0;
  std::vector<double> want;
  for (double x : xs) want.push_back(h = f(w * x + r * h));
  k::RnnParams p;
  p.hidden_size = 1;
  if (act == k::RnnActivation::Sigmoid) p.activations = {k::RnnActivation::Sigmoid};
  if (clipped) p.clip = clip;
  const RnnResult out = run(p, make<double>(xs, {3, 1, 1}), make<double>({w}, {1, 1, 1}), make<double>({r}, {1, 1, 1}));
  check_close(values(out.y), want, 1e-15);
  check_close(values(out.y_h), {h}, 1e-15);
}

TEST_CASE("rnn bidirectional takes one activation per direction", "[unit][rnn]") {
  // Forward Relu (exact as above), reverse Sigmoid from the oracle; no bias, W = 0.5, R = 2.
  const std::vector<double> xs{1, 2, -3};
  double h = 0;
  std::vector<double> reverse(3);
  for (int t = 2; t >= 0; --t) reverse[std::size_t(t)] = h = sig(0.5 * xs[std::size_t(t)] + 2 * h);
  const k::RnnParams p =
      params(1, k::RnnDirection::Bidirectional, {k::RnnActivation::Relu, k::RnnActivation::Sigmoid});
  const Tensor w = make<double>({0.5, 0.5}, {2, 1, 1}), r = make<double>({2, 2}, {2, 1, 1});
  const RnnResult out = run(p, make<double>(xs, {3, 1, 1}), w, r);
  // Forward: 0.5, 0.5*2 + 2*0.5 = 2, -1.5 + 4 = 2.5.
  check_close(values(out.y), {0.5, reverse[0], 2, reverse[1], 2.5, reverse[2]}, 1e-15);
  check_close(values(out.y_h), {2.5, reverse[0]}, 1e-15);
}

TEST_CASE("rnn f32 agrees with f64 within 1e-6", "[unit][rnn]") {
  const std::int64_t T = 4, B = 3, I = 5, H = 4;
  const std::vector<double> x = wave(std::size_t(T * B * I), 0.1), w = wave(std::size_t(2 * H * I), 1.3);
  const std::vector<double> r = wave(std::size_t(2 * H * H), 2.7), b = wave(std::size_t(4 * H), 4.1);
  const std::vector<double> h0 = wave(std::size_t(2 * B * H), 5.9);
  const k::RnnParams p = params(H, k::RnnDirection::Bidirectional, {k::RnnActivation::Tanh});
  auto run_in = [&](DType dt) {
    const Tensor tb = make(dt, b, {2, 2 * H}), th0 = make(dt, h0, {2, B, H});
    return run(p, make(dt, x, {T, B, I}), make(dt, w, {2, H, I}), make(dt, r, {2, H, H}), {.b = &tb, .h0 = &th0});
  };
  const RnnResult f32 = run_in(DType::F32), f64 = run_in(DType::F64);
  CHECK(f32.y.dtype() == DType::F32);
  CHECK(f64.y_h.dtype() == DType::F64);
  check_close(values(f32.y), values(f64.y), 1e-6);
  check_close(values(f32.y_h), values(f64.y_h), 1e-6);
}

TEST_CASE("rnn computes only the outputs requested", "[unit][rnn]") {
  Tensor y_h;
  k::rnn(params(1), make<double>({1, 2, -3}, {3, 1, 1}), kW, kR, &kB, nullptr, nullptr, nullptr, &y_h);
  check_close(values(y_h), {0.75}, 0);
}

TEST_CASE("rnn rejects bad shapes, attributes and sequence lengths", "[unit][rnn]") {
  const Tensor x = make<double>(kX, {3, 2, 1});
  SECTION("hidden_size does not match W and R") {
    require_error([&] { run(params(2), x, kW, kR); }, ErrorKind::Shape, {"RNN", "'W'", "[1, 2, 1]", "[1, 1, 1]"});
  }
  SECTION("bias length") {
    const Tensor b3 = make<double>({1, 2, 3}, {1, 3});
    require_error([&] { run(params(1), x, kW, kR, {.b = &b3}); }, ErrorKind::Shape, {"RNN", "'B'", "[1, 2]"});
  }
  SECTION("W of a single direction for a bidirectional RNN") {
    require_error([&] { run(params(1, k::RnnDirection::Bidirectional, {k::RnnActivation::Tanh}), x, kW, kR); },
                  ErrorKind::Shape, {"RNN", "'W'", "[2, 1, 1]"});
  }
  SECTION("layout") {
    k::RnnParams p = params(1);
    p.layout = 2;
    require_error([&] { run(p, x, kW, kR); }, ErrorKind::Model, {"RNN", "layout must be 0 or 1, got 2"});
  }
  SECTION("sequence_lens out of range") {
    const std::int64_t bad = GENERATE(std::int64_t{4}, std::int64_t{-1});
    const Tensor lens = Tensor::from_vector<std::int64_t>({1, bad}, {2});
    require_error([&] { run(params(1), x, kW, kR, {.lens = &lens}); }, ErrorKind::Input,
                  {"RNN", "sequence_lens[1] = " + std::to_string(bad), "[0, 3]"});
  }
  SECTION("one activation too many") {
    const k::RnnParams p = params(1, k::RnnDirection::Forward, {k::RnnActivation::Tanh, k::RnnActivation::Relu});
    require_error([&] { run(p, x, kW, kR); }, ErrorKind::Model, {"RNN", "2 activations", "1 direction"});
  }
  SECTION("initial_h of the wrong batch") {
    const Tensor h0 = make<double>({0}, {1, 1, 1});
    require_error([&] { run(params(1), x, kW, kR, {.h0 = &h0}); }, ErrorKind::Shape, {"'initial_h'", "[1, 2, 1]"});
  }
  SECTION("X of rank 2") {
    require_error([&] { run(params(1), make<double>({1, 2}, {2, 1}), kW, kR); }, ErrorKind::Shape, {"'X'", "rank 3"});
  }
}
