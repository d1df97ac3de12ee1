// Contraction epilogues in planning: which unary ops after a MatMul, Gemm or
// Conv become its oneDNN epilogue, and which stay fused groups because the
// contraction's result is needed elsewhere, the op is not one oneDNN computes
// as the reference does, or an option asks for checks only fused kernels make.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "trace_recording.h"
#include "jit/plan.h"
#include "jit/plan_contraction.h"

using namespace canary;
using namespace canary::jit;
using canary::jit::test::record;
using canary::jit::test::Recorded;

namespace {

Recorded record_matmul(const std::string& body, const std::string& outputs = "y") {
  const std::string text = "canary v1\ngraph main(x: f32[N, 4], w: f32[4, 3]) -> (" + outputs + ") {\n" + body + "}\n";
  return record(text.c_str(), {Tensor::empty(DType::F32, {5, 4}), Tensor::empty(DType::F32, {4, 3})});
}

std::size_t count_steps(const Plan& plan, StepKind kind) {
  std::size_t n = 0;
  for (const Step& s : plan.steps) n += s.kind == kind;
  return n;
}

}  // namespace

TEST_CASE("contraction epilogues absorb the unary run after a MatMul; the rest stays a group",
          "[unit][jit][plan][epilogue]") {
  const Recorded r = record_matmul(R"(  m = MatMul(x, w)
  a = Relu(m)
  t = Abs(a)
  y = Transpose(t) {perm = [1, 0]}
)");
  const Plan plan = plan_trace(*r.program, r.trace, {}, PlanOptions{});
  REQUIRE(plan.steps.size() == 2);
  REQUIRE(plan.steps[0].kind == StepKind::Contraction);
  CHECK(plan.steps[1].kind == StepKind::Kernel);
  const ContractionStep& c = plan.contractions.at(0);
  CHECK(c.info.kind == vm::ContractionInfo::Kind::MatMul);
  REQUIRE(c.epilogue.size == 2);
  CHECK(c.epilogue.steps[0].op == kernels::EpilogueOp::Relu);
  CHECK(c.epilogue.steps[1].op == kernels::EpilogueOp::Abs);
  CHECK(c.epilogue_pcs.size() == 2);
  // The separate group computes the same two ops, and its layout exit resumes at the first.
  REQUIRE(plan.fused.size() == 1);
  CHECK(c.separate.kind == StepKind::Fused);
  CHECK(plan.fused.at(c.separate.fused).pcs == c.epilogue_pcs);
  CHECK(plan.exits.at(c.separate.exit).pc == c.epilogue_pcs.front());
  CHECK(plan.steps[0].exit == c.separate.exit);
  CHECK(plan.fused_ops == 2);
  CHECK(plan.describe(*r.program).find("matmul + relu + abs (oneDNN post-ops on large results), else fused group") !=
        std::string::npos);
}

TEST_CASE("contraction epilogues: an op that would join the chain's group leaves it to the group",
          "[unit][jit][plan][epilogue]") {
  SECTION("an elementwise op of the same shape") {
    const Recorded r = record_matmul("  m = MatMul(x, w)\n  a = Relu(m)\n  y = Tanh(a)\n");
    const Plan plan = plan_trace(*r.program, r.trace, {}, PlanOptions{});
    CHECK(count_steps(plan, StepKind::Contraction) == 0);
    REQUIRE(plan.fused.size() == 1);
    CHECK(plan.fused[0].pcs.size() == 2);
  }
  SECTION("a row op that takes the chain as its prologue") {
    const Recorded r = record_matmul("  m = MatMul(x, w)\n  a = Relu(m)\n  y = Softmax(a) {axis = -1}\n");
    const Plan plan = plan_trace(*r.program, r.trace, {}, PlanOptions{});
    CHECK(count_steps(plan, StepKind::Contraction) == 0);
    CHECK(count_steps(plan, StepKind::Row) == 1);
  }
  SECTION("five absorbable ops: four would fit, the fifth would still need the pass") {
    const Recorded r = record_matmul(
        "  m = MatMul(x, w)\n  a = Relu(m)\n  b = Abs(a)\n  c = Relu(b)\n  d = Abs(c)\n  y = Relu(d)\n");
    const Plan plan = plan_trace(*r.program, r.trace, {}, PlanOptions{});
    CHECK(count_steps(plan, StepKind::Contraction) == 0);
    REQUIRE(plan.fused.size() == 1);
    CHECK(plan.fused[0].pcs.size() == 5);
  }
}

TEST_CASE("contraction epilogues: a result needed after the epilogue is not absorbed",
          "[unit][jit][plan][epilogue]") {
  SECTION("read again later") {
    const Recorded r = record_matmul("  m = MatMul(x, w)\n  a = Relu(m)\n  y = Add(a, m)\n");
    const Plan plan = plan_trace(*r.program, r.trace, {}, PlanOptions{});
    CHECK(count_steps(plan, StepKind::Contraction) == 0);
    CHECK(count_steps(plan, StepKind::Kernel) == 1);
  }
  SECTION("a graph output") {
    const Recorded r = record_matmul("  m = MatMul(x, w)\n  y = Relu(m)\n", "y, m");
    const Plan plan = plan_trace(*r.program, r.trace, {}, PlanOptions{});
    CHECK(count_steps(plan, StepKind::Contraction) == 0);
  }
  SECTION("an intermediate of the epilogue read again") {
    // Abs's input is also read by Add, so the chain would stop at Relu, and
    // Abs would then need a pass over the result anyway: all stay one group.
    const Recorded r = record_matmul("  m = MatMul(x, w)\n  a = Relu(m)\n  t = Abs(a)\n  y = Add(t, a)\n");
    const Plan plan = plan_trace(*r.program, r.trace, {}, PlanOptions{});
    CHECK(count_steps(plan, StepKind::Contraction) == 0);
    REQUIRE(plan.fused.size() == 1);
    CHECK(plan.fused[0].pcs.size() == 3);
  }
}

TEST_CASE("contraction epilogues: only ops oneDNN computes as the reference does",
          "[unit][jit][plan][epilogue]") {
  SECTION("Exp, Tanh, Sigmoid and Sqrt stay fused groups") {
    for (const char* op : {"Exp", "Tanh", "Sigmoid", "Sqrt"}) {
      INFO(op);
      const Recorded r = record_matmul(std::string("  m = MatMul(x, w)\n  y = ") + op + "(m)\n");
      CHECK(count_steps(plan_trace(*r.program, r.trace, {}, PlanOptions{}), StepKind::Contraction) == 0);
    }
  }
  SECTION("Clip with crossing bounds stays a fused group") {
    const Recorded r = record_matmul(R"(  const lo: f32[] = [2]
  const hi: f32[] = [1]
  m = MatMul(x, w)
  y = Clip(m, lo, hi)
)");
    CHECK(count_steps(plan_trace(*r.program, r.trace, {}, PlanOptions{}), StepKind::Contraction) == 0);
  }
  SECTION("LeakyRelu with a negative slope stays a fused group (zeros would change sign)") {
    const Recorded r = record_matmul("  m = MatMul(x, w)\n  y = LeakyRelu(m) {alpha = -0.5}\n");
    CHECK(count_steps(plan_trace(*r.program, r.trace, {}, PlanOptions{}), StepKind::Contraction) == 0);
  }
  SECTION("Clip, LeakyRelu (slope 0 is a Relu) and Abs are absorbed, up to four") {
    const Recorded r = record_matmul(R"(  const lo: f32[] = [-1]
  const hi: f32[] = [1]
  m = MatMul(x, w)
  c = Clip(m, lo, hi)
  l = LeakyRelu(c) {alpha = 0.0}
  s = LeakyRelu(l) {alpha = 0.25}
  y = Abs(s)
)");
    const Plan plan = plan_trace(*r.program, r.trace, {}, PlanOptions{});
    REQUIRE(count_steps(plan, StepKind::Contraction) == 1);
    const kernels::Epilogue& e = plan.contractions[0].epilogue;
    REQUIRE(e.size == kernels::Epilogue::kMaxSteps);
    CHECK(e.steps[0].op == kernels::EpilogueOp::Clip);
    CHECK(e.steps[0].alpha == -1.0f);
    CHECK(e.steps[0].beta == 1.0f);
    CHECK(e.steps[1].op == kernels::EpilogueOp::Relu);
    CHECK(e.steps[2].op == kernels::EpilogueOp::LeakyRelu);
    CHECK(e.steps[2].alpha == 0.25f);
    CHECK(e.steps[3].op == kernels::EpilogueOp::Abs);
    CHECK(count_steps(plan, StepKind::Fused) == 0);
  }
}

TEST_CASE("contraction epilogues: off, unfused, or with value canaries the ops stay groups",
          "[unit][jit][plan][epilogue]") {
  const Recorded r = record_matmul("  m = MatMul(x, w)\n  y = Relu(m)\n");
  REQUIRE(count_steps(plan_trace(*r.program, r.trace, {}, PlanOptions{}), StepKind::Contraction) == 1);
  PlanOptions off;
  off.contraction_epilogues = false;
  PlanOptions unfused;
  unfused.tier = Tier::Unfused;
  PlanOptions nonfinite;
  nonfinite.value_canaries = true;
  PlanOptions ranges;
  ranges.range_canaries = true;
  for (const PlanOptions& po : {off, unfused, nonfinite, ranges})
    CHECK(count_steps(plan_trace(*r.program, r.trace, {}, po), StepKind::Contraction) == 0);
}

TEST_CASE("contraction epilogues: Gemm and Conv, and an output that takes over an input's register",
          "[unit][jit][plan][epilogue]") {
  const Recorded r = record(R"(canary v1
graph main(x: f32[N, 3, 16], w: f32[8, 3, 3], g: f32[8, 4]) -> (y) {
  const two: f32[] = [2]
  x2 = Mul(x, two)
  h = Conv(x2, w) {pads = [1, 1]}
  a = Relu(h)
  t = Transpose(a) {perm = [0, 2, 1]}
  p = ReduceMean(t) {axes = [1], keepdims = 0}
  q = Gemm(p, g)
  y = Abs(q)
}
)",
                            {Tensor::empty(DType::F32, {2, 3, 16}), Tensor::empty(DType::F32, {8, 3, 3}),
                             Tensor::empty(DType::F32, {8, 4})});
  const Plan plan = plan_trace(*r.program, r.trace, {}, PlanOptions{});
  REQUIRE(plan.contractions.size() == 2);
  CHECK(plan.contractions[0].info.kind == vm::ContractionInfo::Kind::Conv);
  CHECK(plan.contractions[0].info.conv != nullptr);
  CHECK(plan.contractions[1].info.kind == vm::ContractionInfo::Kind::Gemm);
  CHECK(plan.contractions[1].info.gemm != nullptr);
  // x2 dies at the Conv, so the linear-scan allocator gives Relu's result its
  // register: the kernel then writes to scratch and swaps (the driver's alias
  // path, which tests/runtime/test_jit_contraction_epilogues.cpp runs).
  const vm::RegId conv_input = r.trace.ops[1].inputs[0].reg;
  CHECK(plan.contractions[0].output == conv_input);
  CHECK(plan.contractions[0].output_aliases_input);
}

TEST_CASE("contraction epilogues: post-ops per call on large results only", "[unit][jit][epilogue]") {
  ContractionStep relu;
  relu.epilogue.append({kernels::EpilogueOp::Relu});
  relu.min_elements = std::int64_t{1} << 18;
  ContractionStep leaky = relu;
  leaky.epilogue.steps[0] = {kernels::EpilogueOp::LeakyRelu, 0.1f};
  using Shape = std::vector<std::int64_t>;
  SECTION("MatMul: batch dims of either operand count") {
    relu.info.kind = leaky.info.kind = vm::ContractionInfo::Kind::MatMul;
    CHECK_FALSE(prefer_epilogue(leaky, Shape{64, 32}, Shape{32, 32}, 0));          // 2^11 results
    CHECK(prefer_epilogue(leaky, Shape{1024, 32}, Shape{32, 256}, 0));             // 2^18
    CHECK(prefer_epilogue(leaky, Shape{512, 32}, Shape{8, 32, 64}, 0));            // 8 x 512 x 64 = 2^18
    CHECK_FALSE(prefer_epilogue(leaky, Shape{512, 32}, Shape{1, 32, 64}, 0));      // 2^15
    // Relu scans its operands first: only when they are no larger than the result.
    CHECK(prefer_epilogue(relu, Shape{1024, 32}, Shape{32, 256}, 0));
    CHECK_FALSE(prefer_epilogue(relu, Shape{1024, 512}, Shape{512, 256}, 0));      // 2^19 + 2^17 > 2^18
    CHECK_FALSE(prefer_epilogue(relu, Shape{0, 32}, Shape{32, 256}, 0));
  }
  SECTION("Conv: strides shrink the result") {
    kernels::ConvParams stride1, stride2;
    stride2.strides = {2, 2};
    relu.info.kind = vm::ContractionInfo::Kind::Conv;
    relu.info.conv = &stride1;
    CHECK(prefer_epilogue(relu, Shape{8, 3, 128, 128}, Shape{16, 3, 3, 3}, 16));   // 8 x 16 x 2^14 = 2^21
    relu.info.conv = &stride2;
    CHECK(prefer_epilogue(relu, Shape{8, 3, 128, 128}, Shape{16, 3, 3, 3}, 16));   // 2^19
    CHECK_FALSE(prefer_epilogue(relu, Shape{1, 3, 128, 128}, Shape{16, 3, 3, 3}, 16));  // 2^16
  }
  SECTION("Gemm: transposes and the bias") {
    kernels::GemmParams p;
    p.trans_b = true;
    relu.info.kind = vm::ContractionInfo::Kind::Gemm;
    relu.info.gemm = &p;
    CHECK(prefer_epilogue(relu, Shape{1024, 16}, Shape{256, 16}, 256));            // [1024, 256]
    CHECK_FALSE(prefer_epilogue(relu, Shape{1024, 16}, Shape{256, 16}, 1 << 18));  // a bias as large as the result
    CHECK_FALSE(prefer_epilogue(relu, Shape{1024}, Shape{256, 16}, 0));            // not a Gemm shape
  }
}

TEST_CASE("contraction epilogues: the threshold comes from the options or the L2 cache", "[unit][jit][epilogue]") {
  const Recorded r = record_matmul("  m = MatMul(x, w)\n  y = Relu(m)\n");
  PlanOptions po;
  po.epilogue_min_elements = 1000;
  CHECK(plan_trace(*r.program, r.trace, {}, po).contractions.at(0).min_elements == 1000);
  const std::int64_t automatic = plan_trace(*r.program, r.trace, {}, PlanOptions{}).contractions.at(0).min_elements;
  CHECK(automatic == default_epilogue_min_elements());
  CHECK(automatic >= std::int64_t{1} << 15);
  CHECK(automatic <= std::int64_t{1} << 23);
}

TEST_CASE("contraction epilogues: a MatMul's residual Add is absorbed first, as a binary post-op; a bias is not",
          "[unit][jit][plan][epilogue]") {
  // x f32[5, 4] x w f32[4, 3]: the product is [5, 3].
  const auto record_with = [](const std::string& body, const std::string& extra_input, const Shape& extra_shape) {
    const std::string text = "canary v1\ngraph main(x: f32[N, 4], w: f32[4, 3], " + extra_input + ") -> (y) {\n" +
                             body + "}\n";
    return record(text.c_str(), {Tensor::empty(DType::F32, {5, 4}), Tensor::empty(DType::F32, {4, 3}),
                                 Tensor::empty(DType::F32, extra_shape)});
  };
  SECTION("a residual, then Abs") {
    const Recorded r = record_with("  m = MatMul(x, w)\n  a = Add(s, m)\n  y = Abs(a)\n", "s: f32[N, 3]", {5, 3});
    const Plan plan = plan_trace(*r.program, r.trace, {}, PlanOptions{});
    REQUIRE(plan.contractions.size() == 1);
    const ContractionStep& c = plan.contractions[0];
    CHECK(c.addend.valid());
    CHECK(c.epilogue.size == 1);        // the Abs; the Add is the post-op before it
    CHECK(c.epilogue_pcs.size() == 2);  // the separate group computes both
    CHECK(plan.fused.at(c.separate.fused).pcs == c.epilogue_pcs);
    CHECK(describe_contraction(c).find("matmul + add(r") == 0);
  }
  SECTION("a broadcast bias stays with the group") {
    const Recorded r = record_with("  m = MatMul(x, w)\n  a = Add(m, b)\n  y = Relu(a)\n", "b: f32[3]", {3});
    const Plan plan = plan_trace(*r.program, r.trace, {}, PlanOptions{});
    CHECK(plan.contractions.empty());
  }
  SECTION("an addend that would grow the result stays a group") {
    const Recorded r = record_with("  m = MatMul(x, w)\n  y = Add(m, b)\n", "b: f32[2, 5, 3]", {2, 5, 3});
    const Plan plan = plan_trace(*r.program, r.trace, {}, PlanOptions{});
    CHECK(plan.contractions.empty());
  }
  SECTION("the product added to itself has no other operand") {
    const Recorded r = record_with("  m = MatMul(x, w)\n  y = Add(m, m)\n  u = Identity(b)\n", "b: f32[3]", {3});
    const Plan plan = plan_trace(*r.program, r.trace, {}, PlanOptions{});
    CHECK(plan.contractions.empty());
  }
}
