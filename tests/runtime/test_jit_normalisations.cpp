// Softmax and LayerNormalization over the last axis run as fused row kernels
// (with the elementwise ops before them as a prologue) and agree with the
// interpreter across shapes, and on rows holding NaN, +Inf and -Inf: the same
// elements are NaN in every tier, as in the fp64 reference.
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
graph main(x: f32[N, T], s: f32[T], b: f32[T]) -> (p, n) {
  const half: f32[] = [0.5]
  h = Mul(x, half)
  t = Sub(h, b)
  p = Softmax(t) {axis = -1}
  u = Add(x, b)
  n = LayerNormalization(u, s, b) {axis = -1, epsilon = 0.00001}
}
)";

constexpr float kInf = std::numeric_limits<float>::infinity();

NamedTensors inputs(Tensor x, std::uint32_t seed) {
  const std::int64_t t = x.dim(1);
  return {{"x", std::move(x)}, {"s", random_tensor({t}, seed, 0.5f, 1.5f)}, {"b", random_tensor({t}, seed + 1)}};
}

}  // namespace

TEST_CASE("jit: Softmax and LayerNormalization run as row kernels and match the interpreter",
          "[unit][jit][api][rows]") {
  canary::Runtime rt(jit_options(1)), plain_rt(interpreter_options());
  auto model = rt.load_text(kModel);
  auto s = model.session();
  auto p = plain_rt.load_text(kModel).session();
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {{4, 33}, {4, 33}, {7, 100}, {7, 100},
                                                                     {2, 5},  {1, 17}, {3, 1},   {64, 256}};
  std::uint32_t seed = 1;
  for (auto [n, t] : shapes) {
    INFO("x f32[" << n << ", " << t << "]");
    const NamedTensors in = inputs(random_tensor({n, t}, seed), seed + 10);
    ++seed;
    const auto got = s.run(in);
    const auto want = p.run(in);
    check_same_values(got.at("p"), want.at("p"), 2e-6);
    check_same_values(got.at("n"), want.at("n"), 2e-5);
  }
  const std::string listing = listings(model);
  INFO(listing);
  CHECK(listing.find("(softmax)") != std::string::npos);
  CHECK(listing.find("(layer_norm)") != std::string::npos);
  CHECK(s.stats().jit.compiled_entries > 0);
}

TEST_CASE("jit: rows with NaN, +Inf or -Inf give NaN where the interpreter and the reference do",
          "[unit][jit][api][rows]") {
  canary::Runtime rt(jit_options(1)), plain_rt(interpreter_options());
  auto model = rt.load_text(kModel);
  auto s = model.session();
  auto p = plain_rt.load_text(kModel).session();
  s.run(inputs(random_tensor({6, 40}, 5), 7));  // hot and compiled on this call; the next one runs it
  const float nan = std::nanf("");
  // Row r gets its special values; row 5 stays finite. -Inf alone in a row is
  // a masked logit (Softmax gives 0 there); a whole row of -Inf is NaN.
  const std::vector<std::vector<std::pair<int, float>>> specials = {
      {{0, kInf}}, {{3, -kInf}, {17, -kInf}}, {{39, nan}}, {{1, kInf}, {2, -kInf}}, {}, {}};
  Tensor x = random_tensor({6, 40}, 9);
  float* px = x.data<float>();
  for (std::size_t r = 0; r < specials.size(); ++r)
    for (auto [col, v] : specials[r]) px[r * 40 + static_cast<std::size_t>(col)] = v;
  for (int col = 0; col < 40; ++col) px[4 * 40 + col] = -kInf;
  const NamedTensors in = inputs(x, 11);
  const auto got = s.run(in);
  const auto want = p.run(in);
  auto reference = plain_rt.load_text(kModel).reference_session().run(in);
  check_same_values(got.at("p"), want.at("p"), 2e-6);
  check_same_values(got.at("n"), want.at("n"), 2e-5);
  // The interpreter agrees with the fp64 reference on where NaN is.
  for (const char* out : {"p", "n"})
    for (std::int64_t i = 0; i < want.at(out).numel(); ++i)
      CHECK(std::isnan(want.at(out).element_as_double(i)) == std::isnan(reference.at(out).element_as_double(i)));
  // Softmax: rows with NaN or +Inf are NaN throughout; a masked -Inf is 0.
  const Tensor& sm = got.at("p");
  CHECK(std::isnan(sm.element_as_double(0 * 40 + 5)));
  CHECK(std::isnan(sm.element_as_double(2 * 40 + 0)));
  CHECK(sm.element_as_double(1 * 40 + 3) == 0.0);
  CHECK(std::isfinite(sm.element_as_double(1 * 40 + 4)));
  CHECK(std::isnan(sm.element_as_double(4 * 40 + 7)));
  CHECK(std::isfinite(sm.element_as_double(5 * 40 + 7)));
  CHECK(s.stats().jit.compiled_entries >= 1);
  CHECK(s.stats().jit.deopts == 0);
}

TEST_CASE("jit: a Softmax row of -Inf only is NaN in every tier, the other rows unchanged",
          "[unit][jit][api][rows]") {
  // A fully masked attention row; no NaN or +Inf anywhere else, so the
  // interpreter's oneDNN path sees this tensor on its own.
  canary::Runtime rt(jit_options(1)), plain_rt(interpreter_options());
  auto model = rt.load_text(kModel);
  auto s = model.session();
  auto p = plain_rt.load_text(kModel).session();
  auto r = plain_rt.load_text(kModel).reference_session();
  s.run(inputs(random_tensor({4, 24}, 3), 4));
  Tensor x = random_tensor({4, 24}, 8);
  for (int col = 0; col < 24; ++col) x.data<float>()[2 * 24 + col] = -kInf;
  x.data<float>()[0 * 24 + 5] = -kInf;  // a masked logit in another row
  const NamedTensors in = inputs(x, 12);
  const auto got = s.run(in), want = p.run(in), reference = r.run(in);
  check_same_values(got.at("p"), want.at("p"), 2e-6);
  for (std::int64_t i = 0; i < want.at("p").numel(); ++i) {
    const bool masked_row = i / 24 == 2;
    CHECK(std::isnan(want.at("p").element_as_double(i)) == masked_row);
    CHECK(std::isnan(reference.at("p").element_as_double(i)) == masked_row);
  }
  CHECK(got.at("p").element_as_double(5) == 0.0);
  CHECK(s.stats().jit.compiled_entries >= 1);
}

TEST_CASE("jit: each row op takes the elementwise ops before it as its prologue, even in a reused register",
          "[unit][jit][api][rows]") {
  // The VM gives u the register t held: an exit before the second Softmax
  // must not keep t alive past the first one, or its Sub stays a group of its own.
  const char* two_rows = R"(canary v1
graph main(x: f32[N, T], b: f32[T]) -> (p, n) {
  t = Sub(x, b)
  p = Softmax(t) {axis = -1}
  u = Add(x, b)
  n = Softmax(u) {axis = -1}
}
)";
  canary::Runtime rt(jit_options(1)), plain_rt(interpreter_options());
  auto model = rt.load_text(two_rows);
  auto s = model.session();
  auto p = plain_rt.load_text(two_rows).session();
  for (std::uint32_t seed = 1; seed < 5; ++seed) {
    const NamedTensors in = {{"x", random_tensor({6, 40}, seed)}, {"b", random_tensor({40}, seed + 7)}};
    const auto got = s.run(in), want = p.run(in);
    check_same_values(got.at("p"), want.at("p"), 2e-6);
    check_same_values(got.at("n"), want.at("n"), 2e-6);
  }
  const std::string listing = listings(model);
  INFO(listing);
  REQUIRE(s.stats().jit.compiled_entries > 0);
  CHECK(listing.find("row kernel 0 (softmax): 2 ops") != std::string::npos);
  CHECK(listing.find("row kernel 1 (softmax): 2 ops") != std::string::npos);
  CHECK(listing.find("fused group") == std::string::npos);
}
