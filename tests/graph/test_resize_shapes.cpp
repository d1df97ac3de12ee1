// Shape inference of Resize (opset 13): output dims from constant scales
// (symbolic dims kept at scale 1, multiplied by a whole scale) or sizes, and
// the errors that name the node.
#include <catch2/catch.hpp>

#include <vector>

#include "canary/error.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "tests/graph/graph_test_support.h"

using namespace canary;
using namespace canary::graph;
using namespace canary::test;

namespace {

const Dim N = Dim::symbol("N");
const Dim H = Dim::symbol("H");

ValueId scales(Graph& g, const std::string& name, const std::vector<float>& v) {
  return g.add_constant(name, Tensor::from_vector<float>(v, {static_cast<std::int64_t>(v.size())}));
}

}  // namespace

TEST_CASE("Resize: output dims from scales and from sizes", "[unit][shape_inference]") {
  Graph g;
  const ValueId x = g.add_input("x", f32({N, 3, H, 8}));
  add(g, OpKind::Resize, "up", {x, ValueId(), scales(g, "s2", {1, 1, 2, 2})});
  add(g, OpKind::Resize, "down", {x, ValueId(), scales(g, "s06", {1, 1, 1, 0.6f})}, {{"mode", std::string("linear")}});
  add(g, OpKind::Resize, "odd", {x, ValueId(), scales(g, "s15", {1, 1, 1.5f, 1})});
  add(g, OpKind::Resize, "to", {x, ValueId(), ValueId(), ints(g, "sizes", {2, 3, 5, 7})});
  const ValueId empty = g.add_constant("empty", Tensor::empty(DType::F32, {0}));
  add(g, OpKind::Resize, "to2", {x, ValueId(), empty, ints(g, "sizes2", {1, 1, 4, 4})});
  infer_shapes(g);
  check_dims(type_of(g, "up").shape, {N, 3, H * Dim(2), 16});
  check_dims(type_of(g, "down").shape, {N, 3, H, 4});  // floor(8 * 0.6)
  const DimVector odd = type_of(g, "odd").shape;
  REQUIRE(odd.size() == 4);
  CHECK(odd[2].is_symbol());  // H * 1.5 is not a whole dim: a fresh symbol
  CHECK(!(odd[2] == H));
  check_dims(type_of(g, "to").shape, {2, 3, 5, 7});
  check_dims(type_of(g, "to2").shape, {1, 1, 4, 4});
}

TEST_CASE("Resize: errors name the node", "[unit][shape_inference]") {
  SECTION("neither scales nor sizes") {
    Graph g;
    add(g, OpKind::Resize, "rs", {g.add_input("x", f32({2, 4}))});
    expect_error(g, ErrorKind::Model, {"rs", "neither scales"});
  }
  SECTION("both scales and sizes") {
    Graph g;
    const ValueId x = g.add_input("x", f32({2, 4}));
    add(g, OpKind::Resize, "rs", {x, ValueId(), scales(g, "s", {1, 2}), ints(g, "z", {2, 8})});
    expect_error(g, ErrorKind::Model, {"rs", "both scales"});
  }
  SECTION("scales of the wrong length") {
    Graph g;
    add(g, OpKind::Resize, "rs", {g.add_input("x", f32({2, 4})), ValueId(), scales(g, "s", {1, 2, 2})});
    expect_error(g, ErrorKind::Shape, {"rs", "scales", "3 entries, expected 2"});
  }
  SECTION("a scale that is not positive") {
    Graph g;
    add(g, OpKind::Resize, "rs", {g.add_input("x", f32({2, 4})), ValueId(), scales(g, "s", {1, 0})});
    expect_error(g, ErrorKind::Model, {"rs", "not positive"});
  }
  SECTION("a negative size") {
    Graph g;
    add(g, OpKind::Resize, "rs", {g.add_input("x", f32({2, 4})), ValueId(), ValueId(), ints(g, "z", {2, -1})});
    expect_error(g, ErrorKind::Shape, {"rs", "negative"});
  }
  SECTION("an unknown mode") {
    Graph g;
    add(g, OpKind::Resize, "rs", {g.add_input("x", f32({2, 4})), ValueId(), scales(g, "s", {1, 2})},
        {{"mode", std::string("bilinear")}});
    expect_error(g, ErrorKind::Model, {"rs", "mode \"bilinear\"", "nearest, linear, cubic"});
  }
  SECTION("an integer X") {
    Graph g;
    add(g, OpKind::Resize, "rs",
        {g.add_input("x", ValueType{DType::I64, {2, 4}}), ValueId(), scales(g, "s", {1, 2})});
    expect_error(g, ErrorKind::Model, {"rs", "i64"});
  }
}
