// Tests of the reference LSTM kernel: a hand-computed oracle, sequence_lens, directions and layouts.
#include <algorithm>
#include <catch2/catch.hpp>
#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"
#include "tests/kernels/tensor_checks.h"

using canary::DType;
using canary::Error;
using canary::ErrorKind;
using canary::Shape;
using canary::Tensor;
using canary::test::check_close;
using canary::test::make;
using canary::test::values;
using canary::test::wave;
namespace k = canary::kernels;

namespace {

// The three outputs of one LSTM call.
struct LstmResult {
  Tensor y, y_h, y_c;
};

// Optional inputs of one LSTM call.
struct LstmExtras {
  const Tensor* b = nullptr;
  const Tensor* lens = nullptr;
  const Tensor* h0 = nullptr;
  const Tensor* c0 = nullptr;
  const Tensor* p = nullptr;
};

// Runs the kernel with all three outputs requested.
LstmResult run(const k::LstmParams& p, const Tensor& x, const Tensor& w, const Tensor& r, const LstmExtras& e = {}) {
  LstmResult out;
  k::lstm(p, x, w, r, e.b, e.lens, e.h0, e.c0, e.p, &out.y, &out.y_h, &out.y_c);
  return out;
}

// Logistic sigmoid written out for the oracle.
double sig(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// Clamps v to [-c, c].
double clamp_to(double v, double c) { return std::min(c, std::max(-c, v)); }

// Copies rows [t] of a [T, B, I] buffer in reverse time order.
std::vector<double> reverse_time(const std::vector<double>& x, std::int64_t T, std::int64_t row) {
  std::vector<double> out;
  for (std::int64_t t = T; t-- > 0;) out.insert(out.end(), x.begin() + t * row, x.begin() + (t + 1) * row);
  return out;
}

// Scalar weights of the one-unit hand-computed case, gate order i, o, f, c.
const double wi = 0.5, wo = -0.3, wf = 0.8, wc = 0.2;
const double ri = 0.1, ro = 0.4, rf = -0.2, rc = 0.6;
const double wbi = 0.05, wbo = -0.1, wbf = 0.2, wbc = 0.0, rbi = 0.01, rbo = 0.02, rbf = -0.03, rbc = 0.04;

}  // namespace

TEST_CASE("lstm T=2 B=1 I=1 H=1 matches hand-written gate arithmetic", "[unit][lstm]") {
  const std::vector<double> xs{1.0, -2.0};
  double h = 0, c = 0;
  std::vector<double> want_y;
  for (double x : xs) {
    const double i = sig(wi * x + ri * h + wbi + rbi);
    const double o = sig(wo * x + ro * h + wbo + rbo);
    const double f = sig(wf * x + rf * h + wbf + rbf);
    const double g = std::tanh(wc * x + rc * h + wbc + rbc);
    c = f * c + i * g;
    h = o * std::tanh(c);
    want_y.push_back(h);
  }
  k::LstmParams p;
  p.hidden_size = 1;
  const Tensor b = make<double>({wbi, wbo, wbf, wbc, rbi, rbo, rbf, rbc}, {1, 8});
  const LstmResult out = run(p, make<double>(xs, {2, 1, 1}), make<double>({wi, wo, wf, wc}, {1, 4, 1}),
                             make<double>({ri, ro, rf, rc}, {1, 4, 1}), {.b = &b});
  CHECK(out.y.shape() == Shape{2, 1, 1, 1});
  CHECK(out.y_h.shape() == Shape{1, 1, 1});
  check_close(values(out.y), want_y, 1e-12);
  check_close(values(out.y_h), {h}, 1e-12);
  check_close(values(out.y_c), {c}, 1e-12);
}

TEST_CASE("lstm peepholes, initial state and clip match the hand oracle", "[unit][lstm]") {
  const std::vector<double> xs{1.0, -2.0};
  const double pi = 0.2, po = -0.4, pf = 0.3, clip = 0.4;
  const bool coupled = GENERATE(false, true);
  double h = 0.3, c = -0.5;
  for (double x : xs) {
    const double i = sig(clamp_to(wi * x + ri * h + wbi + rbi + pi * c, clip));
    const double f = coupled ? 1.0 - i : sig(clamp_to(wf * x + rf * h + wbf + rbf + pf * c, clip));
    const double g = std::tanh(clamp_to(wc * x + rc * h + wbc + rbc, clip));
    const double c_new = f * c + i * g;
    const double o = sig(clamp_to(wo * x + ro * h + wbo + rbo + po * c_new, clip));
    c = c_new;
    h = o * std::tanh(c);
  }
  k::LstmParams p;
  p.hidden_size = 1;
  p.clip = clip;
  p.input_forget = coupled;
  const Tensor b = make<float>({wbi, wbo, wbf, wbc, rbi, rbo, rbf, rbc}, {1, 8});
  const Tensor h0 = make<float>({0.3}, {1, 1, 1});
  const Tensor c0 = make<float>({-0.5}, {1, 1, 1});
  const Tensor peep = make<float>({pi, po, pf}, {1, 3});
  const LstmResult out = run(p, make<float>(xs, {2, 1, 1}), make<float>({wi, wo, wf, wc}, {1, 4, 1}),
                             make<float>({ri, ro, rf, rc}, {1, 4, 1}), {.b = &b, .h0 = &h0, .c0 = &c0, .p = &peep});
  CHECK(out.y.dtype() == DType::F32);
  check_close(values(out.y_h), {h}, 1e-6);
  check_close(values(out.y_c), {c}, 1e-6);
}

TEST_CASE("lstm sequence_lens zeroes Y and carries the state of a short sequence", "[unit][lstm]") {
  const std::int64_t T = 3, B = 2, I = 3, H = 2;
  const std::vector<double> xv = wave(T * B * I, 0.1), wv = wave(4 * H * I, 1.3), rv = wave(4 * H * H, 2.7),
                            bv = wave(8 * H, 4.1);
  const Tensor w = make<double>(wv, {1, 4 * H, I}), r = make<double>(rv, {1, 4 * H, H}),
               b = make<double>(bv, {1, 8 * H});
  k::LstmParams p;
  p.hidden_size = H;
  const Tensor lens =
      GENERATE(Tensor::from_vector<std::int32_t>({3, 1}, {2}), Tensor::from_vector<std::int64_t>({3, 1}, {2}));
  const LstmResult both = run(p, make<double>(xv, {T, B, I}), w, r, {.b = &b, .lens = &lens});
  REQUIRE(both.y.shape() == Shape{T, 1, B, H});
  // Batch entry 0 alone over all three steps.
  std::vector<double> x0, x1;
  for (std::int64_t t = 0; t < T; ++t) {
    x0.insert(x0.end(), xv.begin() + (t * B) * I, xv.begin() + (t * B + 1) * I);
    if (t == 0) x1.insert(x1.end(), xv.begin() + I, xv.begin() + 2 * I);
  }
  const LstmResult first = run(p, make<double>(x0, {T, 1, I}), w, r, {.b = &b});
  // Batch entry 1 alone over its single valid step.
  const LstmResult second = run(p, make<double>(x1, {1, 1, I}), w, r, {.b = &b});
  const std::vector<double> y = values(both.y), yh = values(both.y_h), yc = values(both.y_c);
  const std::vector<double> y0 = values(first.y), y1 = values(second.y);
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t j = 0; j < H; ++j) {
      CHECK(std::abs(y[(t * B + 0) * H + j] - y0[t * H + j]) <= 1e-12);
      const double want1 = t == 0 ? y1[j] : 0.0;
      CHECK(std::abs(y[(t * B + 1) * H + j] - want1) <= 1e-12);
    }
  check_close({yh[0], yh[1]}, values(first.y_h), 1e-12);
  check_close({yh[2], yh[3]}, values(second.y_h), 1e-12);
  check_close({yc[2], yc[3]}, values(second.y_c), 1e-12);
  CHECK(std::abs(yh[2]) > 1e-3);  // the short sequence did move its state
}

TEST_CASE("lstm reverse equals forward on the time-reversed input", "[unit][lstm]") {
  const std::int64_t T = 4, I = 2, H = 3;
  const std::vector<double> xv = wave(T * I, 0.3);
  const Tensor w = make<double>(wave(4 * H * I, 1.1), {1, 4 * H, I});
  const Tensor r = make<double>(wave(4 * H * H, 2.2), {1, 4 * H, H});
  const Tensor b = make<double>(wave(8 * H, 3.3), {1, 8 * H});
  k::LstmParams fwd;
  fwd.hidden_size = H;
  k::LstmParams rev = fwd;
  rev.direction = k::LstmDirection::Reverse;
  const LstmResult forward_plain = run(fwd, make<double>(xv, {T, 1, I}), w, r, {.b = &b});
  const LstmResult reversed = run(rev, make<double>(xv, {T, 1, I}), w, r, {.b = &b});
  const LstmResult forward_of_flip = run(fwd, make<double>(reverse_time(xv, T, I), {T, 1, I}), w, r, {.b = &b});
  check_close(values(reversed.y), reverse_time(values(forward_of_flip.y), T, H), 1e-12);
  check_close(values(reversed.y_h), values(forward_of_flip.y_h), 1e-12);
  check_close(values(reversed.y_c), values(forward_of_flip.y_c), 1e-12);
  CHECK(std::abs(values(reversed.y_h)[0] - values(forward_plain.y_h)[0]) > 1e-6);

  SECTION("a short reverse sequence starts from its last valid step") {
    const Tensor lens = Tensor::from_vector<std::int64_t>({2}, {1});
    const LstmResult short_rev = run(rev, make<double>(xv, {T, 1, I}), w, r, {.b = &b, .lens = &lens});
    const std::vector<double> prefix(xv.begin(), xv.begin() + 2 * I);
    const LstmResult prefix_fwd = run(fwd, make<double>(reverse_time(prefix, 2, I), {2, 1, I}), w, r, {.b = &b});
    std::vector<double> want = reverse_time(values(prefix_fwd.y), 2, H);
    want.resize(static_cast<std::size_t>(T * H), 0.0);
    check_close(values(short_rev.y), want, 1e-12);
    check_close(values(short_rev.y_h), values(prefix_fwd.y_h), 1e-12);
  }
}

TEST_CASE("lstm bidirectional stacks a forward and a reverse pass", "[unit][lstm]") {
  const std::int64_t T = 3, B = 2, I = 2, H = 2;
  const std::vector<double> xv = wave(T * B * I, 0.7);
  const std::vector<double> w_fw = wave(4 * H * I, 1.0), w_bw = wave(4 * H * I, 5.0);
  const std::vector<double> r_fw = wave(4 * H * H, 2.0), r_bw = wave(4 * H * H, 6.0);
  const std::vector<double> b_fw = wave(8 * H, 3.0), b_bw = wave(8 * H, 7.0);
  auto cat = [](std::vector<double> a, const std::vector<double>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const Tensor lens = Tensor::from_vector<std::int32_t>({3, 2}, {2});
  k::LstmParams p;
  p.hidden_size = H;
  p.direction = k::LstmDirection::Bidirectional;
  const Tensor b2 = make<double>(cat(b_fw, b_bw), {2, 8 * H});
  const LstmResult bi = run(p, make<double>(xv, {T, B, I}), make<double>(cat(w_fw, w_bw), {2, 4 * H, I}),
                            make<double>(cat(r_fw, r_bw), {2, 4 * H, H}), {.b = &b2, .lens = &lens});
  REQUIRE(bi.y.shape() == Shape{T, 2, B, H});
  REQUIRE(bi.y_h.shape() == Shape{2, B, H});
  const Tensor b_f = make<double>(b_fw, {1, 8 * H}), b_r = make<double>(b_bw, {1, 8 * H});
  p.direction = k::LstmDirection::Forward;
  const LstmResult fw = run(p, make<double>(xv, {T, B, I}), make<double>(w_fw, {1, 4 * H, I}),
                            make<double>(r_fw, {1, 4 * H, H}), {.b = &b_f, .lens = &lens});
  p.direction = k::LstmDirection::Reverse;
  const LstmResult bw = run(p, make<double>(xv, {T, B, I}), make<double>(w_bw, {1, 4 * H, I}),
                            make<double>(r_bw, {1, 4 * H, H}), {.b = &b_r, .lens = &lens});
  const std::vector<double> y = values(bi.y), yf = values(fw.y), yr = values(bw.y);
  const std::int64_t row = B * H;
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t i = 0; i < row; ++i) {
      CHECK(std::abs(y[(t * 2 + 0) * row + i] - yf[t * row + i]) <= 1e-12);
      CHECK(std::abs(y[(t * 2 + 1) * row + i] - yr[t * row + i]) <= 1e-12);
    }
  const std::vector<double> yh = values(bi.y_h);
  check_close(std::vector<double>(yh.begin(), yh.begin() + row), values(fw.y_h), 1e-12);
  check_close(std::vector<double>(yh.begin() + row, yh.end()), values(bw.y_h), 1e-12);
}

TEST_CASE("lstm layout 1 equals layout 0 transposed; f32 agrees with f64", "[unit][lstm]") {
  const std::int64_t T = 3, B = 2, I = 2, H = 2, D = 2;
  const std::vector<double> x0 = wave(T * B * I, 0.2), h0v = wave(D * B * H, 8.0), c0v = wave(D * B * H, 9.0);
  const std::vector<double> wv = wave(D * 4 * H * I, 1.5), rv = wave(D * 4 * H * H, 2.5), bv = wave(D * 8 * H, 3.5),
                            pv = wave(D * 3 * H, 4.5);
  // Transposes [A, B', C] (C contiguous) into [B', A, C].
  auto swap01 = [](const std::vector<double>& v, std::int64_t a, std::int64_t b, std::int64_t c) {
    std::vector<double> out(v.size());
    for (std::int64_t i = 0; i < a; ++i)
      for (std::int64_t j = 0; j < b; ++j)
        for (std::int64_t k2 = 0; k2 < c; ++k2) out[(j * a + i) * c + k2] = v[(i * b + j) * c + k2];
    return out;
  };
  k::LstmParams p;
  p.hidden_size = H;
  p.direction = k::LstmDirection::Bidirectional;
  const Tensor w = make<double>(wv, {D, 4 * H, I}), r = make<double>(rv, {D, 4 * H, H});
  const Tensor b = make<double>(bv, {D, 8 * H}), peep = make<double>(pv, {D, 3 * H});
  const Tensor h0 = make<double>(h0v, {D, B, H}), c0 = make<double>(c0v, {D, B, H});
  const LstmResult l0 = run(p, make<double>(x0, {T, B, I}), w, r, {.b = &b, .h0 = &h0, .c0 = &c0, .p = &peep});

  SECTION("layout 1") {
    p.layout = 1;
    const Tensor h1 = make<double>(swap01(h0v, D, B, H), {B, D, H}), c1 = make<double>(swap01(c0v, D, B, H), {B, D, H});
    const LstmResult l1 =
        run(p, make<double>(swap01(x0, T, B, I), {B, T, I}), w, r, {.b = &b, .h0 = &h1, .c0 = &c1, .p = &peep});
    REQUIRE(l1.y.shape() == Shape{B, T, D, H});
    REQUIRE(l1.y_h.shape() == Shape{B, D, H});
    // Y0 [T, D, B, H] -> [B, T, D, H]: move B to the front.
    const std::vector<double> y0 = values(l0.y);
    std::vector<double> want(y0.size());
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t d = 0; d < D; ++d)
        for (std::int64_t bi = 0; bi < B; ++bi)
          for (std::int64_t j = 0; j < H; ++j)
            want[((bi * T + t) * D + d) * H + j] = y0[((t * D + d) * B + bi) * H + j];
    check_close(values(l1.y), want, 1e-12);
    check_close(values(l1.y_h), swap01(values(l0.y_h), D, B, H), 1e-12);
    check_close(values(l1.y_c), swap01(values(l0.y_c), D, B, H), 1e-12);
  }
  SECTION("f32 within 1e-5 of f64") {
    const Tensor w32 = make<float>(wv, {D, 4 * H, I}), r32 = make<float>(rv, {D, 4 * H, H});
    const Tensor b32 = make<float>(bv, {D, 8 * H}), p32 = make<float>(pv, {D, 3 * H});
    const Tensor h0f = make<float>(h0v, {D, B, H}), c0f = make<float>(c0v, {D, B, H});
    const LstmResult l32 = run(p, make<float>(x0, {T, B, I}), w32, r32, {.b = &b32, .h0 = &h0f, .c0 = &c0f, .p = &p32});
    CHECK(l32.y.dtype() == DType::F32);
    check_close(values(l32.y), values(l0.y), 1e-5);
    check_close(values(l32.y_h), values(l0.y_h), 1e-5);
    check_close(values(l32.y_c), values(l0.y_c), 1e-5);
  }
}

TEST_CASE("lstm with only Y_h requested and hidden_size taken from R", "[unit][lstm]") {
  k::LstmParams p;  // hidden_size 0: inferred from R
  const Tensor x = make<double>({1.0, -2.0}, {2, 1, 1});
  Tensor y_h;
  k::lstm(p, x, make<double>({wi, wo, wf, wc}, {1, 4, 1}), make<double>({ri, ro, rf, rc}, {1, 4, 1}), nullptr, nullptr,
          nullptr, nullptr, nullptr, nullptr, &y_h, nullptr);
  double h = 0, c = 0;
  for (double xv : {1.0, -2.0}) {
    const double i = sig(wi * xv + ri * h), o = sig(wo * xv + ro * h), f = sig(wf * xv + rf * h);
    c = f * c + i * std::tanh(wc * xv + rc * h);
    h = o * std::tanh(c);
  }
  check_close(values(y_h), {h}, 1e-12);
}

TEST_CASE("lstm rejects bad shapes, lengths and dtypes", "[unit][lstm]") {
  k::LstmParams p;
  p.hidden_size = 2;
  const Tensor x = Tensor::empty(DType::F32, {3, 1, 4});
  const Tensor w = Tensor::empty(DType::F32, {1, 8, 4}), r = Tensor::empty(DType::F32, {1, 8, 2});
  LstmResult out;
  auto call = [&](const Tensor& xx, const Tensor& ww, const Tensor& rr, const LstmExtras& e) {
    k::lstm(p, xx, ww, rr, e.b, e.lens, e.h0, e.c0, e.p, &out.y, &out.y_h, &out.y_c);
  };
  canary::test::require_error(
      [&] {
        call(x, Tensor::empty(DType::F32, {1, 8, 3}), r, {});
      },
      ErrorKind::Shape, {"'W'", "[1, 8, 4]", "[1, 8, 3]"});
  canary::test::require_error(
      [&] {
        call(x, w, Tensor::empty(DType::F32, {1, 4, 2}), {});
      },
      ErrorKind::Shape, {"'R'", "[1, 8, 2]", "[1, 4, 2]"});
  const Tensor b_bad = Tensor::empty(DType::F32, {1, 8});
  canary::test::require_error([&] { call(x, w, r, {.b = &b_bad}); }, ErrorKind::Shape, {"'B'", "[1, 16]", "[1, 8]"});
  const Tensor h_bad = Tensor::empty(DType::F32, {1, 2, 2});
  canary::test::require_error([&] { call(x, w, r, {.h0 = &h_bad}); }, ErrorKind::Shape, {"'initial_h'", "[1, 1, 2]"});
  const Tensor long_len = Tensor::from_vector<std::int32_t>({4}, {1});
  canary::test::require_error([&] { call(x, w, r, {.lens = &long_len}); }, ErrorKind::Input, {"sequence_lens", "4"});
  const Tensor negative_len = Tensor::from_vector<std::int64_t>({-1}, {1});
  canary::test::require_error([&] { call(x, w, r, {.lens = &negative_len}); }, ErrorKind::Input, {"sequence_lens"});
  const Tensor float_len = Tensor::from_vector<float>({1}, {1});
  canary::test::require_error([&] { call(x, w, r, {.lens = &float_len}); }, ErrorKind::Input, {"sequence_lens"});
  canary::test::require_error([&] { call(Tensor::empty(DType::I64, {3, 1, 4}), w, r, {}); }, ErrorKind::Input, {"LSTM", "i64"});
  canary::test::require_error([&] { call(x, Tensor::empty(DType::F64, {1, 8, 4}), r, {}); }, ErrorKind::Input, {"'W'"});
  canary::test::require_error([&] { call(Tensor::empty(DType::F32, {3, 4}), w, r, {}); }, ErrorKind::Shape, {"'X'"});
}

namespace {

// One forward LSTM over x [T, 1, I] as a per-unit loop: each gate row sums
// W x, then R h, then the bias pair, in double; states stored in f32.
std::vector<float> per_unit_lstm(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& r,
                                 const std::vector<float>& b, std::int64_t steps, std::int64_t in, std::int64_t hid) {
  std::vector<float> h(static_cast<std::size_t>(hid), 0.0f), c(h), y;
  const auto gate = [&](std::int64_t row, std::int64_t t) {
    double acc = 0;
    for (std::int64_t k = 0; k < in; ++k) acc += double(w[row * in + k]) * double(x[t * in + k]);
    for (std::int64_t k = 0; k < hid; ++k) acc += double(r[row * hid + k]) * double(h[k]);
    return acc + (double(b[row]) + double(b[4 * hid + row]));
  };
  const auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  for (std::int64_t t = 0; t < steps; ++t) {
    std::vector<float> h_new(h.size()), c_new(c.size());
    for (std::int64_t j = 0; j < hid; ++j) {
      const double i = sigmoid(gate(j, t)), o = sigmoid(gate(hid + j, t)), f = sigmoid(gate(2 * hid + j, t));
      const double cell = f * double(c[j]) + i * std::tanh(gate(3 * hid + j, t));
      c_new[j] = float(cell);
      h_new[j] = float(o * std::tanh(cell));
    }
    h = h_new, c = c_new;
    y.insert(y.end(), h.begin(), h.end());
  }
  return y;
}

}  // namespace

TEST_CASE("lstm sums each gate row in double in per-unit order, bit for bit", "[unit][lstm][differential]") {
  // The kernel runs its sums across gate rows (the vectorised loop); every
  // row must still see the per-unit order.
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (const auto& [steps, in, hid] : std::vector<std::array<std::int64_t, 3>>{{1, 1, 1}, {5, 3, 4}, {7, 5, 33}}) {
    const auto filled = [&](std::int64_t n) {
      std::vector<float> v(static_cast<std::size_t>(n));
      for (float& e : v) e = value(rng);
      return v;
    };
    const std::vector<float> x = filled(steps * in), w = filled(4 * hid * in), r = filled(4 * hid * hid),
                             b = filled(8 * hid);
    k::LstmParams p;
    p.hidden_size = hid;
    const Tensor tb = Tensor::from_vector(b, {1, 8 * hid});
    Tensor y;
    k::lstm(p, Tensor::from_vector(x, {steps, 1, in}), Tensor::from_vector(w, {1, 4 * hid, in}),
            Tensor::from_vector(r, {1, 4 * hid, hid}), &tb, nullptr, nullptr, nullptr, nullptr, &y, nullptr, nullptr);
    CAPTURE(steps, in, hid);
    const std::vector<float> want = per_unit_lstm(x, w, r, b, steps, in, hid);
    CHECK(values(y) == std::vector<double>(want.begin(), want.end()));
  }
}
