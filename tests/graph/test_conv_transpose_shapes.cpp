// Shape inference of ConvTranspose: symbolic output lengths from strides,
// pads, dilations and output_padding, output_shape and auto_pad SAME taking
// over, groups multiplying W's output channels, and the errors that name
// the node.
#include <catch2/catch.hpp>

#include <string>
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
const Dim L = Dim::symbol("L");

using Ints = std::vector<std::int64_t>;

}  // namespace

TEST_CASE("ConvTranspose: output lengths from the geometry", "[unit][shape_inference]") {
  Graph g;
  const ValueId x = g.add_input("x", f32({N, 4, L}));
  const ValueId w = g.add_input("w", f32({4, 3, 5}));
  add(g, OpKind::ConvTranspose, "plain", {x, w});
  // 2 * (L - 1) + 2 * (5 - 1) + 1 + 1 - 3 = 2L + 5
  add(g, OpKind::ConvTranspose, "geometry", {x, w},
      {{"strides", Ints{2}}, {"dilations", Ints{2}}, {"pads", Ints{1, 2}}, {"output_padding", Ints{1}}});
  add(g, OpKind::ConvTranspose, "shaped", {x, w}, {{"strides", Ints{2}}, {"output_shape", Ints{40}}});
  add(g, OpKind::ConvTranspose, "same", {x, w}, {{"strides", Ints{3}}, {"auto_pad", std::string("SAME_LOWER")}});
  add(g, OpKind::ConvTranspose, "valid", {x, w},
      {{"pads", Ints{7, 7}}, {"auto_pad", std::string("VALID")}});
  infer_shapes(g);
  check_dims(type_of(g, "plain").shape, {N, 3, L + Dim(4)});
  const DimVector geometry = type_of(g, "geometry").shape;
  REQUIRE(geometry.size() == 3);
  CHECK(eval(geometry[2], "L", 10) == 25);
  check_dims(type_of(g, "shaped").shape, {N, 3, 40});
  check_dims(type_of(g, "same").shape, {N, 3, L * Dim(3)});
  check_dims(type_of(g, "valid").shape, {N, 3, L + Dim(4)});
}

TEST_CASE("ConvTranspose: groups, 2-D and 3-D, bias", "[unit][shape_inference]") {
  Graph g;
  const ValueId x2 = g.add_input("x2", f32({N, 6, 7, 8}));
  add(g, OpKind::ConvTranspose, "grouped", {x2, g.add_input("w2", f32({6, 2, 3, 3})), g.add_input("b", f32({6}))},
      {{"group", std::int64_t{3}}, {"strides", Ints{2, 1}}});
  add(g, OpKind::ConvTranspose, "cube", {g.add_input("x3", f32({1, 1, 3, 4, 5})), g.add_input("w3", f32({1, 2, 3, 3, 3}))});
  infer_shapes(g);
  check_dims(type_of(g, "grouped").shape, {N, 6, 15, 10});
  check_dims(type_of(g, "cube").shape, {1, 2, 5, 6, 7});
}

TEST_CASE("ConvTranspose: errors name the node", "[unit][shape_inference]") {
  SECTION("input channels differ from W's first dim") {
    Graph g;
    add(g, OpKind::ConvTranspose, "up", {g.add_input("x", f32({1, 4, 8})), g.add_input("w", f32({3, 2, 3}))});
    expect_error(g, ErrorKind::Shape, {"up"});
  }
  SECTION("channels not divisible by group") {
    Graph g;
    add(g, OpKind::ConvTranspose, "up", {g.add_input("x", f32({1, 4, 8})), g.add_input("w", f32({4, 2, 3}))},
        {{"group", std::int64_t{3}}});
    expect_error(g, ErrorKind::Shape, {"up", "not divisible by group 3"});
  }
  SECTION("a bias of the wrong length") {
    Graph g;
    add(g, OpKind::ConvTranspose, "up",
        {g.add_input("x", f32({1, 4, 8})), g.add_input("w", f32({4, 2, 3})), g.add_input("b", f32({3}))},
        {{"group", std::int64_t{2}}});
    expect_error(g, ErrorKind::Shape, {"up", "bias length"});
  }
  SECTION("negative output_padding") {
    Graph g;
    add(g, OpKind::ConvTranspose, "up", {g.add_input("x", f32({1, 4, 8})), g.add_input("w", f32({4, 2, 3}))},
        {{"output_padding", Ints{-1}}});
    expect_error(g, ErrorKind::Model, {"up", "output_padding"});
  }
  SECTION("an output_shape of the wrong length") {
    Graph g;
    add(g, OpKind::ConvTranspose, "up", {g.add_input("x", f32({1, 4, 8})), g.add_input("w", f32({4, 2, 3}))},
        {{"output_shape", Ints{8, 8}}});
    expect_error(g, ErrorKind::Model, {"up", "output_shape", "expected 1"});
  }
  SECTION("more than three spatial axes") {
    Graph g;
    add(g, OpKind::ConvTranspose, "up",
        {g.add_input("x", f32({1, 1, 2, 2, 2, 2})), g.add_input("w", f32({1, 1, 1, 1, 1, 1}))});
    expect_error(g, ErrorKind::Model, {"up", "1-D to 3-D"});
  }
  SECTION("integer input") {
    Graph g;
    add(g, OpKind::ConvTranspose, "up",
        {g.add_input("x", ValueType{DType::I64, {1, 1, 2}}), g.add_input("w", ValueType{DType::I64, {1, 1, 2}})});
    expect_error(g, ErrorKind::Model, {"up"});
  }
}
