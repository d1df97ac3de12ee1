// Shape inference of the reductions beyond Sum/Mean/Max (ReduceMin,
// ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum,
// ReduceLogSumExp): the axes attribute, keepdims, size-1 and empty dims,
// and the errors that name the node.
#include <catch2/catch.hpp>

#include "canary/error.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "tests/graph/graph_test_support.h"

using namespace canary;
using namespace canary::graph;
using namespace canary::test;

namespace {

const Dim N = Dim::symbol("N");
const Dim T = Dim::symbol("T");

using Axes = std::vector<std::int64_t>;

constexpr OpKind kFamily[] = {OpKind::ReduceMin, OpKind::ReduceProd,      OpKind::ReduceL1,
                              OpKind::ReduceL2,  OpKind::ReduceSumSquare, OpKind::ReduceLogSum,
                              OpKind::ReduceLogSumExp};

}  // namespace

TEST_CASE("the ReduceX family: axes attribute, negative axes, keepdims 0 and 1", "[unit][shape_inference]") {
  for (OpKind op : kFamily) {
    INFO(op_name(op));
    Graph g;
    ValueId x = g.add_input("x", f32({N, T, 8}));
    add(g, op, "last", {x}, {{"axes", Axes{-1}}});
    add(g, op, "middle", {x}, {{"axes", Axes{1}}, {"keepdims", std::int64_t{0}}});
    add(g, op, "two", {x}, {{"axes", Axes{2, -3}}, {"keepdims", std::int64_t{0}}});
    add(g, op, "all", {x});
    add(g, op, "all_dropped", {x}, {{"keepdims", std::int64_t{0}}});
    infer_shapes(g);
    check_dims(type_of(g, "last").shape, {N, T, 1});
    check_dims(type_of(g, "middle").shape, {N, 8});
    check_dims(type_of(g, "two").shape, {T});
    check_dims(type_of(g, "all").shape, {1, 1, 1});
    check_dims(type_of(g, "all_dropped").shape, {});
    CHECK(type_of(g, "last").dtype == DType::F32);
  }
}

TEST_CASE("the ReduceX family keeps size-1 and empty dims and integer dtypes", "[unit][shape_inference]") {
  Graph g;
  ValueId x = g.add_input("x", f32({0, 1, 5}));
  ValueId k = g.add_input("k", ValueType{DType::I32, {N, 3}});
  add(g, OpKind::ReduceMin, "min", {x}, {{"axes", Axes{2}}});
  add(g, OpKind::ReduceLogSumExp, "lse", {x}, {{"axes", Axes{0}}, {"keepdims", std::int64_t{0}}});
  add(g, OpKind::ReduceProd, "prod", {k}, {{"axes", Axes{-1}}, {"keepdims", std::int64_t{0}}});
  infer_shapes(g);
  check_dims(type_of(g, "min").shape, {0, 1, 1});
  check_dims(type_of(g, "lse").shape, {1, 5});
  check_dims(type_of(g, "prod").shape, {N});
  CHECK(type_of(g, "prod").dtype == DType::I32);
}

TEST_CASE("the ReduceX family rejects bad axes and dtypes, naming the node", "[unit][shape_inference]") {
  SECTION("axis out of range") {
    Graph g;
    ValueId x = g.add_input("x", f32({N, 3}));
    add(g, OpKind::ReduceL2, "l2", {x}, {{"axes", Axes{2}}});
    expect_error(g, ErrorKind::Shape, {"l2", "ReduceL2", "axis"});
  }
  SECTION("repeated axis") {
    Graph g;
    ValueId x = g.add_input("x", f32({N, 3}));
    add(g, OpKind::ReduceMin, "min", {x}, {{"axes", Axes{1, -1}}});
    expect_error(g, ErrorKind::Model, {"min", "repeated"});
  }
  SECTION("bool input") {
    Graph g;
    ValueId b = g.add_input("b", ValueType{DType::Bool, {3}});
    add(g, OpKind::ReduceProd, "prod", {b});
    expect_error(g, ErrorKind::Model, {"prod", "bool"});
  }
  SECTION("noop_with_empty_axes belongs to ReduceSum only up to opset 17") {
    Graph g;
    ValueId x = g.add_input("x", f32({3}));
    add(g, OpKind::ReduceSumSquare, "ss", {x}, {{"noop_with_empty_axes", std::int64_t{1}}});
    expect_error(g, ErrorKind::Model, {"ss", "noop_with_empty_axes"});
  }
}
