// Tests of the reference GRU kernel: a hand-written gate oracle for both
// linear_before_reset modes, sequence_lens, directions, layouts and dtypes.
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
using canary::test::values;
using canary::test::wave;
using canary::test::require_error;
namespace k = canary::kernels;

namespace {

// The two outputs of one GRU call.
struct GruResult {
  Tensor y, y_h;
};

// Optional inputs of one GRU call.
struct GruExtras {
  const Tensor* b = nullptr;
  const Tensor* lens = nullptr;
  const Tensor* h0 = nullptr;
};

// Runs the kernel with both outputs requested.
GruResult run(const k::GruParams& p, const Tensor& x, const Tensor& w, const Tensor& r, const GruExtras& e = {}) {
  GruResult out;
  k::gru(p, x, w, r, e.b, e.lens, e.h0, &out.y, &out.y_h);
  return out;
}

// Logistic sigmoid written out for the oracle.
double sig(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// Clamps v to [-c, c].
double clamp_to(double v, double c) { return std::min(c, std::max(-c, v)); }

// Scalar weights of the one-unit hand-computed case, gate order z, r, h.
const double wz = 0.5, wr = -0.7, wh = 0.9;
const double rz = 0.3, rr = 0.6, rh = -0.8;
const double wbz = 0.1, wbr = -0.2, wbh = 0.05, rbz = 0.02, rbr = 0.3, rbh = -0.4;

// The inputs of a multi-unit case: T=3, B=2, I=3, H=2 and D directions.
struct Case {
  std::int64_t T = 3, B = 2, I = 3, H = 2, D = 1;
  std::vector<double> x, w, r, b, h0;
};

// Deterministic inputs for a case with D directions (x in layout 0).
Case make_case(std::int64_t directions) {
  Case c;
  c.D = directions;
  c.x = wave(std::size_t(c.T * c.B * c.I), 0.1);
  c.w = wave(std::size_t(c.D * 3 * c.H * c.I), 1.3);
  c.r = wave(std::size_t(c.D * 3 * c.H * c.H), 2.7);
  c.b = wave(std::size_t(c.D * 6 * c.H), 4.1);
  c.h0 = wave(std::size_t(c.D * c.B * c.H), 5.9);
  return c;
}

// The rows of direction `dir` of a [D, rows...] buffer.
std::vector<double> direction_slice(const std::vector<double>& v, std::int64_t D, std::int64_t dir) {
  const std::size_t n = v.size() / std::size_t(D);
  return std::vector<double>(v.begin() + std::ptrdiff_t(n * dir), v.begin() + std::ptrdiff_t(n * (dir + 1)));
}

// Copies rows [t] of a [T, rest] buffer in reverse time order.
std::vector<double> reverse_time(const std::vector<double>& x, std::int64_t T) {
  const std::size_t row = x.size() / std::size_t(T);
  std::vector<double> out;
  for (std::int64_t t = T; t-- > 0;) out.insert(out.end(), x.begin() + t * row, x.begin() + (t + 1) * row);
  return out;
}

// Runs one case in element type T with the given params (layout 0).
template <typename T>
GruResult run_case(const k::GruParams& p, const Case& c) {
  const Tensor x = make<T>(c.x, {c.T, c.B, c.I}), w = make<T>(c.w, {c.D, 3 * c.H, c.I});
  const Tensor r = make<T>(c.r, {c.D, 3 * c.H, c.H}), b = make<T>(c.b, {c.D, 6 * c.H});
  const Tensor h0 = make<T>(c.h0, {c.D, c.B, c.H});
  return run(p, x, w, r, {.b = &b, .h0 = &h0});
}

}  // namespace

TEST_CASE("gru T=2 B=1 I=1 H=1 matches hand-written gate arithmetic", "[unit][gru]") {
  const bool linear_before_reset = GENERATE(false, true);
  const std::vector<double> xs{1.0, -2.0};
  const double h_init = 0.25;
  double h = h_init;
  std::vector<double> want_y;
  for (double x : xs) {
    const double z = sig(wz * x + rz * h + wbz + rbz);
    const double r = sig(wr * x + rr * h + wbr + rbr);
    // linear_before_reset 0: the reset gate scales h before R; 1: it scales R h + Rbh.
    const double cand = linear_before_reset ? std::tanh(wh * x + r * (rh * h + rbh) + wbh)
                                            : std::tanh(wh * x + rh * (r * h) + rbh + wbh);
    h = (1 - z) * cand + z * h;
    want_y.push_back(h);
  }
  k::GruParams p;
  p.hidden_size = 1;
  p.linear_before_reset = linear_before_reset;
  const Tensor b = make<double>({wbz, wbr, wbh, rbz, rbr, rbh}, {1, 6});
  const Tensor h0 = make<double>({h_init}, {1, 1, 1});
  const GruResult out = run(p, make<double>(xs, {2, 1, 1}), make<double>({wz, wr, wh}, {1, 3, 1}),
                            make<double>({rz, rr, rh}, {1, 3, 1}), {.b = &b, .h0 = &h0});
  CHECK(out.y.shape() == Shape{2, 1, 1, 1});
  CHECK(out.y_h.shape() == Shape{1, 1, 1});
  check_close(values(out.y), want_y, 1e-12);
  check_close(values(out.y_h), {h}, 1e-12);
}

TEST_CASE("gru without bias or initial state, and with clip, matches the oracle", "[unit][gru]") {
  const std::vector<double> xs{3.0, -4.0};
  const double clip = 0.5;
  double h = 0, h_clipped = 0;
  std::vector<double> want_y, want_clipped;
  for (double x : xs) {
    double z = sig(wz * x + rz * h), r = sig(wr * x + rr * h);
    h = (1 - z) * std::tanh(wh * x + rh * (r * h)) + z * h;
    want_y.push_back(h);
    z = sig(clamp_to(wz * x + rz * h_clipped, clip));
    r = sig(clamp_to(wr * x + rr * h_clipped, clip));
    h_clipped = (1 - z) * std::tanh(clamp_to(wh * x + rh * (r * h_clipped), clip)) + z * h_clipped;
    want_clipped.push_back(h_clipped);
  }
  k::GruParams p;
  p.hidden_size = 1;
  const Tensor x = make<double>(xs, {2, 1, 1}), w = make<double>({wz, wr, wh}, {1, 3, 1});
  const Tensor r = make<double>({rz, rr, rh}, {1, 3, 1});
  check_close(values(run(p, x, w, r).y), want_y, 1e-12);
  p.clip = clip;
  check_close(values(run(p, x, w, r).y), want_clipped, 1e-12);
}

TEST_CASE("gru sequence_lens: a shorter sequence stops early and pads Y with zeros", "[unit][gru]") {
  // Two batch entries, x0 = {1, -2}, x1 = {0.5, (ignored) 7}; lens {2, 1}.
  const std::vector<double> x{1.0, 0.5, -2.0, 7.0};  // [T=2, B=2, I=1]
  double h0 = 0, h1 = 0;
  std::vector<double> y0;
  for (double xv : {1.0, -2.0}) {
    const double z = sig(wz * xv + rz * h0 + wbz + rbz), r = sig(wr * xv + rr * h0 + wbr + rbr);
    h0 = (1 - z) * std::tanh(wh * xv + rh * (r * h0) + rbh + wbh) + z * h0;
    y0.push_back(h0);
  }
  {
    const double xv = 0.5;
    const double z = sig(wz * xv + wbz + rbz), r = sig(wr * xv + wbr + rbr);
    h1 = (1 - z) * std::tanh(wh * xv + rh * (r * 0) + rbh + wbh);
  }
  k::GruParams p;
  p.hidden_size = 1;
  const Tensor b = make<double>({wbz, wbr, wbh, rbz, rbr, rbh}, {1, 6});
  const Tensor lens = Tensor::from_vector<std::int32_t>({2, 1}, {2});
  const GruResult out = run(p, make<double>(x, {2, 2, 1}), make<double>({wz, wr, wh}, {1, 3, 1}),
                            make<double>({rz, rr, rh}, {1, 3, 1}), {.b = &b, .lens = &lens});
  // Y [T, D, B, H]: t0 {y0[0], h1}, t1 {y0[1], 0}.
  check_close(values(out.y), {y0[0], h1, y0[1], 0.0}, 1e-12);
  check_close(values(out.y_h), {h0, h1}, 1e-12);
}

TEST_CASE("gru reverse equals forward on time-reversed input", "[unit][gru]") {
  const Case c = make_case(1);
  k::GruParams p;
  p.hidden_size = c.H;
  p.linear_before_reset = GENERATE(false, true);
  const GruResult fwd_on_reversed = run_case<double>(p, Case{c.T, c.B, c.I, c.H, 1, reverse_time(c.x, c.T), c.w, c.r,
                                                             c.b, c.h0});
  p.direction = k::GruDirection::Reverse;
  const GruResult rev = run_case<double>(p, c);
  check_close(values(rev.y_h), values(fwd_on_reversed.y_h), 1e-12);
  check_close(values(rev.y), reverse_time(values(fwd_on_reversed.y), c.T), 1e-12);
}

TEST_CASE("gru bidirectional equals separate forward and reverse runs", "[unit][gru]") {
  const Case c = make_case(2);
  k::GruParams p;
  p.hidden_size = c.H;
  p.direction = k::GruDirection::Bidirectional;
  const GruResult both = run_case<double>(p, c);
  REQUIRE(both.y.shape() == Shape{c.T, 2, c.B, c.H});
  const std::vector<double> y = values(both.y);
  for (std::int64_t dir = 0; dir < 2; ++dir) {
    Case one{c.T, c.B, c.I, c.H, 1, c.x, direction_slice(c.w, 2, dir), direction_slice(c.r, 2, dir),
             direction_slice(c.b, 2, dir), direction_slice(c.h0, 2, dir)};
    p.direction = dir == 0 ? k::GruDirection::Forward : k::GruDirection::Reverse;
    const GruResult single = run_case<double>(p, one);
    check_close(direction_slice(values(both.y_h), 2, dir), values(single.y_h), 1e-12);
    // Y [T, 2, B, H]: direction dir of each time step.
    std::vector<double> got;
    const std::size_t block = std::size_t(c.B * c.H);
    for (std::int64_t t = 0; t < c.T; ++t) {
      const auto start = y.begin() + std::ptrdiff_t((t * 2 + dir) * std::int64_t(block));
      got.insert(got.end(), start, start + std::ptrdiff_t(block));
    }
    check_close(got, values(single.y), 1e-12);
  }
}

TEST_CASE("gru layout 1 equals layout 0 transposed", "[unit][gru]") {
  const Case c = make_case(2);
  k::GruParams p;
  p.hidden_size = c.H;
  p.direction = k::GruDirection::Bidirectional;
  const GruResult l0 = run_case<double>(p, c);
  // x [T, B, I] → [B, T, I]; h0 [D, B, H] → [B, D, H].
  std::vector<double> x1, h1;
  for (std::int64_t b = 0; b < c.B; ++b)
    for (std::int64_t t = 0; t < c.T; ++t)
      for (std::int64_t i = 0; i < c.I; ++i) x1.push_back(c.x[std::size_t((t * c.B + b) * c.I + i)]);
  for (std::int64_t b = 0; b < c.B; ++b)
    for (std::int64_t d = 0; d < c.D; ++d)
      for (std::int64_t j = 0; j < c.H; ++j) h1.push_back(c.h0[std::size_t((d * c.B + b) * c.H + j)]);
  p.layout = 1;
  const Tensor b = make<double>(c.b, {2, 6 * c.H}), h0 = make<double>(h1, {c.B, 2, c.H});
  const GruResult l1 = run(p, make<double>(x1, {c.B, c.T, c.I}), make<double>(c.w, {2, 3 * c.H, c.I}),
                           make<double>(c.r, {2, 3 * c.H, c.H}), {.b = &b, .h0 = &h0});
  REQUIRE(l1.y.shape() == Shape{c.B, c.T, 2, c.H});
  REQUIRE(l1.y_h.shape() == Shape{c.B, 2, c.H});
  const std::vector<double> y0 = values(l0.y), y1 = values(l1.y), yh0 = values(l0.y_h), yh1 = values(l1.y_h);
  for (std::int64_t b2 = 0; b2 < c.B; ++b2)
    for (std::int64_t d = 0; d < 2; ++d)
      for (std::int64_t j = 0; j < c.H; ++j) {
        CHECK(yh1[std::size_t((b2 * 2 + d) * c.H + j)] == yh0[std::size_t((d * c.B + b2) * c.H + j)]);
        for (std::int64_t t = 0; t < c.T; ++t)
          CHECK(y1[std::size_t(((b2 * c.T + t) * 2 + d) * c.H + j)] ==
                y0[std::size_t(((t * 2 + d) * c.B + b2) * c.H + j)]);
      }
}

TEST_CASE("gru f32 agrees with f64 within 1e-5", "[unit][gru]") {
  const Case c = make_case(2);
  k::GruParams p;
  p.hidden_size = c.H;
  p.direction = k::GruDirection::Bidirectional;
  p.linear_before_reset = GENERATE(false, true);
  const GruResult f32 = run_case<float>(p, c), f64 = run_case<double>(p, c);
  CHECK(f32.y.dtype() == DType::F32);
  CHECK(f64.y.dtype() == DType::F64);
  check_close(values(f32.y), values(f64.y), 1e-5);
  check_close(values(f32.y_h), values(f64.y_h), 1e-5);
}

TEST_CASE("gru rejects bad shapes, dtypes and sequence lengths", "[unit][gru]") {
  k::GruParams p;
  p.hidden_size = 1;
  const Tensor x = make<double>({1, 2}, {2, 1, 1}), r = make<double>({rz, rr, rh}, {1, 3, 1});
  const Tensor w4 = make<double>({1, 2, 3, 4}, {1, 4, 1});
  require_error([&] { run(p, x, w4, r); }, ErrorKind::Shape, {"GRU", "'W'", "[1, 3, 1]", "[1, 4, 1]"});
  const Tensor w = make<double>({wz, wr, wh}, {1, 3, 1});
  const Tensor lens = Tensor::from_vector<std::int64_t>({3}, {1});
  require_error([&] { run(p, x, w, r, {.lens = &lens}); }, ErrorKind::Input, {"sequence_lens[0] = 3", "[0, 2]"});
  const Tensor w32 = make<float>({wz, wr, wh}, {1, 3, 1});
  require_error([&] { run(p, x, w32, r); }, ErrorKind::Input, {"'W'", "f64"});
  const Tensor h0 = make<double>({0, 0}, {1, 2, 1});
  require_error([&] { run(p, x, w, r, {.h0 = &h0}); }, ErrorKind::Shape, {"'initial_h'", "[1, 1, 1]"});
  require_error([&] { run(p, make<double>({1, 2}, {2, 1}), w, r); }, ErrorKind::Shape, {"'X'", "rank 3"});
}
