// Recording and planning: the trace a run produces, the fused groups and
// guards planned from it, and the collapse of broadcast layouts.
#include <catch2/catch.hpp>

#include <optional>

#include "trace_recording.h"
#include "graph/text_format.h"
#include "jit/plan.h"
#include "jit/plan_fusion.h"
#include "jit/trace_recorder.h"
#include "vm/compiler.h"
#include "vm/interpreter.h"

using namespace canary;
using namespace canary::jit;
using canary::jit::test::record;
using canary::jit::test::Recorded;

namespace {

const char* kChainWithMatMul = R"(canary v1
graph main(x: f32[N, 4], b: f32[4]) -> (y, u) {
  const w: f32[4, 4] = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
  const half: f32[] = [0.5]
  s = Mul(x, half)
  t = Add(s, b)
  u = Tanh(t)
  m = MatMul(u, w)
  y = Relu(m)
}
)";

}  // namespace

TEST_CASE("recording follows one run and keeps shapes before each instruction", "[unit][jit][plan]") {
  auto r = record(kChainWithMatMul, {Tensor::empty(DType::F32, {3, 4}), Tensor::empty(DType::F32, {4})});
  CHECK(r.trace.end == TraceEnd::Return);
  REQUIRE(r.trace.ops.size() == 5);
  CHECK(r.trace.ops[0].inputs[0].shape == Shape{3, 4});
  CHECK(r.trace.ops[3].outputs[0].shape == Shape{3, 4});
  // x, half, b, w: read before any write, in first-read order.
  REQUIRE(r.trace.entry.size() == 4);
  CHECK(r.trace.entry[0].shape == Shape{3, 4});
  CHECK(r.trace.entry[1].shape == Shape{});
}

TEST_CASE("planning fuses the elementwise run and stores what outlives it", "[unit][jit][plan]") {
  auto r = record(kChainWithMatMul, {Tensor::empty(DType::F32, {3, 4}), Tensor::empty(DType::F32, {4})});
  PlanOptions po;
  po.contraction_epilogues = false;
  const Plan plan = plan_trace(*r.program, r.trace, {}, po);
  // Mul, Add, Tanh fused; MatMul a kernel; Relu a one-op group.
  REQUIRE(plan.steps.size() == 3);
  CHECK(plan.steps[0].kind == StepKind::Fused);
  CHECK(plan.steps[1].kind == StepKind::Kernel);
  CHECK(plan.steps[2].kind == StepKind::Fused);
  const FusedStep& g = plan.fused[0];
  CHECK(g.pcs.size() == 3);
  // Inputs x and b (half is folded as a constant); one output, u, read by
  // MatMul and returned.
  CHECK(g.inputs.size() == 2);
  REQUIRE(g.outputs.size() == 1);
  CHECK(g.spec.inner_broadcast == std::vector<bool>{false, false});
  REQUIRE(g.spec.exact_dims.has_value());
  // [3, 4] and [4] collapse to d1 = 3 rows of d2 = 4, b re-read per row.
  CHECK(*g.spec.exact_dims == std::array<std::int64_t, 3>{1, 3, 4});
  CHECK(plan.fused_ops == 4);
  CHECK(plan.describe(*r.program).find("fused group 0: 3 ops") != std::string::npos);
}

TEST_CASE("exact plans guard every dim by value; symbolic ones by range and capture", "[unit][jit][plan]") {
  auto r = record(kChainWithMatMul, {Tensor::empty(DType::F32, {3, 4}), Tensor::empty(DType::F32, {4})});
  const Plan exact = plan_trace(*r.program, r.trace, {}, PlanOptions{});
  std::vector<std::string> described;
  for (const Guard& g : exact.guards.guards) described.push_back(describe_guard(g, exact.entry_names));
  CHECK(std::find(described.begin(), described.end(), "x.dim0 == 3") != described.end());
  CHECK(std::find(described.begin(), described.end(), "x.rank == 2") != described.end());

  ShapeKnowledge k;
  k.symbolic.emplace(RegDim{r.trace.entry[0].reg.index, 0}, DimFacts{});
  PlanOptions po;
  po.tier = Tier::SymbolicFused;
  const Plan sym = plan_trace(*r.program, r.trace, k, po);
  bool has_range = false, has_exact_dim0 = false;
  for (const Guard& g : sym.guards.guards) {
    has_range = has_range || (g.kind == GuardKind::DimRange && g.tensor == 0 && g.axis == 0 && g.value == 2);
    has_exact_dim0 = has_exact_dim0 || (g.kind == GuardKind::DimEquals && g.tensor == 0 && g.axis == 0);
  }
  CHECK(has_range);
  CHECK_FALSE(has_exact_dim0);
  CHECK(sym.symbols.size() == 1);
  CHECK_FALSE(sym.fused[0].spec.exact_dims.has_value());
}

TEST_CASE("model constants are entry values without guards; inputs keep theirs", "[unit][jit][plan]") {
  auto r = record(kChainWithMatMul, {Tensor::empty(DType::F32, {3, 4}), Tensor::empty(DType::F32, {4})});
  const Plan plan = plan_trace(*r.program, r.trace, {}, PlanOptions{});
  // Entry values x, half, b, w: half and w are constants (pinned, never written).
  REQUIRE(plan.entry_names.size() == 4);
  std::vector<int> guards_of(plan.entry_names.size(), 0);
  for (const Guard& g : plan.guards.guards) ++guards_of.at(g.tensor);
  for (std::size_t i = 0; i < plan.entry_names.size(); ++i) {
    INFO(plan.entry_names[i]);
    const bool constant = plan.entry_names[i] == "half" || plan.entry_names[i] == "w";
    if (constant) CHECK(guards_of[i] == 0);
    else CHECK(guards_of[i] >= 3);  // rank, dtype, alignment and the dims
  }
  CHECK(plan.exits.size() >= plan.guards.guards.size());
}

TEST_CASE("the unfused tier plans every op as a kernel call", "[unit][jit][plan]") {
  auto r = record(kChainWithMatMul, {Tensor::empty(DType::F32, {3, 4}), Tensor::empty(DType::F32, {4})});
  PlanOptions po;
  po.tier = Tier::Unfused;
  const Plan plan = plan_trace(*r.program, r.trace, {}, po);
  CHECK(plan.fused.empty());
  CHECK(plan.steps.size() == 5);
}

namespace {

// collapse_layout over owned shapes.
bool collapse(const Shape& out, const std::vector<Shape>& inputs, CollapsedLayout& l) {
  std::vector<std::span<const std::int64_t>> spans(inputs.begin(), inputs.end());
  return collapse_layout(out, spans, l);
}

}  // namespace

TEST_CASE("collapse_layout merges dims with the same broadcast pattern", "[unit][jit][plan]") {
  CollapsedLayout l;
  // [N, C, T] with [C, 1] and a scalar: rows (n, c), inner t; per_channel broadcasts along t.
  REQUIRE(collapse(Shape{2, 3, 5}, {Shape{2, 3, 5}, Shape{3, 1}, Shape{}}, l));
  CHECK(l.dims[0] == 2);
  CHECK(l.dims[1] == 3);
  CHECK(l.dims[2] == 5);
  CHECK(l.inner_broadcast == 0b110u);
  CHECK(l.strides[0] == 15);  // full: stride0 = 3 * 5
  CHECK(l.strides[1] == 5);   // full: stride1 = 5
  CHECK(l.strides[2] == 0);   // per_channel along n
  CHECK(l.strides[3] == 1);   // per_channel along c
  CHECK(l.strides[4] == 0);
  CHECK(l.strides[5] == 0);

  // Same-shape operands collapse into one row.
  REQUIRE(collapse(Shape{4, 6, 7}, {Shape{4, 6, 7}, Shape{4, 6, 7}}, l));
  CHECK(l.dims[0] * l.dims[1] == 1);
  CHECK(l.dims[2] == 168);

  // Alternating patterns need four dims: refused.
  CHECK_FALSE(collapse(Shape{2, 3, 4, 5}, {Shape{2, 1, 4, 1}, Shape{1, 3, 1, 5}}, l));
  // Shapes that do not broadcast: refused.
  CHECK_FALSE(collapse(Shape{2, 3}, {Shape{2, 4}}, l));
  // More inputs than a kernel takes: refused.
  CHECK_FALSE(collapse(Shape{2}, std::vector<Shape>(kMaxFusedInputs + 1, Shape{2}), l));
}

TEST_CASE("a reduction over the last axis absorbs the elementwise group before it", "[unit][jit][plan]") {
  const char* text = R"(canary v1
graph main(x: f32[N, 6], b: f32[6]) -> (s, m) {
  t = Add(x, b)
  u = Tanh(t)
  const last: i64[1] = [-1]
  s = ReduceSum(u, last) {keepdims = 1}
  m = ReduceMean(x) {axes = [0], keepdims = 0}
}
)";
  auto r = record(text, {Tensor::empty(DType::F32, {3, 6}), Tensor::empty(DType::F32, {6})});
  const Plan plan = plan_trace(*r.program, r.trace, {}, PlanOptions{});
  REQUIRE(plan.rows.size() == 1);
  CHECK(plan.rows[0].spec.op == RowOp::Sum);
  CHECK(plan.rows[0].pcs.size() == 3);  // Add, Tanh, ReduceSum
  CHECK(plan.rows[0].inputs.size() == 2);
  CHECK(plan.rows[0].keepdims);
  // The reduction over axis 0 is not a row op: a kernel call.
  REQUIRE(plan.steps.size() == 2);
  CHECK(plan.steps[0].kind == StepKind::Row);
  CHECK(plan.steps[1].kind == StepKind::Kernel);
  CHECK(plan.describe(*r.program).find("row kernel 0 (sum): 3 ops") != std::string::npos);
}
