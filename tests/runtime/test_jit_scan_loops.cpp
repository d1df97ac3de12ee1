// Loop traces over bodies with scan steps: a Scan's per-iteration slices
// and the appends of Scan and Loop scan outputs run inside the compiled
// loop, on the interpreter's buffers, so the whole loop iterates in
// compiled code and stacks what the interpreter would.
#include <catch2/catch.hpp>

#include "jit_test_models.h"

using canary::Error;
using canary::ErrorKind;
using canary::NamedTensors;
using canary::Tensor;
using namespace canary::test;

namespace {

// Two scanned inputs (one read in reverse), a carried state and two scan
// outputs (one stacked in reverse).
const char* kScan = R"(canary v1
graph scan(s0: f32[B, 4], xs: f32[B, T, 3], zs: f32[T, B, 4]) -> (s_final, ys_fwd, ys_rev) {
  const w: f32[3, 4] = [0.18, 0.07, -0.39, 0.21, 0.17, -0.10, -0.72, 0.52, -0.95, -0.18, -0.27, 0.45]
  const half: f32[] = [0.5]
  s_final: f32[B, 4], ys_fwd: f32[B, T, 4], ys_rev: f32[T, B, 4] = Scan(s0, xs, zs) {
    body = graph scan_body(s_in: f32[B, 4], xt: f32[B, 3], zt: f32[B, 4]) -> (s_out, y_fwd, y_rev) captures (w, half) {
      xw: f32[B, 4] = MatMul(xt, w)
      zh: f32[B, 4] = Mul(zt, half)
      pre0: f32[B, 4] = Add(s_in, xw)
      pre: f32[B, 4] = Add(pre0, zh)
      s_out: f32[B, 4] = Tanh(pre)
      y_fwd: f32[B, 4] = Mul(s_out, half)
      y_rev: f32[B, 4] = Identity(s_out)
    },
    num_scan_inputs = 2,
    scan_input_axes = [1, 0],
    scan_input_directions = [0, 1],
    scan_output_axes = [1, 0],
    scan_output_directions = [0, 1]
  } "rnn"
}
)";

// An RNN written as a Loop that also stacks every step's output.
const char* kLoopWithScanOutput = R"(canary v1
graph main(h0: f32[N, 4], steps: i64[]) -> (h_last, hs) {
  const keep_going: bool[] = [true]
  const w: f32[4, 4] = [0.5, -0.25, 0.1, 0, 0.2, 0.3, -0.1, 0.05, 0, 0.1, 0.4, -0.2, 0.1, 0, 0.2, 0.3]
  const two: f32[] = [2]
  h_last: f32[N, 4], hs: f32[T, N, 4] = Loop(steps, keep_going, h0) {
    body = graph step(i: i64[], cond: bool[], h: f32[N, 4]) -> (cond, h_next, y) {
      a = MatMul(h, w)
      h_next: f32[N, 4] = Tanh(a)
      y: f32[N, 4] = Mul(h_next, two)
    }
  } "rnn"
}
)";

NamedTensors scan_inputs(std::int64_t b, std::int64_t t, std::uint32_t seed) {
  return {{"s0", random_tensor({b, 4}, seed)},
          {"xs", random_tensor({b, t, 3}, seed + 1)},
          {"zs", random_tensor({t, b, 4}, seed + 2)}};
}

void check_outputs(const NamedTensors& got, const NamedTensors& want) {
  REQUIRE(got.size() == want.size());
  for (const auto& [name, tensor] : want) {
    INFO("output " << name);
    check_same_values(got.at(name), tensor, 1e-6);
  }
}

std::string loop_listing(const canary::Model& m) {
  for (const auto& a : m.jit_report().anchors)
    if (a.kind == "loop" && !a.variants.empty()) return a.variants.front().listing;
  return "";
}

}  // namespace

TEST_CASE("jit: a Scan body compiles as a loop trace with its slices and appends", "[unit][jit][api][scan]") {
  canary::Runtime rt(jit_options(2)), plain_rt(interpreter_options());
  auto model = rt.load_text(kScan);
  auto s = model.session();
  auto p = plain_rt.load_text(kScan).session();
  // T changes: the loop trace learns it symbolic, so the reversed input and
  // output index from trip counts other than the recorded one.
  const std::pair<std::int64_t, std::int64_t> shapes[] = {{2, 16}, {2, 16}, {2, 16}, {2, 9}, {2, 12},
                                                          {2, 9},  {2, 12}, {2, 1},  {2, 16}};
  std::uint32_t seed = 1;
  for (const auto& [b, t] : shapes) {
    INFO("B " << b << ", T " << t);
    const NamedTensors in = scan_inputs(b, t, seed += 10);
    check_outputs(s.run(in), p.run(in));
  }
  const std::uint64_t before = s.stats().instructions_executed;
  const NamedTensors in = scan_inputs(2, 11, 99);
  check_outputs(s.run(in), p.run(in));
  CHECK(s.stats().instructions_executed - before < 12);  // T = 11, never seen: all 11 iterations compiled
  const std::string listing = loop_listing(model);
  INFO(listing);
  CHECK(listing.find("loop trace") != std::string::npos);
  CHECK(listing.find("scan slice pc") != std::string::npos);
  CHECK(listing.find("scan append pc") != std::string::npos);
  // Iterations ran in compiled code: far fewer instructions interpreted.
  CHECK(s.stats().instructions_executed * 4 < p.stats().instructions_executed);
}

TEST_CASE("jit: a Loop's scan output is stacked by the compiled loop", "[unit][jit][api][scan]") {
  canary::Runtime rt(jit_options(2)), plain_rt(interpreter_options());
  auto model = rt.load_text(kLoopWithScanOutput);
  auto s = model.session();
  auto p = plain_rt.load_text(kLoopWithScanOutput).session();
  for (std::uint32_t call = 0; call < 5; ++call) {
    INFO("call " << call);
    const NamedTensors in{{"h0", random_tensor({3, 4}, 70 + call)},
                          {"steps", Tensor::scalar<std::int64_t>(12 + 3 * call)}};
    const NamedTensors got = s.run(in);
    CHECK(got.at("hs").shape() == canary::Shape{12 + 3 * call, 3, 4});
    check_outputs(got, p.run(in));
  }
  CHECK(loop_listing(model).find("scan append pc") != std::string::npos);
  CHECK(s.stats().jit.deopts == 0);
  CHECK(s.stats().instructions_executed * 4 < p.stats().instructions_executed);
}

TEST_CASE("jit: a stacked scan output over the tensor limit fails as in the interpreter", "[unit][jit][api][scan]") {
  // 12 floats per step: 40 steps stack 1920 bytes, over the 1024-byte limit
  // at the 22nd append, which the compiled loop runs.
  canary::Options o = jit_options(2);
  o.max_tensor_bytes = 1024;
  canary::Options plain_o = interpreter_options();
  plain_o.max_tensor_bytes = 1024;
  canary::Runtime rt(o), plain_rt(plain_o);
  auto model = rt.load_text(kLoopWithScanOutput);
  auto s = model.session();
  auto p = plain_rt.load_text(kLoopWithScanOutput).session();
  const auto inputs = [](std::int64_t steps) {
    return NamedTensors{{"h0", random_tensor({3, 4}, 5)}, {"steps", Tensor::scalar<std::int64_t>(steps)}};
  };
  for (int call = 0; call < 3; ++call) check_outputs(s.run(inputs(10)), p.run(inputs(10)));
  REQUIRE(loop_listing(model).find("scan append pc") != std::string::npos);
  std::string jit_error, plain_error;
  try {
    s.run(inputs(40));
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Resource);
    jit_error = e.what();
  }
  try {
    p.run(inputs(40));
  } catch (const Error& e) {
    plain_error = e.what();
  }
  CHECK(!jit_error.empty());
  CHECK(jit_error == plain_error);
  CHECK(jit_error.find("stacked scan output exceeds the limit of 1024 bytes") != std::string::npos);
  CHECK(s.stats().jit.deopts == 1);  // the compiled append failed; the interpreter re-ran it and reported
  // The session goes on.
  check_outputs(s.run(inputs(10)), p.run(inputs(10)));
}

TEST_CASE("jit: a scan output whose shape changes mid-loop fails as in the interpreter", "[unit][jit][api][scan]") {
  // Each iteration appends Range(0, n): n is 1 up to iteration 9 and 2 from
  // iteration 10, which the compiled loop reaches; its append refuses the
  // new shape and the interpreter re-runs it and reports the error.
  const char* kGrowing = R"(canary v1
graph main(steps: i64[]) -> (ys) {
  const keep_going: bool[] = [true]
  const zero: i64[] = [0]
  const one: i64[] = [1]
  const nine: i64[] = [9]
  ys: i64[T, K] = Loop(steps, keep_going) {
    body = graph step(i: i64[], cond: bool[]) -> (cond, r) {
      late = Greater(i, nine)
      extra = Where(late, one, zero)
      n = Add(one, extra)
      r: i64[K] = Range(zero, n, one)
    }
  } "grow"
}
)";
  canary::Runtime rt(jit_options(2)), plain_rt(interpreter_options());
  auto model = rt.load_text(kGrowing);
  auto s = model.session();
  auto p = plain_rt.load_text(kGrowing).session();
  const auto steps = [](std::int64_t n) { return NamedTensors{{"steps", Tensor::scalar<std::int64_t>(n)}}; };
  for (int call = 0; call < 3; ++call) check_outputs(s.run(steps(10)), p.run(steps(10)));
  REQUIRE(loop_listing(model).find("scan append pc") != std::string::npos);
  const std::uint64_t deopts = s.stats().jit.deopts;
  std::string jit_error, plain_error;
  try {
    s.run(steps(15));
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Shape);
    jit_error = e.what();
  }
  try {
    p.run(steps(15));
  } catch (const Error& e) {
    plain_error = e.what();
  }
  CHECK_FALSE(jit_error.empty());
  CHECK(jit_error == plain_error);
  CHECK(s.stats().jit.deopts == deopts + 1);  // the compiled append exited; the interpreter reported
  check_outputs(s.run(steps(10)), p.run(steps(10)));  // and the session goes on
}
