// Regression tests of pooling and recurrent shape inference against
// attributes whose products overflow int64: each must give Error(Shape)
// naming the values instead of wrapping around.
#include <catch2/catch.hpp>

#include <cstdint>
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

using Ints = std::vector<std::int64_t>;

}  // namespace

TEST_CASE("MaxPool with kernel 2^62 and dilation 3 reports the span overflow", "[unit][shape_inference][pool]") {
  Graph g;
  ValueId x = g.add_input("x", ValueType{DType::F32, {1, 1, 8}});
  g.add_node(OpKind::MaxPool, "mp", {x}, {"y"},
             {{"kernel_shape", Ints{std::int64_t{1} << 62}}, {"dilations", Ints{3}}});
  expect_error(g, ErrorKind::Shape, {"node 'mp' (MaxPool)", "dilation 3", "kernel 4611686018427387904", "overflows"});
}

TEST_CASE("AveragePool with pads near the kernel span near int64 max computes the room without overflow",
          "[unit][shape_inference][pool]") {
  // kernel 2^62 (span 2^62), pads 2^62 - 1 each: room = 8 + 2^63 - 2 - 2^62 = 2^62 + 6, so out = 2^62 + 7.
  const std::int64_t big = std::int64_t{1} << 62;
  Graph g;
  ValueId x = g.add_input("x", ValueType{DType::F32, {1, 1, 8}});
  g.add_node(OpKind::AveragePool, "ap", {x}, {"y"}, {{"kernel_shape", Ints{big}}, {"pads", Ints{big - 1, big - 1}}});
  infer_shapes(g);
  const DimVector& y = g.value(*g.find_value("y")).type.shape;
  REQUIRE(y.size() == 3);
  CHECK(y[2] == Dim(big + 7));
}

TEST_CASE("GRU and LSTM with hidden_size 2^62 report the gate-size overflow", "[unit][shape_inference][gru]") {
  const std::int64_t huge = std::int64_t{1} << 62;
  const ValueType tiny{DType::F32, {1, 1, 1}};
  SECTION("GRU") {
    Graph g;
    ValueId x = g.add_input("x", tiny), w = g.add_input("w", tiny), r = g.add_input("r", tiny);
    g.add_node(OpKind::GRU, "gru", {x, w, r}, {"y"}, {{"hidden_size", huge}});
    expect_error(g, ErrorKind::Shape, {"node 'gru' (GRU)", "4611686018427387904", "overflows"});
  }
  SECTION("LSTM") {
    Graph g;
    ValueId x = g.add_input("x", tiny), w = g.add_input("w", tiny), r = g.add_input("r", tiny);
    g.add_node(OpKind::LSTM, "lstm", {x, w, r}, {"y"}, {{"hidden_size", huge}});
    expect_error(g, ErrorKind::Shape, {"node 'lstm' (LSTM)", "4611686018427387904", "overflows"});
  }
}
