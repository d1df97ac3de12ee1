// Contraction epilogues end to end: MatMul, Gemm and Conv with the unary ops
// after them run as one oneDNN call in compiled code (on large results; on
// small ones as the contraction then a fused group) and agree with the
// interpreter; NaN and infinite inputs, where oneDNN's Relu and Clip would
// lose a NaN, take the separate group and give the interpreter's values;
// with oneDNN off or the option off the same values come out.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "jit_test_models.h"
#include "kernels/onednn.h"

using canary::DType;
using canary::NamedTensors;
using canary::Tensor;
using namespace canary::test;

namespace {

// Conv + Relu, Gemm + LeakyRelu + Abs, MatMul + Clip; with T = 12000 every
// result has 2^17 elements or more, the threshold these tests set, so the
// post-ops run (smaller calls take the contraction and then the separate
// fused group).
const char* kModel = R"(canary v1
graph main(x: f32[N, 3, T], w: f32[8, 3, 5], b: f32[8], g: f32[8, 6], gb: f32[6], v: f32[6, 16]) -> (y, z) {
  const two: f32[] = [2]
  const lo: f32[] = [-0.5]
  const hi: f32[] = [0.75]
  const flat: i64[2] = [-1, 8]
  x2 = Mul(x, two)
  h = Conv(x2, w, b) {pads = [2, 2]}
  a = Relu(h)
  tr = Transpose(a) {perm = [0, 2, 1]}
  r = Reshape(tr, flat)
  q = Gemm(r, g, gb)
  l = LeakyRelu(q) {alpha = 0.1}
  k = Abs(l)
  m = MatMul(k, v)
  y = Clip(m, lo, hi)
  z = Mul(a, two)
}
)";

// The JIT options of these tests: post-ops from 2^17 result elements.
canary::Options epilogue_options() {
  canary::Options o = jit_options(1);
  o.jit.epilogue_min_elements = std::int64_t{1} << 17;
  return o;
}

NamedTensors inputs(Tensor x, std::uint32_t seed) {
  return {{"x", std::move(x)},
          {"w", random_tensor({8, 3, 5}, seed, -0.5f, 0.5f)},
          {"b", random_tensor({8}, seed + 1)},
          {"g", random_tensor({8, 6}, seed + 2)},
          {"gb", random_tensor({6}, seed + 3)},
          {"v", random_tensor({6, 16}, seed + 4)}};
}

}  // namespace

TEST_CASE("jit: Conv, Gemm and MatMul epilogues run in oneDNN and match the interpreter",
          "[unit][jit][api][epilogue]") {
  canary::Runtime rt(epilogue_options()), plain_rt(interpreter_options());
  auto model = rt.load_text(kModel);
  auto s = model.session();
  auto p = plain_rt.load_text(kModel).session();
  // The interpreter's convolution (no post-ops) creates its tiled geometry
  // first; the compiled Conv + Relu creates one more only if its post-ops ran.
  p.run(inputs(random_tensor({2, 3, 12000}, 9), 40));
  const std::uint64_t geometries = canary::kernels::onednn_cache_stats().tiled_conv_geometries;
  std::uint32_t seed = 1;
  for (auto [n, t] : std::vector<std::pair<std::int64_t, std::int64_t>>{{2, 12000}, {2, 12000}, {5, 130}, {1, 9}}) {
    INFO("x f32[" << n << ", 3, " << t << "]");
    const NamedTensors in = inputs(random_tensor({n, 3, t}, seed), 40);
    ++seed;
    const auto got = s.run(in);
    const auto want = p.run(in);
    check_same_values(got.at("y"), want.at("y"), 1e-5);
    check_same_values(got.at("z"), want.at("z"), 1e-5);
  }
  const std::string listing = listings(model);
  INFO(listing);
  CHECK(listing.find("conv + relu (oneDNN post-ops on large results)") != std::string::npos);
  CHECK(listing.find("gemm + leaky_relu(0.100000) + abs (oneDNN post-ops on large results)") != std::string::npos);
  CHECK(listing.find("matmul + clip(-0.500000, 0.750000) (oneDNN post-ops on large results)") != std::string::npos);
  CHECK(canary::kernels::onednn_cache_stats().tiled_conv_geometries == geometries + 1);
  bool reported = false;
  for (const auto& a : model.jit_report().anchors)
    for (const auto& v : a.variants)
      for (const auto& g : v.groups)
        reported = reported || g.expression == "conv + relu (oneDNN post-ops on large results)";
  CHECK(reported);
  CHECK(s.stats().jit.compiled_entries >= 1);
  CHECK(s.stats().jit.deopts == 0);
}

TEST_CASE("jit: NaN and Inf inputs give the interpreter's values through contraction epilogues",
          "[unit][jit][api][epilogue]") {
  canary::Runtime rt(epilogue_options()), plain_rt(interpreter_options());
  auto model = rt.load_text(kModel);
  auto s = model.session();
  auto p = plain_rt.load_text(kModel).session();
  s.run(inputs(random_tensor({2, 3, 12000}, 3), 50));  // compiled on this call
  const float inf = std::numeric_limits<float>::infinity();
  for (float special : {std::nanf(""), inf, -inf, 3e38f}) {
    INFO("special value " << special);
    Tensor x = random_tensor({2, 3, 12000}, 4);
    x.data<float>()[17] = special;
    x.data<float>()[3 * 12000 + 2] = special;
    const NamedTensors in = inputs(x, 50);
    const auto got = s.run(in);
    const auto want = p.run(in);
    check_same_values(got.at("y"), want.at("y"), 1e-5);
    check_same_values(got.at("z"), want.at("z"), 1e-5);
  }
  CHECK(s.stats().jit.compiled_entries >= 4);
  CHECK(s.stats().jit.deopts == 0);
}

TEST_CASE("jit: contraction epilogues off, or oneDNN off, give the same values",
          "[unit][jit][api][epilogue]") {
  canary::Options off = epilogue_options();
  off.jit.contraction_epilogues = false;
  canary::Options no_onednn = epilogue_options();
  no_onednn.use_onednn = false;
  canary::Runtime on_rt(epilogue_options()), off_rt(off), reference_rt(no_onednn);
  auto on_model = on_rt.load_text(kModel);
  auto off_model = off_rt.load_text(kModel);
  auto ref_model = reference_rt.load_text(kModel);
  auto on = on_model.session();
  auto epilogues_off = off_model.session();
  auto kernels_only = ref_model.session();
  for (std::uint32_t seed = 1; seed <= 3; ++seed) {
    const NamedTensors in = inputs(random_tensor({3, 3, seed == 2 ? 65 : 9000}, seed), 60);
    const auto a = on.run(in);
    const auto b = epilogues_off.run(in);
    const auto c = kernels_only.run(in);
    check_same_values(a.at("y"), b.at("y"), 1e-5);
    // The reference kernels sum in another order than oneDNN's.
    check_same_values(a.at("y"), c.at("y"), 1e-4);
    check_same_values(a.at("z"), c.at("z"), 1e-4);
  }
  CHECK(listings(on_model).find("(oneDNN post-ops") != std::string::npos);
  CHECK(listings(off_model).find("(oneDNN post-ops") == std::string::npos);
  // The oneDNN-less session still plans the epilogue; its driver runs the
  // interpreter's kernels for it.
  CHECK(kernels_only.stats().jit.compiled_entries >= 1);
}

namespace {

// A MatMul with a residual Add (x + x W), and one with a bias Add and a Relu
// (an exported Linear on a 3-D input).
const char* kLinear = R"(canary v1
graph main(x: f32[B, T, 64], v: f32[64, 64], w: f32[64, 256], b: f32[256]) -> (r, y) {
  n = MatMul(x, v)
  r = Add(x, n)
  m = MatMul(x, w)
  a = Add(m, b)
  y = Relu(a)
}
)";

NamedTensors linear_inputs(std::int64_t batch, std::int64_t t, std::uint32_t seed) {
  return {{"x", random_tensor({batch, t, 64}, seed)},
          {"v", random_tensor({64, 64}, seed + 1, -0.2f, 0.2f)},
          {"w", random_tensor({64, 256}, seed + 2, -0.2f, 0.2f)},
          {"b", random_tensor({256}, seed + 3)}};
}

}  // namespace

TEST_CASE("jit: a MatMul's residual Add runs as a oneDNN binary post-op and matches the interpreter",
          "[unit][jit][api][epilogue]") {
  canary::Options o = jit_options(1);
  o.jit.epilogue_min_elements = std::int64_t{1} << 12;
  canary::Runtime rt(o), plain_rt(interpreter_options());
  auto model = rt.load_text(kLinear);
  auto s = model.session();
  auto p = plain_rt.load_text(kLinear).session();
  // The interpreter creates the plain matmul primitives first; the compiled
  // residual chain then creates one more (with the post-op), or none if it
  // did not run. The bias and Relu stay a fused group after their MatMul.
  p.run(linear_inputs(4, 32, 1));
  const std::uint64_t misses = canary::kernels::onednn_cache_stats().misses;
  for (std::uint32_t call = 0; call < 4; ++call) {
    const NamedTensors in = linear_inputs(4, 32, 1 + call);
    const auto got = s.run(in);
    const auto want = p.run(in);
    check_same_values(got.at("r"), want.at("r"), 1e-5);
    check_same_values(got.at("y"), want.at("y"), 1e-5);
  }
  const std::string listing = listings(model);
  INFO(listing);
  CHECK(listing.find("matmul + add(r") != std::string::npos);
  CHECK(listing.find(") + relu") == std::string::npos);
  CHECK(canary::kernels::onednn_cache_stats().misses == misses + 1);
  CHECK(s.stats().jit.compiled_entries >= 3);
  CHECK(s.stats().jit.deopts == 0);

  // NaN and infinity in the residual flow through the post-op as through the Add.
  NamedTensors in = linear_inputs(4, 32, 9);
  in.at("x").data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
  in.at("x").data<float>()[700] = std::numeric_limits<float>::infinity();
  check_same_values(s.run(in).at("r"), p.run(in).at("r"), 1e-5);
  // A small call (under the threshold) takes the contraction and then the group.
  const NamedTensors small = linear_inputs(1, 2, 10);
  check_same_values(s.run(small).at("r"), p.run(small).at("r"), 1e-5);
}
