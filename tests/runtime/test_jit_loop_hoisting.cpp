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

// True when one line of `text` contains every one of `parts`.
bool has_line(const std::string& text, std::initializer_list<const char*> parts) {
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    bool all = true;
    for (const char* p : parts) all = all && line.find(p) != std::string::npos;
    if (all) return true;
    start = end + 1;
  }
  return false;
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
  // The weight Transpose and the bias sum (a one-op fused group of two inputs) are hoisted.
  CHECK(listing.find("'wxt' (Transpose) [hoisted") != std::string::npos);
  // (As a fused group, or as a kernel call once the anchor is on the unfused tier.)
  CHECK((has_line(listing, {"fused group", "1 ops at pcs", "2 inputs", "add(%0,%1) [hoisted"}) ||
         has_line(listing, {"'b' (Add) [hoisted"})));
  // The body's varying work is not.
  CHECK(listing.find("'x_t' (Gather) [hoisted") == std::string::npos);
  CHECK(listing.find("'a' (MatMul) [hoisted") == std::string::npos);
  CHECK(listing.find("'late' (Transpose) [hoisted") == std::string::npos);
  CHECK(s.stats().jit.compiled_entries > 0);
  // The bias sum's register is reused by the last group, which reads the sum
  // first: a restore that handed that group the wrong buffer showed up as a
  // layout exit there.
  const std::string log = event_messages(model);
  INFO(log);
  CHECK(log.find("left at layout") == std::string::npos);
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

TEST_CASE("jit: a branch that flips mid-iteration after hoisted steps leaves the interpreter the right values",
          "[unit][jit][api][hoisting]") {
  // Iterations before k take one branch, the rest the other: the trace
  // recorded early exits at the branch, after its hoisted steps ran or were
  // restored, and the interpreter finishes the iteration and the loop.
  const char* text = R"(canary v1
graph main(xs: f32[T, N, 3], h0: f32[N, 2], wx: f32[2, 3], bx: f32[2], bh: f32[2], k: i64[]) -> (h_last) {
  const keep_going: bool[] = [true]
  const half: f32[] = [0.5]
  steps: i64[1] = Shape(xs) {end = 1}
  h_last: f32[N, 2] = Loop(steps, keep_going, h0) {
    body = graph step(i: i64[], cond: bool[], h: f32[N, 2]) -> (cond, h_next) {
      wxt = Transpose(wx) {perm = [1, 0]}
      b = Add(bx, bh)
      x_t: f32[N, 3] = Gather(xs, i) {axis = 0}
      a = MatMul(x_t, wxt)
      r = Mul(h, half)
      s = Add(a, r)
      s2 = Add(s, b)
      early = Less(i, k)
      h_next: f32[N, 2] = If(early) {
        else_branch = graph later() -> (z) {
          z = Relu(s2)
        },
        then_branch = graph sooner() -> (z) {
          z = Tanh(s2)
        }
      }
    }
  } "rnn"
}
)";
  canary::Runtime rt(jit_options(2)), plain_rt(interpreter_options());
  auto model = rt.load_text(text);
  auto s = model.session();
  auto p = plain_rt.load_text(text).session();
  for (std::uint32_t call = 0; call < 10; ++call) {
    INFO("call " << call);
    NamedTensors in = rnn_inputs(30, 3, 7 * call + 5);
    in.erase("wh");
    in["k"] = Tensor::scalar<std::int64_t>(static_cast<std::int64_t>(5 + 2 * call));
    CHECK(max_relative_difference(s.run(in).at("h_last"), p.run(in).at("h_last")) < 1e-6);
  }
  const std::string log = event_messages(model);
  INFO(log);
  // The loop trace hoisted its invariants and left at the branch mid-iteration
  // (later iterations continue in a side trace from the branch).
  CHECK(log.find("loop-invariant steps hoisted") != std::string::npos);
  CHECK(log.find("left at branch") != std::string::npos);
  CHECK(s.stats().jit.deopts > 0);
  CHECK(s.stats().jit.side_trace_entries > 0);
}

TEST_CASE("jit: a hoisted result read by the fused group that then reuses its register", "[unit][jit][api][hoisting]") {
  // b (hoisted) is last read by the group {Add, Tanh, Add}, where Tanh's
  // result takes b's register (the only one freed just before it): that
  // group both reads the restored b and writes the register, and b has the
  // group's shape, so a wrong buffer there would not even change the layout.
  const char* text = R"(canary v1
graph main(xs: f32[T, N, 2], h0: f32[N, 2], bx: f32[N, 2], bh: f32[N, 2]) -> (h_last) {
  const keep_going: bool[] = [true]
  const half: f32[] = [0.5]
  steps: i64[1] = Shape(xs) {end = 1}
  h_last: f32[N, 2] = Loop(steps, keep_going, h0) {
    body = graph step(i: i64[], cond: bool[], h: f32[N, 2]) -> (cond, h_next) {
      b = Mul(bx, bh)
      x_t: f32[N, 2] = Gather(xs, i) {axis = 0}
      r = Transpose(h) {perm = [1, 0]}
      q = Transpose(r) {perm = [1, 0]}
      s = Add(x_t, q)
      t = Mul(s, half)
      s2 = Add(t, b)
      u = Tanh(s2)
      h_next: f32[N, 2] = Add(u, t)
    }
  } "rnn"
}
)";
  canary::Runtime rt(jit_options(2)), plain_rt(interpreter_options());
  auto model = rt.load_text(text);
  auto s = model.session();
  auto p = plain_rt.load_text(text).session();
  for (std::uint32_t call = 0; call < 6; ++call) {
    INFO("call " << call);
    const NamedTensors in{{"xs", random_tensor({20, 3, 2}, call + 1)},
                          {"h0", random_tensor({3, 2}, call + 2)},
                          {"bx", random_tensor({3, 2}, call + 3)},
                          {"bh", random_tensor({3, 2}, call + 4)}};
    CHECK(max_relative_difference(s.run(in).at("h_last"), p.run(in).at("h_last")) < 1e-6);
  }
  const std::string log = event_messages(model);
  INFO(log);
  CHECK(log.find("loop-invariant steps hoisted") != std::string::npos);
  CHECK(s.stats().jit.deopts == 0);
}
