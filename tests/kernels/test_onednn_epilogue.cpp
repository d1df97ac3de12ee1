// Contraction epilogues (kernels/onednn.h, EpilogueOp): each op as a oneDNN
// post-op against the reference kernel of the same op, over special values
// (NaN, infinities, signed zeros, denormals, the float limits) and a sweep of
// finite ones; then MatMul, Gemm and Conv with epilogues against the
// reference contraction followed by the reference ops.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "kernels/onednn.h"
#include "kernels/reference.h"
#include "random_tensors.h"

namespace k = canary::kernels;
using canary::DType;
using canary::Shape;
using canary::Tensor;
using namespace canary::test;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kMax = std::numeric_limits<float>::max();

// The values each op is checked on: specials and a sweep across magnitudes.
std::vector<float> probe_values() {
  std::vector<float> v = {kNaN, -kNaN, kInf, -kInf, 0.0f, -0.0f, 1e-40f, -1e-40f, 1e-30f, -1e-30f,
                          kMax, -kMax, 1.0f, -1.0f, 0.5f, -0.5f, 88.7f, -88.7f, 89.0f, -89.0f,
                          100.0f, -100.0f, 1e10f, -1e10f, 1e30f, -1e30f};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> linear(-30.0f, 30.0f);
  std::uniform_real_distribution<float> exponent(-20.0f, 20.0f);
  for (int i = 0; i < 2000; ++i) v.push_back(linear(rng));
  for (int i = 0; i < 2000; ++i) v.push_back((i % 2 ? -1.0f : 1.0f) * std::pow(10.0f, exponent(rng)));
  return v;
}

// The reference kernel of one epilogue step applied to x.
Tensor reference_step(const k::EpilogueStep& s, const Tensor& x) {
  Tensor y;
  switch (s.op) {
    case k::EpilogueOp::Relu: k::unary(k::UnaryOp::Relu, x, y); break;
    case k::EpilogueOp::LeakyRelu: k::unary(k::UnaryOp::LeakyRelu, x, y, {s.alpha}); break;
    case k::EpilogueOp::Clip: {
      const Tensor lo = Tensor::scalar<float>(s.alpha), hi = Tensor::scalar<float>(s.beta);
      k::clip(x, &lo, &hi, y);
      break;
    }
    case k::EpilogueOp::Abs: k::unary(k::UnaryOp::Abs, x, y); break;
    case k::EpilogueOp::Sqrt: k::unary(k::UnaryOp::Sqrt, x, y); break;
    case k::EpilogueOp::Tanh: k::unary(k::UnaryOp::Tanh, x, y); break;
    case k::EpilogueOp::Sigmoid: k::unary(k::UnaryOp::Sigmoid, x, y); break;
  }
  return y;
}

Tensor reference_epilogue(const k::Epilogue& e, Tensor x) {
  for (std::size_t i = 0; i < e.size; ++i) x = reference_step(e.steps[i], x);
  return x;
}

// Distance in units in the last place between two finite floats of one sign class.
std::int64_t ulp_distance(float a, float b) {
  auto ordered = [](float f) {
    std::int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i < 0 ? std::int64_t{INT32_MIN} - i : std::int64_t{i};
  };
  return std::llabs(ordered(a) - ordered(b));
}

// True when got matches want: NaN where want is NaN, the same infinity, and
// finite values within max_ulp (or an absolute 1e-30, for results near 0).
bool agrees(float want, float got, std::int64_t max_ulp) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return want == got;
  return std::fabs(want - got) <= 1e-30f || ulp_distance(want, got) <= max_ulp;
}

// x [n, 1] times the 1x1 identity: the contraction's result is x exactly, so
// the epilogue sees each probe value as it is.
void check_epilogue_op(k::EpilogueStep step, std::int64_t max_ulp) {
  const std::vector<float> values = probe_values();
  const Tensor x = Tensor::from_vector(values, {static_cast<std::int64_t>(values.size()), 1});
  const Tensor one = Tensor::from_vector<float>({1.0f}, {1, 1});
  k::Epilogue e;
  REQUIRE(e.append(step));
  Tensor got;
  REQUIRE(k::onednn_matmul(x, one, got, e));
  const Tensor want = reference_epilogue(e, x);
  REQUIRE(got.shape() == want.shape());
  std::int64_t worst = 0;
  int bad = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    const float w = want.data<float>()[i], g = got.data<float>()[i];
    // Results below 1e-30 (sigmoid far left) may come back flushed to 0.
    if (std::isfinite(w) && std::isfinite(g) && std::fabs(w) >= 1e-30f) worst = std::max(worst, ulp_distance(w, g));
    if (!agrees(w, g, max_ulp) && bad++ < 5) {
      INFO(k::epilogue_op_name(step.op) << "(" << values[i] << "): reference " << w << ", epilogue " << g);
      CHECK(false);
    }
  }
  UNSCOPED_INFO(k::epilogue_op_name(step.op) << ": max " << worst << " ulp");
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("onednn epilogue: NaN-keeping ops agree with their reference kernels on every value",
          "[unit][differential][onednn]") {
  check_epilogue_op({k::EpilogueOp::LeakyRelu, 0.1f}, 1);
  check_epilogue_op({k::EpilogueOp::LeakyRelu, -2.0f}, 1);
  check_epilogue_op({k::EpilogueOp::Abs}, 0);
  check_epilogue_op({k::EpilogueOp::Sqrt}, 1);
  check_epilogue_op({k::EpilogueOp::Tanh}, 4);
  check_epilogue_op({k::EpilogueOp::Sigmoid}, 4);
}

namespace {

k::Epilogue epilogue_of(std::initializer_list<k::EpilogueStep> steps) {
  k::Epilogue e;
  for (const k::EpilogueStep& s : steps) REQUIRE(e.append(s));
  return e;
}

// Checks got against the reference contraction `want` followed by the
// reference epilogue: NaN where it has NaN, the same infinities, finite
// values within 1e-4 relative plus 1e-5 absolute.
void check_against_chain(const k::Epilogue& e, const Tensor& want, const Tensor& got) {
  const Tensor chain = reference_epilogue(e, want);
  REQUIRE(got.shape() == chain.shape());
  int bad = 0;
  for (std::int64_t i = 0; i < chain.numel(); ++i) {
    const float w = chain.data<float>()[i], g = got.data<float>()[i];
    const bool ok = std::isfinite(w) ? std::fabs(g - w) <= 1e-4f * std::fabs(w) + 1e-5f : agrees(w, g, 0);
    if (!ok && bad++ < 5) {
      INFO("element " << i << ": reference " << w << ", epilogue " << g);
      CHECK(false);
    }
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("onednn epilogue: an epilogue holds at most kMaxSteps steps", "[unit][onednn]") {
  k::Epilogue e;
  for (std::size_t i = 0; i < k::Epilogue::kMaxSteps; ++i) CHECK(e.append({k::EpilogueOp::Abs}));
  CHECK_FALSE(e.append({k::EpilogueOp::Tanh}));
  CHECK(e.size == k::Epilogue::kMaxSteps);
}

TEST_CASE("onednn epilogue: Relu and Clip run on finite results and match the reference exactly",
          "[unit][differential][onednn]") {
  std::mt19937 rng(3);
  const Tensor a = random_tensor(rng, {37, 19});
  const Tensor b = random_tensor(rng, {19, 23});
  Tensor plain;
  REQUIRE(k::onednn_matmul(a, b, plain));
  for (const k::Epilogue& e : {epilogue_of({{k::EpilogueOp::Relu}}), epilogue_of({{k::EpilogueOp::Clip, -0.25f, 0.5f}}),
                               epilogue_of({{k::EpilogueOp::Relu}, {k::EpilogueOp::Clip, 0.0f, 0.5f}})}) {
    Tensor got;
    REQUIRE(k::onednn_matmul(a, b, got, e));
    const Tensor want = reference_epilogue(e, plain);
    REQUIRE(got.shape() == want.shape());
    int differ = 0;
    for (std::int64_t i = 0; i < want.numel(); ++i) differ += want.data<float>()[i] != got.data<float>()[i];
    CHECK(differ == 0);
  }
}

TEST_CASE("onednn epilogue: Relu and Clip decline results that could hold a NaN", "[unit][onednn]") {
  std::mt19937 rng(5);
  const k::Epilogue relu = epilogue_of({{k::EpilogueOp::Relu}});
  const k::Epilogue clip = epilogue_of({{k::EpilogueOp::Clip, 0.0f, 1.0f}});
  const k::Epilogue tanh = epilogue_of({{k::EpilogueOp::Tanh}});
  const Tensor b = random_tensor(rng, {8, 4});
  for (float bad : {kNaN, kInf, -kInf, 1e35f}) {
    INFO("operand value " << bad);
    Tensor a = random_tensor(rng, {6, 8});
    a.data<float>()[13] = bad;
    Tensor y = Tensor::from_vector<float>({42.0f}, {1});
    CHECK_FALSE(k::onednn_matmul(a, b, y, relu));
    CHECK_FALSE(k::onednn_matmul(a, b, y, clip));
    CHECK(y.shape() == Shape{1});  // untouched
    CHECK(y.data<float>()[0] == 42.0f);
    // Tanh keeps NaN as NaN and infinities as ±1: it needs no check.
    Tensor got, want;
    REQUIRE(k::onednn_matmul(a, b, got, tanh));
    k::matmul(a, b, want);
    check_against_chain(tanh, want, got);
  }
  // The operand scan is vectorised: a bad value is seen in the vector body
  // and in the tail, whatever the element count.
  for (std::int64_t rows : {1, 2, 3, 5, 9, 17}) {
    for (std::int64_t at : {std::int64_t{0}, rows * 4 - 1}) {
      INFO(rows << " rows, NaN at element " << at);
      Tensor a = random_tensor(rng, {rows, 4});
      a.data<float>()[at] = kNaN;
      Tensor y;
      CHECK_FALSE(k::onednn_matmul(a, random_tensor(rng, {4, 3}), y, relu));
    }
  }
  // Finite operands whose products sum past the float range: declined even
  // when alpha is 0 (oneDNN scales after summing, and Inf * 0 is NaN).
  {
    const Tensor big_a = Tensor::from_vector(std::vector<float>(4 * 512, 1e18f), {4, 512});
    const Tensor big_b = Tensor::from_vector(std::vector<float>(512 * 4, 1e18f), {512, 4});
    Tensor y;
    CHECK_FALSE(k::onednn_matmul(big_a, big_b, y, relu));
    k::GemmParams zero_alpha;
    zero_alpha.alpha = 0.0;
    CHECK_FALSE(k::onednn_gemm(zero_alpha, big_a, big_b, nullptr, y, clip));
    // A sum that stays far from the range is taken.
    const Tensor small_b = Tensor::from_vector(std::vector<float>(512 * 4, 1e-18f), {512, 4});
    REQUIRE(k::onednn_matmul(big_a, small_b, y, relu));
  }
  // A Gemm bias (C) holding NaN is an operand like the others.
  const Tensor a = random_tensor(rng, {6, 8});
  Tensor c = random_tensor(rng, {4});
  c.data<float>()[2] = kNaN;
  Tensor y;
  CHECK_FALSE(k::onednn_gemm({}, a, b, &c, y, relu));
  // A convolution with a NaN weight.
  Tensor x = random_tensor(rng, {2, 3, 70});
  Tensor w = random_tensor(rng, {5, 3, 3});
  w.data<float>()[7] = kNaN;
  CHECK_FALSE(k::onednn_conv({}, x, w, nullptr, y, false, relu));
}

TEST_CASE("onednn epilogue: Gemm with transposes, alpha, beta and C, then a two-step epilogue",
          "[unit][differential][onednn]") {
  std::mt19937 rng(11);
  const k::Epilogue e = epilogue_of({{k::EpilogueOp::LeakyRelu, 0.2f}, {k::EpilogueOp::Sigmoid}});
  for (bool trans_a : {false, true})
    for (bool trans_b : {false, true})
      for (double beta : {0.0, 1.0, 0.5}) {
        k::GemmParams p;
        p.trans_a = trans_a;
        p.trans_b = trans_b;
        p.alpha = 1.5;
        p.beta = beta;
        const Tensor a = random_tensor(rng, trans_a ? Shape{13, 9} : Shape{9, 13});
        const Tensor b = random_tensor(rng, trans_b ? Shape{17, 13} : Shape{13, 17});
        const Tensor c = random_tensor(rng, {17});
        Tensor want, got;
        k::gemm(p, a, b, &c, want);
        REQUIRE(k::onednn_gemm(p, a, b, &c, got, e));
        check_against_chain(e, want, got);
      }
}

TEST_CASE("onednn epilogue: batched MatMul with broadcasting", "[unit][differential][onednn]") {
  std::mt19937 rng(13);
  const k::Epilogue e = epilogue_of({{k::EpilogueOp::Relu}, {k::EpilogueOp::Sqrt}});
  const Tensor a = random_tensor(rng, {3, 1, 7, 5});
  const Tensor b = random_tensor(rng, {4, 5, 6});
  Tensor want, got;
  k::matmul(a, b, want);
  REQUIRE(k::onednn_matmul(a, b, got, e));
  check_against_chain(e, want, got);
}

TEST_CASE("onednn epilogue: 1-D convolutions on the tiled path and 2-D ones on the plain path",
          "[unit][differential][onednn]") {
  std::mt19937 rng(17);
  const k::Epilogue relu = epilogue_of({{k::EpilogueOp::Relu}});
  const k::Epilogue clip_tanh = epilogue_of({{k::EpilogueOp::Clip, -0.5f, 0.75f}, {k::EpilogueOp::Tanh}});
  for (const k::Epilogue* e : {&relu, &clip_tanh}) {
    // 1-D, stride 1: the tiled channels-last path (several tiles, a partial one, padding).
    k::ConvParams p1;
    p1.pads = {2, 2};
    const Tensor x1 = random_tensor(rng, {9, 7, 150});
    const Tensor w1 = random_tensor(rng, {32, 7, 5});
    const Tensor b1 = random_tensor(rng, {32});
    Tensor want, got;
    k::conv(p1, x1, w1, &b1, want);
    const std::uint64_t tiled_before = k::onednn_cache_stats().tiled_conv_calls;
    REQUIRE(k::onednn_conv(p1, x1, w1, &b1, got, true, *e));
    CHECK(k::onednn_cache_stats().tiled_conv_calls == tiled_before + 1);
    check_against_chain(*e, want, got);
    // The same geometry without the epilogue is its own primitive: no epilogue leaks into it.
    Tensor plain;
    REQUIRE(k::onednn_conv(p1, x1, w1, &b1, plain, true));
    check_close(want, plain);
    // 2-D with stride 2: the plain-layout primitive.
    k::ConvParams p2;
    p2.strides = {2, 2};
    p2.pads = {1, 1, 1, 1};
    const Tensor x2 = random_tensor(rng, {2, 3, 11, 12});
    const Tensor w2 = random_tensor(rng, {8, 3, 3, 3});
    k::conv(p2, x2, w2, nullptr, want);
    REQUIRE(k::onednn_conv(p2, x2, w2, nullptr, got, false, *e));
    check_against_chain(*e, want, got);
  }
}
