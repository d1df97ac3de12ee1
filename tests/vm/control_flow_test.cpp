// VM tests of lowered control flow: If, Loop (trip count, condition, scan
// outputs, nesting, zero iterations, iteration limit) and Scan.
#include <catch2/catch.hpp>

#include "canary/error.h"
#include "vm_graph_builders.h"

using namespace vmtest;
namespace vm = canary::vm;
using canary::graph::Capture;

namespace {

const ValueType kI64 = type_of(DType::I64, {});
const ValueType kBool = type_of(DType::Bool, {});

// x + 1 when c, else x * 2; the branches read x through captures.
Graph if_graph() {
  Graph g;
  ValueId c = g.add_input("c", kBool);
  ValueId x = g.add_input("x", type_of(DType::F32, {3}));
  auto then_g = subgraph(g, "then");
  ValueId tx = then_g->add_capture("x", type_of(DType::F32, {3}), x);
  ValueId one = then_g->add_constant("one", f32({1}, {}));
  then_g->add_output(op(*then_g, OpKind::Add, "plus", {tx, one}));
  auto else_g = subgraph(g, "else");
  ValueId ex = else_g->add_capture("x", type_of(DType::F32, {3}), x);
  ValueId two = else_g->add_constant("two", f32({2}, {}));
  else_g->add_output(op(*else_g, OpKind::Mul, "times", {ex, two}));
  auto n = g.add_node(OpKind::If, "branch", {c}, {"y"}, {{"then_branch", then_g}, {"else_branch", else_g}});
  g.add_output(g.node(n).outputs[0]);
  canary::graph::infer_shapes(g);
  return g;
}

// sum += iter for M iterations (or while sum < limit), scanning the running sum.
// Inputs: M (optional), limit; outputs: sum, scan.
Graph sum_loop_graph(bool with_m, bool with_cond) {
  Graph g;
  ValueId m = with_m ? g.add_input("M", kI64) : ValueId::none();
  ValueId limit = g.add_input("limit", kI64);
  ValueId zero = g.add_constant("zero", i64(0));
  ValueId t = g.add_constant("t", boolean(true));
  auto body = subgraph(g, "body");
  ValueId iter = body->add_input("iter", kI64);
  ValueId cond_in = body->add_input("cond_in", kBool);
  ValueId sum_in = body->add_input("sum_in", kI64);
  ValueId lim = body->add_capture("limit", kI64, limit);
  ValueId sum_out = op(*body, OpKind::Add, "sum_out", {sum_in, iter});
  ValueId cond_out = with_cond ? op(*body, OpKind::Less, "more", {sum_out, lim}) : op(*body, OpKind::Identity, "keep", {cond_in});
  body->add_output(cond_out);
  body->add_output(sum_out);
  body->add_output(op(*body, OpKind::Identity, "elem", {sum_out}));
  auto n = g.add_node(OpKind::Loop, "loop", {m, with_cond ? t : ValueId::none(), zero}, {"sum", "scan"}, {{"body", body}});
  g.add_output(g.node(n).outputs[0]);
  g.add_output(g.node(n).outputs[1]);
  canary::graph::infer_shapes(g);
  return g;
}

}  // namespace

TEST_CASE("If takes the then branch when true and the else branch when false", "[unit][vm]") {
  Graph g = if_graph();
  vm::Interpreter interp(vm::compile(g));
  std::vector<Tensor> yes{boolean(true), f32({1, 2, 3}, {3})};
  std::vector<Tensor> no{boolean(false), f32({1, 2, 3}, {3})};
  CHECK(values(interp.run(yes)[0]) == std::vector<double>{2, 3, 4});
  CHECK(values(interp.run(no)[0]) == std::vector<double>{2, 4, 6});
  CHECK(values(interp.run(yes)[0]) == std::vector<double>{2, 3, 4});
}

TEST_CASE("Loop sums iteration numbers and stacks a scan output", "[unit][vm]") {
  Graph g = sum_loop_graph(true, false);
  vm::Interpreter interp(vm::compile(g));
  std::vector<Tensor> in{i64(5), i64(0)};
  auto out = interp.run(in);
  CHECK(values(out[0]) == std::vector<double>{10});
  CHECK(out[1].shape() == canary::Shape{5});
  CHECK(values(out[1]) == std::vector<double>{0, 1, 3, 6, 10});
  // The loop anchor counted one visit per iteration.
  CHECK(interp.profile().anchor_count(vm::AnchorId{1}) == 5);
  std::vector<Tensor> again{i64(3), i64(0)};
  auto out2 = interp.run(again);
  CHECK(values(out2[1]) == std::vector<double>{0, 1, 3});
  CHECK(values(out[1]) == std::vector<double>{0, 1, 3, 6, 10});
  CHECK(interp.profile().anchor_count(vm::AnchorId{1}) == 8);
}

TEST_CASE("Loop with a condition exits early", "[unit][vm]") {
  Graph g = sum_loop_graph(true, true);
  vm::Interpreter interp(vm::compile(g));
  std::vector<Tensor> in{i64(100), i64(10)};
  auto out = interp.run(in);
  CHECK(values(out[0]) == std::vector<double>{10});
  CHECK(values(out[1]) == std::vector<double>{0, 1, 3, 6, 10});
  // Without M, only the condition ends the loop.
  Graph g2 = sum_loop_graph(false, true);
  std::vector<Tensor> in2{i64(4)};
  auto out2 = run_once(g2, in2);
  CHECK(values(out2[0]) == std::vector<double>{6});
}

TEST_CASE("Loop with zero iterations yields a leading 0 dim", "[unit][vm]") {
  Graph g = sum_loop_graph(true, false);
  vm::Interpreter interp(vm::compile(g));
  std::vector<Tensor> in{i64(0), i64(0)};
  auto out = interp.run(in);
  CHECK(values(out[0]) == std::vector<double>{0});
  CHECK(out[1].shape() == canary::Shape{0});
  CHECK(out[1].dtype() == DType::I64);
}

TEST_CASE("Loop above max_loop_iterations is a Resource error naming the node", "[unit][vm]") {
  Graph g = sum_loop_graph(false, true);
  vm::Interpreter interp(vm::compile(g), vm::RunLimits{16ull << 30, 100});
  std::vector<Tensor> in{i64(1'000'000'000)};
  try {
    interp.run(in);
    FAIL("expected an error");
  } catch (const canary::Error& e) {
    CHECK(e.kind() == canary::ErrorKind::Resource);
    CHECK(std::string(e.what()).find("'loop'") != std::string::npos);
  }
}

TEST_CASE("nested Loop reads the outer iteration number through a capture", "[unit][vm]") {
  Graph g;
  ValueId m_outer = g.add_input("M", kI64);
  ValueId m_inner = g.add_constant("four", i64(4));
  ValueId zero = g.add_constant("zero", i64(0));
  auto outer = subgraph(g, "outer");
  ValueId i = outer->add_input("i", kI64);
  ValueId oc = outer->add_input("oc", kBool);
  ValueId acc = outer->add_input("acc", kI64);
  ValueId four = outer->add_capture("four", kI64, m_inner);
  auto inner = subgraph(*outer, "inner");
  ValueId j = inner->add_input("j", kI64);
  ValueId ic = inner->add_input("ic", kBool);
  ValueId a = inner->add_input("a", kI64);
  ValueId ii = inner->add_capture("i", kI64, i);
  ValueId a2 = op(*inner, OpKind::Add, "a2", {a, op(*inner, OpKind::Mul, "ij", {ii, j})});
  inner->add_output(ic);
  inner->add_output(a2);
  inner->add_output(op(*inner, OpKind::Identity, "jcopy", {j}));
  auto in_node = outer->add_node(OpKind::Loop, "inner_loop", {four, ValueId::none(), acc}, {"acc2", "js"}, {{"body", inner}});
  outer->add_output(oc);
  outer->add_output(outer->node(in_node).outputs[0]);
  outer->add_output(op(*outer, OpKind::ReduceSum, "jsum", {outer->node(in_node).outputs[1]}));
  auto n = g.add_node(OpKind::Loop, "outer_loop", {m_outer, ValueId::none(), zero}, {"total", "jsums"}, {{"body", outer}});
  g.add_output(g.node(n).outputs[0]);
  g.add_output(g.node(n).outputs[1]);
  canary::graph::infer_shapes(g);
  vm::Interpreter interp(vm::compile(g));
  std::vector<Tensor> in{i64(3)};
  auto out = interp.run(in);
  CHECK(values(out[0]) == std::vector<double>{18});  // (0+1+2) * (0+1+2+3)
  CHECK(values(out[1]) == std::vector<double>{6, 6, 6});
  CHECK(interp.profile().anchor_count(vm::AnchorId{1}) + interp.profile().anchor_count(vm::AnchorId{2}) == 15);
}

TEST_CASE("Scan in reverse direction with forward and reverse scan outputs", "[unit][vm]") {
  Graph g;
  ValueId x = g.add_input("x", type_of(DType::F32, {4, 2}));
  ValueId s0 = g.add_constant("s0", f32({0, 0}, {2}));
  auto body = subgraph(g, "body");
  ValueId s = body->add_input("s", type_of(DType::F32, {2}));
  ValueId row = body->add_input("row", type_of(DType::F32, {2}));
  ValueId s2 = op(*body, OpKind::Add, "s2", {s, row});
  body->add_output(s2);
  body->add_output(op(*body, OpKind::Identity, "fwd", {s2}));
  body->add_output(op(*body, OpKind::Identity, "rev", {s2}));
  auto n = g.add_node(OpKind::Scan, "scan", {s0, x}, {"final", "ys", "ys_rev"},
                      {{"body", body},
                       {"num_scan_inputs", std::int64_t{1}},
                       {"scan_input_directions", std::vector<std::int64_t>{1}},
                       {"scan_output_directions", std::vector<std::int64_t>{0, 1}}});
  for (ValueId v : g.node(n).outputs) g.add_output(v);
  canary::graph::infer_shapes(g);
  std::vector<Tensor> in{f32({1, 1, 2, 2, 3, 3, 4, 4}, {4, 2})};
  vm::Interpreter interp(vm::compile(g));
  auto out = interp.run(in);
  CHECK(values(out[0]) == std::vector<double>{10, 10});
  CHECK(out[1].shape() == canary::Shape{4, 2});
  CHECK(values(out[1]) == std::vector<double>{4, 4, 7, 7, 9, 9, 10, 10});
  CHECK(values(out[2]) == std::vector<double>{10, 10, 9, 9, 7, 7, 4, 4});
}

TEST_CASE("Scan along axis 1 with an output axis of 1", "[unit][vm]") {
  Graph g;
  ValueId x = g.add_input("x", type_of(DType::F32, {2, 3}));
  ValueId s0 = g.add_constant("s0", f32({0, 0}, {2}));
  auto body = subgraph(g, "body");
  ValueId s = body->add_input("s", type_of(DType::F32, {2}));
  ValueId col = body->add_input("col", type_of(DType::F32, {2}));
  ValueId s2 = op(*body, OpKind::Add, "s2", {s, col});
  body->add_output(s2);
  body->add_output(op(*body, OpKind::Identity, "elem", {s2}));
  auto n = g.add_node(OpKind::Scan, "scan", {s0, x}, {"final", "ys"},
                      {{"body", body},
                       {"num_scan_inputs", std::int64_t{1}},
                       {"scan_input_axes", std::vector<std::int64_t>{1}},
                       {"scan_output_axes", std::vector<std::int64_t>{1}}});
  for (ValueId v : g.node(n).outputs) g.add_output(v);
  // x = [[1, 2, 3], [10, 20, 30]]: running sums per row along columns.
  auto out = run_once(g, {f32({1, 2, 3, 10, 20, 30}, {2, 3})});
  CHECK(values(out[0]) == std::vector<double>{6, 60});
  CHECK(out[1].shape() == canary::Shape{2, 3});
  CHECK(values(out[1]) == std::vector<double>{1, 3, 6, 10, 30, 60});
}
