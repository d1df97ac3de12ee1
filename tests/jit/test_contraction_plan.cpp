// Contraction epilogues in planning: which unary ops after a MatMul, Gemm or
// Conv become its oneDNN epilogue, and which stay fused groups because the
// contraction's result is needed elsewhere, the op is not one oneDNN computes
// as the reference does, or an option asks for checks only fused kernels make.
#include <catch2/catch.hpp>

#include <string>

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
  y = Tanh(t)
)");
  const Plan plan = plan_trace(*r.program, r.trace, {}, PlanOptions{});
  REQUIRE(plan.steps.size() == 2);
  REQUIRE(plan.steps[0].kind == StepKind::Contraction);
  CHECK(plan.steps[1].kind == StepKind::Fused);
  const ContractionStep& c = plan.contractions.at(0);
  CHECK(c.info.kind == vm::ContractionInfo::Kind::MatMul);
  REQUIRE(c.epilogue.size == 2);
  CHECK(c.epilogue.steps[0].op == kernels::EpilogueOp::Relu);
  CHECK(c.epilogue.steps[1].op == kernels::EpilogueOp::Abs);
  CHECK(c.epilogue_pcs.size() == 2);
  // The separate group computes the same two ops; Tanh is a group of its own.
  REQUIRE(plan.fused.size() == 2);
  CHECK(c.separate.kind == StepKind::Fused);
  CHECK(plan.fused.at(c.separate.fused).pcs == c.epilogue_pcs);
  CHECK(plan.exits.at(c.separate.exit).pc == c.epilogue_pcs.front());
  CHECK(plan.steps[0].exit == c.separate.exit);
  CHECK(plan.fused.at(plan.steps[1].fused).pcs.size() == 1);
  CHECK(plan.fused_ops == 3);
  CHECK(plan.describe(*r.program).find("matmul + relu + abs (oneDNN post-ops on large results), else fused group") !=
        std::string::npos);
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
    // Relu is absorbed; Abs's input is also read by Add, so the epilogue stops at Relu.
    const Recorded r = record_matmul("  m = MatMul(x, w)\n  a = Relu(m)\n  t = Abs(a)\n  y = Add(t, a)\n");
    const Plan plan = plan_trace(*r.program, r.trace, {}, PlanOptions{});
    REQUIRE(count_steps(plan, StepKind::Contraction) == 1);
    CHECK(plan.contractions[0].epilogue.size == 1);
    CHECK(plan.fused.at(plan.steps[1].fused).pcs.size() == 2);
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
  SECTION("Clip, LeakyRelu (slope 0 is a Relu) and Abs are absorbed; a fifth op is not") {
    const Recorded r = record_matmul(R"(  const lo: f32[] = [-1]
  const hi: f32[] = [1]
  m = MatMul(x, w)
  c = Clip(m, lo, hi)
  l = LeakyRelu(c) {alpha = 0.0}
  s = LeakyRelu(l) {alpha = 0.25}
  q = Abs(s)
  y = Abs(q)
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
    CHECK(count_steps(plan, StepKind::Fused) == 1);  // the last Abs
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
  p = ReduceMean(a) {axes = [2], keepdims = 0}
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
  // x2 dies at the Conv, so Relu's result may take its register: the kernel
  // then writes to scratch and swaps (the driver's alias path).
  const vm::RegId conv_input = r.trace.ops[1].inputs[0].reg;
  CHECK(plan.contractions[0].output_aliases_input == (plan.contractions[0].output == conv_input));
}
