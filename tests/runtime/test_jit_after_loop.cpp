// The ops after a top-level loop get a region of their own: the program
// has a continuation anchor after the Loop (or Scan), which turns hot like
// the entry's, so a classifier head after an RNN loop runs as a compiled
// trace instead of always in the interpreter. Outputs agree with the
// interpreter and the report names the anchor.
#include <catch2/catch.hpp>

#include "jit_test_models.h"

using canary::NamedTensors;
using canary::Runtime;
using canary::Session;
using canary::Tensor;
using namespace canary::test;

namespace {

// An RNN over `steps` iterations, then a head of elementwise ops and a MatMul.
const char* kRnnWithHead = R"(canary v1
graph main(h0: f32[N, 4], steps: i64[], b: f32[4]) -> (score) {
  const keep_going: bool[] = [true]
  const w: f32[4, 4] = [0.5, -0.25, 0.1, 0, 0.2, 0.3, -0.1, 0.05, 0, 0.1, 0.4, -0.2, 0.1, 0, 0.2, 0.3]
  const v: f32[4, 1] = [0.5, -1, 0.25, 2]
  const half: f32[] = [0.5]
  h_last: f32[N, 4] = Loop(steps, keep_going, h0) {
    body = graph step(i: i64[], cond: bool[], h: f32[N, 4]) -> (cond, h_next) {
      a = MatMul(h, w)
      h_next: f32[N, 4] = Tanh(a)
    }
  } "rnn"
  z = Add(h_last, b)
  r = Relu(z)
  m = Mul(r, half)
  logits = MatMul(m, v)
  score = Sigmoid(logits)
}
)";

// The same head after a loop that ends the graph: no ops follow, no anchor.
const char* kRnnOnly = R"(canary v1
graph main(h0: f32[N, 4], steps: i64[]) -> (h_last) {
  const keep_going: bool[] = [true]
  const w: f32[4, 4] = [0.5, -0.25, 0.1, 0, 0.2, 0.3, -0.1, 0.05, 0, 0.1, 0.4, -0.2, 0.1, 0, 0.2, 0.3]
  h_last: f32[N, 4] = Loop(steps, keep_going, h0) {
    body = graph step(i: i64[], cond: bool[], h: f32[N, 4]) -> (cond, h_next) {
      a = MatMul(h, w)
      h_next: f32[N, 4] = Tanh(a)
    }
  } "rnn"
}
)";

NamedTensors head_inputs(std::int64_t n, std::int64_t steps, std::uint32_t seed) {
  return {{"h0", random_tensor({n, 4}, seed)},
          {"steps", Tensor::scalar<std::int64_t>(steps)},
          {"b", random_tensor({4}, seed + 1)}};
}

const canary::AnchorReport* anchor_named(const canary::JitReport& r, const std::string& name) {
  for (const auto& a : r.anchors)
    if (a.name == name) return &a;
  return nullptr;
}

}  // namespace

TEST_CASE("jit: the ops after a top-level loop run as a compiled trace of their own", "[unit][jit][api][loop]") {
  Runtime rt(jit_options(2)), ref_rt(interpreter_options());
  const canary::Model model = rt.load_text(kRnnWithHead);
  Session s = model.session(), ref = ref_rt.load_text(kRnnWithHead).session();
  for (std::uint32_t call = 0; call < 6; ++call) {
    const NamedTensors in = head_inputs(8, 5, call);
    check_same_values(s.run(in).at("score"), ref.run(in).at("score"), 1e-6);
  }
  const canary::JitReport report = model.jit_report();
  const canary::AnchorReport* after = anchor_named(report, "after rnn");
  REQUIRE(after);
  CHECK(after->kind == "continuation");
  REQUIRE(after->variants.size() == 1);
  const canary::VariantReport& v = after->variants.front();
  CHECK(v.entries >= 3);
  // The head's Add, Relu and Mul fuse; the MatMul is a kernel step; Sigmoid follows it.
  CHECK(v.groups.size() >= 1);
  CHECK(std::find(v.kernels.begin(), v.kernels.end(), "logits") != v.kernels.end());
  // And the disassembly shows the anchor after the loop's exit.
  CHECK(model.disassemble().find("continuation") != std::string::npos);
}

TEST_CASE("jit: a loop that ends the graph gets no continuation anchor", "[unit][jit][api][loop]") {
  Runtime rt(jit_options(2));
  const canary::Model model = rt.load_text(kRnnOnly);
  for (const auto& a : model.jit_report().anchors) CHECK(a.kind != "continuation");
  CHECK(model.disassemble().find("continuation") == std::string::npos);
}
