// Shape inference of GatherElements: indices' shape with data's dtype, and
// the errors that name the node.
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
const Dim K = Dim::symbol("K");

ValueType i64(DimVector dims) { return ValueType{DType::I64, std::move(dims)}; }

}  // namespace

TEST_CASE("GatherElements: the output is shaped like indices", "[unit][shape_inference]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 5}));
  ValueId i = g.add_input("i", i64({N, K}));
  ValueId j = g.add_input("j", ValueType{DType::I32, {1, 0}});
  ValueId k = g.add_input("k", i64({N, 9}));
  add(g, OpKind::GatherElements, "along1", {x, i}, {{"axis", std::int64_t{1}}});
  add(g, OpKind::GatherElements, "empty", {x, j}, {{"axis", std::int64_t{-1}}});
  add(g, OpKind::GatherElements, "longer", {x, k}, {{"axis", std::int64_t{-1}}});
  infer_shapes(g);
  check_dims(type_of(g, "along1").shape, {N, K});
  CHECK(type_of(g, "along1").dtype == DType::F32);
  check_dims(type_of(g, "empty").shape, {1, 0});
  check_dims(type_of(g, "longer").shape, {N, 9});
}

TEST_CASE("GatherElements: shape errors name the node", "[unit][shape_inference]") {
  SECTION("rank mismatch") {
    Graph g;
    add(g, OpKind::GatherElements, "ge", {g.add_input("x", f32({N, 5})), g.add_input("i", i64({4}))});
    expect_error(g, ErrorKind::Shape, {"ge", "rank"});
  }
  SECTION("indices exceed data off the axis") {
    Graph g;
    add(g, OpKind::GatherElements, "ge", {g.add_input("x", f32({2, 5})), g.add_input("i", i64({3, 1}))},
        {{"axis", std::int64_t{1}}});
    expect_error(g, ErrorKind::Shape, {"ge", "exceeds", "dim 0"});
  }
  SECTION("axis out of range") {
    Graph g;
    add(g, OpKind::GatherElements, "ge", {g.add_input("x", f32({2, 5})), g.add_input("i", i64({2, 5}))},
        {{"axis", std::int64_t{-3}}});
    expect_error(g, ErrorKind::Shape, {"ge", "axis"});
  }
  SECTION("float indices") {
    Graph g;
    add(g, OpKind::GatherElements, "ge", {g.add_input("x", f32({2, 5})), g.add_input("i", f32({2, 5}))});
    expect_error(g, ErrorKind::Model, {"ge", "f32"});
  }
}
