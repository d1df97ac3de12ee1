// Non-adjacent fusion in planning: which ops a group takes across others,
// where the group runs, and what each exit in between replays.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "jit/plan.h"
#include "jit/plan_groups.h"
#include "trace_recording.h"

using namespace canary;
using namespace canary::jit;
using canary::jit::test::record;

namespace {

// A gated unit: sigmoid(x W) * tanh(x V), exported in source order, so the
// second MatMul sits between the Sigmoid and the Tanh.
const char* kGated = R"(canary v1
graph main(x: f32[N, 4], w: f32[4, 4], v: f32[4, 4]) -> (y) {
  g = MatMul(x, w)
  s = Sigmoid(g)
  h = MatMul(x, v)
  t = Tanh(h)
  y = Mul(s, t)
}
)";

// The MatMul between the two Tanh ops reads the first one's result.
const char* kDependent = R"(canary v1
graph main(x: f32[4, 4], w: f32[4, 4]) -> (y) {
  a = Tanh(x)
  m = MatMul(a, w)
  y = Mul(a, m)
}
)";

std::vector<Tensor> gated_inputs() {
  return {Tensor::empty(DType::F32, {3, 4}), Tensor::empty(DType::F32, {4, 4}), Tensor::empty(DType::F32, {4, 4})};
}

std::vector<vm::Pc> replay_pcs(const Step& s) {
  std::vector<vm::Pc> pcs;
  for (const ReplayOp& op : s.replay) pcs.push_back(op.pc);
  return pcs;
}

PlanOptions plain_options(bool nonadjacent) {
  PlanOptions po;
  po.contraction_epilogues = false;
  po.nonadjacent_fusion = nonadjacent;
  return po;
}

}  // namespace

TEST_CASE("non-adjacent fusion: the gated unit's three elementwise ops become one group after the second matmul",
          "[unit][jit][plan][nonadjacent]") {
  auto r = record(kGated, gated_inputs());
  const Plan plan = plan_trace(*r.program, r.trace, {}, plain_options(true));
  INFO(plan.describe(*r.program));
  for (const TraceOp& op : r.trace.ops) {
    std::string line = "op pc " + std::to_string(op.pc) + " in";
    for (const TraceValue& v : op.inputs) line += " r" + std::to_string(v.reg.index);
    line += " out";
    for (const TraceValue& v : op.outputs) line += " r" + std::to_string(v.reg.index);
    UNSCOPED_INFO(line);
  }
  // MatMul, MatMul, then {Sigmoid, Tanh, Mul} at the Mul's place.
  REQUIRE(plan.steps.size() == 3);
  CHECK(plan.steps[0].kind == StepKind::Kernel);
  CHECK(plan.steps[1].kind == StepKind::Kernel);
  REQUIRE(plan.steps[2].kind == StepKind::Fused);
  const FusedStep& g = plan.fused[plan.steps[2].fused];
  CHECK(g.sunk);
  REQUIRE(g.pcs.size() == 3);
  CHECK(plan.steps[2].pc == g.pcs.back());  // it runs, and exits, at the last member's pc
  CHECK(plan.sunk_ops == 1);                // the Sigmoid runs later than recorded
  CHECK(g.outputs.size() == 1);             // s and t never reach memory
  // An exit at the second MatMul (a kernel error) first computes s, which
  // the interpreter reads at the Mul; the group's own exit computes s and t.
  CHECK(plan.steps[0].replay.empty());
  CHECK(replay_pcs(plan.steps[1]) == std::vector<vm::Pc>{g.pcs[0]});
  CHECK(replay_pcs(plan.steps[2]) == std::vector<vm::Pc>{g.pcs[0], g.pcs[1]});
  const std::string listing = plan.describe(*r.program);
  INFO(listing);
  CHECK(listing.find("(sunk to pc " + std::to_string(g.pcs.back()) + ")") != std::string::npos);
  CHECK(listing.find("[an exit replays pcs " + std::to_string(g.pcs[0]) + "]") != std::string::npos);
}

TEST_CASE("non-adjacent fusion: off, groups stay runs of adjacent ops", "[unit][jit][plan][nonadjacent]") {
  auto r = record(kGated, gated_inputs());
  const Plan plan = plan_trace(*r.program, r.trace, {}, plain_options(false));
  REQUIRE(plan.fused.size() == 2);  // {Sigmoid}, {Tanh, Mul}
  CHECK(plan.sunk_ops == 0);
  for (const FusedStep& f : plan.fused) CHECK_FALSE(f.sunk);
  for (const Step& s : plan.steps) CHECK(s.replay.empty());
}

TEST_CASE("non-adjacent fusion: an op between that needs a member keeps the groups apart",
          "[unit][jit][plan][nonadjacent]") {
  auto r = record(kDependent, {Tensor::empty(DType::F32, {4, 4}), Tensor::empty(DType::F32, {4, 4})});
  const Plan plan = plan_trace(*r.program, r.trace, {}, plain_options(true));
  REQUIRE(plan.fused.size() == 2);  // {Tanh}, {Mul}: the MatMul reads a
  CHECK(plan.sunk_ops == 0);
  CHECK(plan.fused[0].outputs.size() == 1);  // a is stored: the MatMul and the Mul read it
}

TEST_CASE("non-adjacent fusion: dependences through registers cover reads, overwrites and moves",
          "[unit][jit][plan][nonadjacent]") {
  auto op = [](vm::Opcode code, std::vector<std::uint32_t> in, std::vector<std::uint32_t> out) {
    TraceOp o;
    o.opcode = code;
    auto value = [](std::uint32_t r) {
      TraceValue v;
      v.reg = vm::RegId{r};
      v.defined = true;
      return v;
    };
    for (std::uint32_t r : in) o.inputs.push_back(value(r));
    for (std::uint32_t r : out) o.outputs.push_back(value(r));
    return o;
  };
  Trace t;
  t.ops = {
      op(vm::Opcode::Kernel, {1}, {2}),  // 0
      op(vm::Opcode::Kernel, {}, {1}),   // 1: overwrites what 0 read
      op(vm::Opcode::Kernel, {2}, {7}),  // 2: reads what 0 wrote
      op(vm::Opcode::Kernel, {}, {2}),   // 3: overwrites what 0 wrote and 2 read
      op(vm::Opcode::Kernel, {5}, {9}),  // 4
      op(vm::Opcode::Move, {5}, {6}),    // 5: may steal r5's buffer, so it writes r5
      op(vm::Opcode::Kernel, {9}, {8}),  // 6
  };
  const graph::SequenceDependences d = trace_dependences(t);
  using M = std::vector<std::size_t>;
  CHECK(d.can_sink_to_last(M{0, 2}));        // 1 overwrites what 0 read: a hold keeps it, no dependence
  CHECK_FALSE(d.can_sink_to_last(M{0, 3}));  // 2 reads what 0 wrote, and 3 overwrites it
  CHECK_FALSE(d.can_sink_to_last(M{0, 2, 4}));  // 3 rewrites 0's register: writes stay in order
  CHECK(d.can_sink_to_last(M{0, 1, 2}));
  CHECK(d.can_sink_to_last(M{1, 3}));        // 2 needs 0, not 1
  CHECK(d.can_sink_to_last(M{4, 6}));        // the move does not need 4
  CHECK(is_group_barrier(t.ops[5]));
  CHECK_FALSE(is_group_barrier(t.ops[0]));
}
