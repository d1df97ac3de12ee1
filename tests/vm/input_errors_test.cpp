// VM tests of the run() boundary: input checks and resource guards produce
// typed canary::Errors naming the input or node and the shapes.
#include <catch2/catch.hpp>

#include "canary/error.h"
#include "vm_graph_builders.h"

using namespace vmtest;
namespace vm = canary::vm;
using canary::ErrorKind;

namespace {

// a, b: f32[N, 3] with N in [1, 8]; out = a + b.
std::shared_ptr<const vm::Program> pair_program() {
  Graph g;
  Dim n = g.symbols().declare("N");
  g.symbols().set_range("N", 1, 8);
  ValueId a = g.add_input("a", type_of(DType::F32, {n, 3}));
  ValueId b = g.add_input("b", type_of(DType::F32, {n, 3}));
  g.add_output(op(g, OpKind::Add, "sum", {a, b}));
  canary::graph::infer_shapes(g);
  return vm::compile(g);
}

// Runs and returns the error (fails the test when none is thrown).
canary::Error run_error(vm::Interpreter& interp, std::vector<Tensor> in) {
  try {
    interp.run(in);
  } catch (const canary::Error& e) {
    return e;
  }
  FAIL("expected canary::Error");
  return canary::Error(ErrorKind::Internal, "unreachable");
}

Tensor zeros(DType dt, std::vector<std::int64_t> shape) { return Tensor::empty(dt, std::span<const std::int64_t>(shape)); }

bool mentions(const canary::Error& e, const std::string& text) {
  return std::string(e.what()).find(text) != std::string::npos;
}

}  // namespace

TEST_CASE("a missing input is an Input error naming it", "[unit][vm]") {
  vm::Interpreter interp(pair_program());
  auto e = run_error(interp, {zeros(DType::F32, {2, 3})});
  CHECK(e.kind() == ErrorKind::Input);
  CHECK(mentions(e, "'b'"));
  auto e2 = run_error(interp, {zeros(DType::F32, {2, 3}), Tensor()});
  CHECK(e2.kind() == ErrorKind::Input);
  CHECK(mentions(e2, "'b'"));
}

TEST_CASE("a wrong dtype is an Input error with expected and actual types", "[unit][vm]") {
  vm::Interpreter interp(pair_program());
  auto e = run_error(interp, {zeros(DType::F64, {2, 3}), zeros(DType::F32, {2, 3})});
  CHECK(e.kind() == ErrorKind::Input);
  CHECK(mentions(e, "'a'"));
  CHECK(mentions(e, "f32[N, 3]"));
  CHECK(mentions(e, "f64[2, 3]"));
}

TEST_CASE("a wrong rank is an Input error", "[unit][vm]") {
  vm::Interpreter interp(pair_program());
  auto e = run_error(interp, {zeros(DType::F32, {2, 3}), zeros(DType::F32, {6})});
  CHECK(e.kind() == ErrorKind::Input);
  CHECK(mentions(e, "'b'"));
  CHECK(mentions(e, "[6]"));
  CHECK(mentions(e, "f32[N, 3]"));
}

TEST_CASE("a wrong constant dim is a Shape error", "[unit][vm]") {
  vm::Interpreter interp(pair_program());
  auto e = run_error(interp, {zeros(DType::F32, {2, 4}), zeros(DType::F32, {2, 3})});
  CHECK(e.kind() == ErrorKind::Shape);
  CHECK(mentions(e, "'a'"));
  CHECK(mentions(e, "f32[N, 3]"));
  CHECK(mentions(e, "[2, 4]"));
}

TEST_CASE("symbol constraint violations are Shape errors", "[unit][vm]") {
  vm::Interpreter interp(pair_program());
  SECTION("range") {
    auto e = run_error(interp, {zeros(DType::F32, {9, 3}), zeros(DType::F32, {9, 3})});
    CHECK(e.kind() == ErrorKind::Shape);
    CHECK(mentions(e, "'a'"));
    CHECK(mentions(e, "[9, 3]"));
  }
  SECTION("equality between inputs sharing N") {
    auto e = run_error(interp, {zeros(DType::F32, {2, 3}), zeros(DType::F32, {3, 3})});
    CHECK(e.kind() == ErrorKind::Shape);
    CHECK(mentions(e, "'b'"));
    CHECK(mentions(e, "[3, 3]"));
  }
  // A good call still works after errors.
  auto out = interp.run(std::vector<Tensor>{f32({1, 2, 3}, {1, 3}), f32({1, 1, 1}, {1, 3})});
  CHECK(values(out[0]) == std::vector<double>{2, 3, 4});
}

TEST_CASE("Expand to dims whose product overflows int64 is a Resource error", "[unit][vm]") {
  Graph g;
  ValueId x = g.add_input("x", type_of(DType::F32, {1}));
  ValueId shape = g.add_input("shape", type_of(DType::I64, {2}));
  g.add_output(op(g, OpKind::Expand, "big", {x, shape}));
  canary::graph::infer_shapes(g);
  vm::Interpreter interp(vm::compile(g));
  auto e = run_error(interp, {f32({1}, {1}), i64s({std::int64_t{1} << 40, std::int64_t{1} << 40})});
  CHECK(e.kind() == ErrorKind::Resource);
  CHECK(mentions(e, "'big'"));
  auto e2 = run_error(interp, {f32({1}, {1}), i64s({std::int64_t{1} << 20, std::int64_t{1} << 20})});
  CHECK(e2.kind() == ErrorKind::Resource);
}

TEST_CASE("a 2^40-element tensor is a Resource error, not a crash", "[unit][vm]") {
  Graph g;
  ValueId x = g.add_input("x", type_of(DType::F32, {1, 1}));
  ValueId shape = g.add_input("shape", type_of(DType::I64, {2}));
  ValueId row = op(g, OpKind::Expand, "row", {x, shape});
  g.add_output(op(g, OpKind::Add, "plus", {row, row}));
  canary::graph::infer_shapes(g);
  vm::Interpreter interp(vm::compile(g));
  auto e = run_error(interp, {f32({1}, {1, 1}), i64s({1, std::int64_t{1} << 40})});
  CHECK(e.kind() == ErrorKind::Resource);
}

TEST_CASE("an output above max_tensor_bytes is a Resource error naming the node", "[unit][vm]") {
  Graph g;
  ValueId a = g.add_input("a", type_of(DType::F32, {g.symbols().declare("N")}));
  ValueId col = op(g, OpKind::Unsqueeze, "col", {a, g.add_constant("ax", i64s({1}))});
  g.add_output(op(g, OpKind::Mul, "outer", {col, a}));
  canary::graph::infer_shapes(g);
  vm::Interpreter interp(vm::compile(g), vm::RunLimits{1024, 1 << 24});
  auto ok = interp.run(std::vector<Tensor>{f32(std::vector<float>(16, 1.0f), {16})});
  CHECK(ok[0].shape() == canary::Shape{16, 16});
  auto e = run_error(interp, {f32(std::vector<float>(64, 1.0f), {64})});
  CHECK(e.kind() == ErrorKind::Resource);
  CHECK(mentions(e, "'outer'"));
}

TEST_CASE("a kernel error keeps its kind and gets the node prefix", "[unit][vm]") {
  Graph g;
  ValueId a = g.add_input("a", type_of(DType::F32, {g.symbols().declare("N")}));
  ValueId b = g.add_input("b", type_of(DType::F32, {g.symbols().declare("M")}));
  auto n = g.add_node(OpKind::Add, "", {a, b}, {"s"});
  g.add_output(g.node(n).outputs[0]);
  canary::graph::infer_shapes(g);
  vm::Interpreter interp(vm::compile(g));
  auto e = run_error(interp, {f32({1, 2}, {2}), f32({1, 2, 3}, {3})});
  CHECK(e.kind() == ErrorKind::Shape);
  CHECK(std::string(e.detail()).rfind("node 's' (Add): ", 0) == 0);
}
