// Loop-invariant hoisting: in a loop trace, the steps that read only values
// no instruction of the body writes (here a weight Transpose and a sum of two
// bias inputs) run on the first iteration of each run and their results are
// reused; the outputs stay equal to the interpreter's across calls whose
// invariant inputs change, and with the option off nothing is hoisted.
#include <catch2/catch.hpp>

#include <string>

#include "jit_test_models.h"

using canary::NamedTensors;
using canary::Tensor;
using namespace canary::test;

namespace {

// An RNN cell as an exported loop would write it: the weight transposed and
// the biases summed inside the body, on every iteration. `late` is computed
// after the Transpose's last use, so the allocator may give it the same register.
const char* kRnnLoop = R"(canary v1
graph main(xs: f32[T, N, 3], h0: f32[N, 2], wx: f32[2, 3], bx: f32[2], bh: f32[2]) -> (h_last) {
  const wh: f32[2, 2] = [0.9, -0.1, 0.1, 0.9]
  const keep_going: bool[] = [true]
  steps: i64[1] = Shape(xs) {end = 1}
  h_last: f32[N, 2] = Loop(steps, keep_going, h0) {
    body = graph step(i: i64[], cond: bool[], h: f32[N, 2]) -> (cond, h_next) {
      wxt = Transpose(wx) {perm = [1, 0]}
      b = Add(bx, bh)
      x_t: f32[N, 3] = Gather(xs, i) {axis = 0}
      a = MatMul(x_t, wxt)
      r = MatMul(h, wh)
      s = Add(a, r)
      late = Transpose(s) {perm = [1, 0]}
      back = Transpose(late) {perm = [1, 0]}
      s2 = Add(back, b)
      h_next: f32[N, 2] = Tanh(s2)
    }
  } "rnn"
}
)";

NamedTensors rnn_inputs(std::int64_t t, std::int64_t n, std::uint32_t seed) {
  return {{"xs", random_tensor({t, n, 3}, seed)},
          {"h0", random_tensor({n, 2}, seed + 1)},
          {"wx", random_tensor({2, 3}, seed + 2, -1.0f, 1.0f)},
          {"bx", random_tensor({2}, seed + 3)},
          {"bh", random_tensor({2}, seed + 4)}};
}

std::string listings(const canary::Model& m) {
  std::string all;
  for (const auto& a : m.jit_report().anchors)
    for (const auto& v : a.variants) all += v.listing + "\n";
  return all;
}

}  // namespace

TEST_CASE("jit: a loop trace hoists its invariant steps and matches the interpreter", "[unit][jit][api][hoisting]") {
  canary::Runtime rt(jit_options(2)), plain_rt(interpreter_options());
  auto model = rt.load_text(kRnnLoop);
  auto s = model.session();
  auto p = plain_rt.load_text(kRnnLoop).session();
  // New weights and biases on every call: hoisted results never outlive a run.
  for (std::uint32_t call = 0; call < 8; ++call) {
    INFO("call " << call);
    const NamedTensors in = rnn_inputs(call % 2 ? 40 : 25, 4, 10 * call + 1);
    const Tensor got = s.run(in).at("h_last");
    const Tensor want = p.run(in).at("h_last");
    CHECK(max_relative_difference(got, want) < 1e-6);
  }
  const std::string listing = listings(model);
  INFO(listing);
  CHECK(listing.find("loop trace") != std::string::npos);
  // The weight Transpose and the bias sum (a fused group) are hoisted.
  CHECK(listing.find("'wxt' (Transpose) [hoisted") != std::string::npos);
  CHECK(listing.find("1 ops at pcs") != std::string::npos);
  std::size_t hoisted = 0;
  for (std::size_t at = listing.find("[hoisted"); at != std::string::npos; at = listing.find("[hoisted", at + 1))
    ++hoisted;
  CHECK(hoisted >= 2);
  // The body's varying work is not.
  CHECK(listing.find("'x_t' (Gather) [hoisted") == std::string::npos);
  CHECK(listing.find("'a' (MatMul) [hoisted") == std::string::npos);
  CHECK(listing.find("'late' (Transpose) [hoisted") == std::string::npos);
  CHECK(s.stats().jit.compiled_entries > 0);
}

TEST_CASE("jit: with hoisting off a loop trace runs every step on every iteration", "[unit][jit][api][hoisting]") {
  canary::Options o = jit_options(2);
  o.jit.hoist_loop_invariants = false;
  canary::Runtime rt(o), plain_rt(interpreter_options());
  auto model = rt.load_text(kRnnLoop);
  auto s = model.session();
  auto p = plain_rt.load_text(kRnnLoop).session();
  for (std::uint32_t call = 0; call < 4; ++call) {
    const NamedTensors in = rnn_inputs(30, 3, call + 100);
    CHECK(max_relative_difference(s.run(in).at("h_last"), p.run(in).at("h_last")) < 1e-6);
  }
  const std::string listing = listings(model);
  CHECK(listing.find("loop trace") != std::string::npos);
  CHECK(listing.find("[hoisted") == std::string::npos);
}
