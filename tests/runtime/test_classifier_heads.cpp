// The ops a classifier's head ends in, through the API: LogSoftmax and
// ArgMax/ArgMin after a product, interpreted, compiled and in the fp64
// reference; labels must agree exactly, log-probabilities within rounding.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "canary/canary.h"
#include "jit_test_models.h"

using namespace canary;
using namespace canary::test;

namespace {

// logits = x W; logp = LogSoftmax(logits); label = ArgMax(logits, axis 1,
// keepdims 0); low = ArgMin(x, axis 1, last of ties).
Model head(const Runtime& rt) {
  ModelBuilder b("head");
  b.input("x", DType::F32, {"N", 10});
  b.constant("w", random_tensor({10, 6}, 7, -1.0f, 1.0f));
  b.node("MatMul", {"x", "w"}, {"logits"})
      .node("LogSoftmax", {"logits"}, {"logp"})
      .node("ArgMax", {"logits"}, {"label"}, {{"axis", std::int64_t{1}}, {"keepdims", std::int64_t{0}}})
      .node("ArgMin", {"x"}, {"low"}, {{"axis", std::int64_t{1}}, {"select_last_index", std::int64_t{1}}})
      .output("logp")
      .output("label")
      .output("low");
  return rt.build(b);
}

}  // namespace

TEST_CASE("classifier heads: LogSoftmax, ArgMax and ArgMin agree with the fp64 reference in every tier",
          "[differential][api]") {
  for (bool jit : {false, true}) {
    Runtime rt(jit ? jit_options(2) : interpreter_options());
    const Model m = head(rt);
    Session s = m.session(), reference = m.reference_session();
    for (std::int64_t n : {4, 4, 4, 9, 1}) {  // repeats reach the compiled tier when jit is on
      INFO("jit " << jit << ", batch " << n);
      const NamedTensors in{{"x", random_tensor({n, 10}, static_cast<std::uint32_t>(n) * 3 + 1)}};
      const NamedTensors got = s.run(in), want = reference.run(in);
      REQUIRE(got.at("label").dtype() == DType::I64);
      CHECK(got.at("label").shape() == Shape{n});
      CHECK(got.at("low").shape() == Shape{n, 1});
      for (std::int64_t i = 0; i < n; ++i) {
        CHECK(got.at("label").data<std::int64_t>()[i] == want.at("label").data<std::int64_t>()[i]);
        CHECK(got.at("low").data<std::int64_t>()[i] == want.at("low").data<std::int64_t>()[i]);
      }
      const Tensor& logp = got.at("logp");
      for (std::int64_t i = 0; i < logp.numel(); ++i) {
        const double w = want.at("logp").element_as_double(i);
        CHECK(std::abs(logp.element_as_double(i) - w) <= 1e-5 * std::max(1.0, std::abs(w)));
        CHECK(w < 0.0);
      }
    }
    if (jit) CHECK(s.stats().jit.compiled_entries >= 1);
  }
}

TEST_CASE("classifier heads: a NaN logit is the ArgMin of its row, as NumPy's argmin", "[unit][api]") {
  Runtime rt(interpreter_options());
  Session s = head(rt).session();
  Tensor x = random_tensor({2, 10}, 11);
  x.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
  const NamedTensors got = s.run({{"x", x}});
  CHECK(got.at("low").data<std::int64_t>()[0] == 3);
  // The NaN reaches the product's whole row: the label is that row's first NaN, index 0.
  CHECK(got.at("label").data<std::int64_t>()[0] == 0);
  CHECK(std::isnan(got.at("logp").data<float>()[0]));
}
