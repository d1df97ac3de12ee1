// JitOptions::range_canaries: compiled elementwise kernels report outputs
// outside the range the recording call saw (widened by range_margin) as
// value-canary events; the values still flow, identical to the interpreter's.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "jit_test_models.h"

using canary::EventKind;
using canary::NamedTensors;
using canary::Tensor;
using namespace canary::test;

namespace {

NamedTensors chain_inputs(float scale, std::uint32_t seed) {
  Tensor x = random_tensor({32, 16}, seed, -scale, scale);
  return {{"x", x}, {"b", random_tensor({16}, seed + 1, -0.5f, 0.5f)}};
}

std::size_t range_events(const canary::Model& m) {
  std::size_t n = 0;
  for (const canary::Event& e : events_of(m, EventKind::ValueCanary))
    if (e.message.find("outside the ranges recorded") != std::string::npos) ++n;
  return n;
}

}  // namespace

TEST_CASE("range canaries: values beyond the recorded range are reported and still flow",
          "[unit][jit][api][canaries]") {
  canary::Options o = jit_options(1);
  o.jit.range_canaries = true;
  canary::Runtime rt(o), plain_rt(interpreter_options());
  canary::Model model = elementwise_chain(rt);
  canary::Session s = model.session();
  canary::Session plain = elementwise_chain(plain_rt).session();
  // Recorded on the first call; later calls of the same spread stay inside.
  for (std::uint32_t seed = 1; seed <= 6; ++seed) {
    const NamedTensors in = chain_inputs(1.0f, seed);
    CHECK(max_relative_difference(s.run(in).at("y"), plain.run(in).at("y")) < 1e-6);
  }
  REQUIRE(s.stats().jit.compiled_entries >= 4);
  CHECK(s.stats().jit.range_canaries == 0);
  CHECK(range_events(model) == 0);
  // Inputs ten times wider: y = relu(tanh(x/2 + b) - x) * x leaves its range.
  const NamedTensors wide = chain_inputs(10.0f, 7);
  CHECK(max_relative_difference(s.run(wide).at("y"), plain.run(wide).at("y")) < 1e-6);
  CHECK(s.stats().jit.range_canaries == 1);
  CHECK(s.stats().jit.value_canaries >= 1);
  REQUIRE(range_events(model) == 1);
  for (const canary::Event& e : events_of(model, EventKind::ValueCanary))
    CHECK_THAT(e.message, Catch::Contains("fused group 0") && Catch::Contains(" in ["));
}

TEST_CASE("range canaries: off by default, and a wide margin admits more", "[unit][jit][api][canaries]") {
  for (const double margin : {-1.0, 1000.0}) {
    canary::Options o = jit_options(1);
    o.jit.range_canaries = margin > 0;
    o.jit.range_margin = margin > 0 ? margin : o.jit.range_margin;
    canary::Runtime rt(o);
    canary::Model model = elementwise_chain(rt);
    canary::Session s = model.session();
    for (std::uint32_t seed = 1; seed <= 3; ++seed) s.run(chain_inputs(1.0f, seed));
    s.run(chain_inputs(10.0f, 7));
    INFO("margin " << margin);
    CHECK(s.stats().jit.range_canaries == 0);
    CHECK(range_events(model) == 0);
  }
}

TEST_CASE("range canaries: a negative or NaN margin is refused when the Runtime is made", "[unit][jit][api][canaries]") {
  for (const double margin : {-0.1, std::nan("")}) {
    canary::Options o = jit_options(1);
    o.jit.range_canaries = true;
    o.jit.range_margin = margin;
    try {
      canary::Runtime rt(o);
      FAIL("range_margin " << margin << " accepted");
    } catch (const canary::Error& e) {
      CHECK(e.kind() == canary::ErrorKind::Input);
      CHECK_THAT(std::string(e.what()), Catch::Contains("Options::jit.range_margin"));
    }
  }
}

TEST_CASE("range canaries: loop traces carry no ranges (one iteration's span says nothing of the next)",
          "[unit][jit][api][canaries]") {
  // A running sum over T steps: its value grows past anything one recorded
  // iteration saw, on every call, with unchanged traffic.
  const char* text = R"(canary v1
graph main(xs: f32[T, 4], h0: f32[4]) -> (h_last) {
  const keep_going: bool[] = [true]
  steps: i64[1] = Shape(xs) {end = 1}
  h_last: f32[4] = Loop(steps, keep_going, h0) {
    body = graph step(i: i64[], cond: bool[], h: f32[4]) -> (cond, h_next) {
      x_t: f32[4] = Gather(xs, i) {axis = 0}
      a = Abs(x_t)
      h_next = Add(h, a)
    }
  }
}
)";
  canary::Options o = jit_options(2);
  o.jit.range_canaries = true;
  canary::Runtime rt(o), plain_rt(interpreter_options());
  canary::Model model = rt.load_text(text);
  canary::Session s = model.session();
  canary::Session plain = plain_rt.load_text(text).session();
  for (std::uint32_t seed = 1; seed <= 5; ++seed) {
    const NamedTensors in{{"xs", random_tensor({50, 4}, seed, 1.0f, 2.0f)}, {"h0", random_tensor({4}, seed + 9, 0, 0)}};
    CHECK(max_relative_difference(s.run(in).at("h_last"), plain.run(in).at("h_last")) < 1e-5);
  }
  REQUIRE(s.stats().jit.compiled_entries > 0);
  CHECK(s.stats().jit.range_canaries == 0);
  CHECK(range_events(model) == 0);
}
