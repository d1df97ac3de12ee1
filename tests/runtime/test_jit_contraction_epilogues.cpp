// Contraction epilogues end to end: MatMul, Gemm and Conv with the unary ops
// after them run as one oneDNN call in compiled code and agree with the
// interpreter; NaN and infinite inputs, where oneDNN's Relu and Clip would
// lose a NaN, take the interpreter's kernels and give its values; with
// oneDNN off or the option off the same values come out.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "jit_test_models.h"

using canary::DType;
using canary::NamedTensors;
using canary::Tensor;
using namespace canary::test;

namespace {

const char* kModel = R"(canary v1
graph main(x: f32[N, 3, T], w: f32[8, 3, 5], b: f32[8], g: f32[8, 6], v: f32[6, 4]) -> (y, z) {
  const two: f32[] = [2]
  const lo: f32[] = [-0.5]
  const hi: f32[] = [0.75]
  x2 = Mul(x, two)
  h = Conv(x2, w, b) {pads = [2, 2]}
  a = Relu(h)
  p = ReduceMean(a) {axes = [2], keepdims = 0}
  q = Gemm(p, g)
  s = Sigmoid(q)
  m = MatMul(s, v)
  c = Clip(m, lo, hi)
  y = Tanh(c)
  z = Mul(a, two)
}
)";

NamedTensors inputs(Tensor x, std::uint32_t seed) {
  return {{"x", std::move(x)},
          {"w", random_tensor({8, 3, 5}, seed, -0.5f, 0.5f)},
          {"b", random_tensor({8}, seed + 1)},
          {"g", random_tensor({8, 6}, seed + 2)},
          {"v", random_tensor({6, 4}, seed + 3)}};
}

// NaN at the same elements, the same infinities, finite values within `tol` relative.
void check_same(const Tensor& got, const Tensor& want, double tol) {
  REQUIRE(got.shape() == want.shape());
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.element_as_double(i), w = want.element_as_double(i);
    INFO("element " << i << ": got " << g << ", want " << w);
    REQUIRE(std::isnan(g) == std::isnan(w));
    if (std::isinf(w)) CHECK(g == w);
    else if (!std::isnan(w)) CHECK(std::abs(g - w) <= tol * std::max(1.0, std::abs(w)));
  }
}

// Every variant's listing, joined.
std::string listings(const canary::Model& m) {
  std::string all;
  for (const auto& a : m.jit_report().anchors)
    for (const auto& v : a.variants) all += v.listing + "\n";
  return all;
}

}  // namespace

TEST_CASE("jit: Conv, Gemm and MatMul epilogues run in oneDNN and match the interpreter",
          "[unit][jit][api][epilogue]") {
  canary::Runtime rt(jit_options(1)), plain_rt(interpreter_options());
  auto model = rt.load_text(kModel);
  auto s = model.session();
  auto p = plain_rt.load_text(kModel).session();
  std::uint32_t seed = 1;
  for (auto [n, t] : std::vector<std::pair<std::int64_t, std::int64_t>>{{2, 70}, {2, 70}, {5, 130}, {1, 9}}) {
    INFO("x f32[" << n << ", 3, " << t << "]");
    const NamedTensors in = inputs(random_tensor({n, 3, t}, seed), 40);
    ++seed;
    const auto got = s.run(in);
    const auto want = p.run(in);
    check_same(got.at("y"), want.at("y"), 1e-5);
    check_same(got.at("z"), want.at("z"), 1e-5);
  }
  const std::string listing = listings(model);
  INFO(listing);
  CHECK(listing.find("conv + relu (oneDNN post-ops)") != std::string::npos);
  CHECK(listing.find("gemm + sigmoid (oneDNN post-ops)") != std::string::npos);
  CHECK(listing.find("matmul + clip(-0.500000, 0.750000) + tanh (oneDNN post-ops)") != std::string::npos);
  bool reported = false;
  for (const auto& a : model.jit_report().anchors)
    for (const auto& v : a.variants)
      for (const auto& g : v.groups) reported = reported || g.expression == "conv + relu (oneDNN post-ops)";
  CHECK(reported);
  CHECK(s.stats().jit.compiled_entries >= 1);
  CHECK(s.stats().jit.deopts == 0);
}

TEST_CASE("jit: NaN and Inf inputs give the interpreter's values through contraction epilogues",
          "[unit][jit][api][epilogue]") {
  canary::Runtime rt(jit_options(1)), plain_rt(interpreter_options());
  auto model = rt.load_text(kModel);
  auto s = model.session();
  auto p = plain_rt.load_text(kModel).session();
  s.run(inputs(random_tensor({2, 3, 40}, 3), 50));  // compiled on this call
  const float inf = std::numeric_limits<float>::infinity();
  for (float special : {std::nanf(""), inf, -inf, 3e38f}) {
    INFO("special value " << special);
    Tensor x = random_tensor({2, 3, 40}, 4);
    x.data<float>()[17] = special;
    x.data<float>()[3 * 40 + 2] = special;
    const NamedTensors in = inputs(x, 50);
    const auto got = s.run(in);
    const auto want = p.run(in);
    check_same(got.at("y"), want.at("y"), 1e-5);
    check_same(got.at("z"), want.at("z"), 1e-5);
  }
  CHECK(s.stats().jit.compiled_entries >= 4);
  CHECK(s.stats().jit.deopts == 0);
}

TEST_CASE("jit: contraction epilogues off, or oneDNN off, give the same values",
          "[unit][jit][api][epilogue]") {
  canary::Options off = jit_options(1);
  off.jit.contraction_epilogues = false;
  canary::Options no_onednn = jit_options(1);
  no_onednn.use_onednn = false;
  canary::Runtime on_rt(jit_options(1)), off_rt(off), reference_rt(no_onednn);
  auto on_model = on_rt.load_text(kModel);
  auto off_model = off_rt.load_text(kModel);
  auto ref_model = reference_rt.load_text(kModel);
  auto on = on_model.session();
  auto epilogues_off = off_model.session();
  auto kernels_only = ref_model.session();
  for (std::uint32_t seed = 1; seed <= 3; ++seed) {
    const NamedTensors in = inputs(random_tensor({3, 3, 65}, seed), 60);
    const auto a = on.run(in);
    const auto b = epilogues_off.run(in);
    const auto c = kernels_only.run(in);
    check_same(a.at("y"), b.at("y"), 1e-5);
    check_same(a.at("y"), c.at("y"), 1e-5);
    check_same(a.at("z"), c.at("z"), 1e-5);
  }
  CHECK(listings(on_model).find("(oneDNN post-ops)") != std::string::npos);
  CHECK(listings(off_model).find("(oneDNN post-ops)") == std::string::npos);
  // The oneDNN-less session still plans the epilogue; its driver runs the
  // interpreter's kernels for it.
  CHECK(kernels_only.stats().jit.compiled_entries >= 2);
}
