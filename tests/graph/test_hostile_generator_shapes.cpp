// Tests of the ConstantOfShape, Range, Reshape and Expand shape rules against
// hostile inputs: shape inputs far longer than the rank limit, and integer
// fill values and Range operands at the edges of their dtype.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "canary/error.h"
#include "canary/tensor.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "tests/graph/graph_test_support.h"

using namespace canary;
using namespace canary::graph;
using namespace canary::test;

namespace {

}  // namespace

TEST_CASE("ConstantOfShape fails fast on an unknown shape input of huge length", "[unit][hostile_shapes]") {
  // One fresh symbol per element would mean 2^40 symbols; the rule must fail before that.
  Graph g;
  ValueId dims = g.add_input("dims", ValueType{DType::I64, {std::int64_t{1} << 40}});
  add(g, OpKind::ConstantOfShape, "c", {dims});
  expect_error(g, ErrorKind::Shape, {"(ConstantOfShape)", "1099511627776", "limit"});
}

TEST_CASE("ConstantOfShape rejects a shape input one longer than the rank limit", "[unit][hostile_shapes]") {
  Graph unknown;
  ValueId dims = unknown.add_input("dims", ValueType{DType::I64, {static_cast<std::int64_t>(kMaxTensorRank) + 1}});
  add(unknown, OpKind::ConstantOfShape, "c", {dims});
  expect_error(unknown, ErrorKind::Shape, {"(ConstantOfShape)", "limit"});
  Graph known;
  add(known, OpKind::ConstantOfShape, "c", {ints(known, "ones", std::vector<std::int64_t>(kMaxTensorRank + 1, 1))});
  expect_error(known, ErrorKind::Shape, {"(ConstantOfShape)", "limit"});
  // Exactly the limit is accepted.
  Graph edge;
  ValueId at_limit = edge.add_input("dims", ValueType{DType::I64, {static_cast<std::int64_t>(kMaxTensorRank)}});
  add(edge, OpKind::ConstantOfShape, "c", {at_limit});
  infer_shapes(edge);
  CHECK(edge.value(*edge.find_value("c")).type.rank() == static_cast<int>(kMaxTensorRank));
}

TEST_CASE("ConstantOfShape reads integer fill values exactly", "[unit][hostile_shapes]") {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int32_t kMin32 = std::numeric_limits<std::int32_t>::min();
  Graph g;
  add(g, OpKind::ConstantOfShape, "big", {ints(g, "two", {2})},
      {{"value", Tensor::from_vector<std::int64_t>({kMax}, {1})}});
  add(g, OpKind::ConstantOfShape, "small", {ints(g, "one", {1})},
      {{"value", Tensor::from_vector<std::int32_t>({kMin32}, {1})}});
  infer_shapes(g);
  const std::optional<DimVector>& big = g.value(*g.find_value("big")).known_dims;
  REQUIRE(big);
  REQUIRE(big->size() == 2);
  for (const Dim& d : *big) {
    REQUIRE(d.is_constant());
    CHECK(d.value() == kMax);
  }
  const std::optional<DimVector>& small = g.value(*g.find_value("small")).known_dims;
  REQUIRE(small);
  REQUIRE(small->size() == 1);
  REQUIRE((*small)[0].is_constant());
  CHECK((*small)[0].value() == kMin32);
}

TEST_CASE("Reshape and Expand fail fast on an unknown shape input of huge length", "[unit][hostile_shapes]") {
  for (OpKind op : {OpKind::Reshape, OpKind::Expand}) {
    Graph g;
    ValueId x = g.add_input("x", ValueType{DType::F32, {4}});
    ValueId dims = g.add_input("dims", ValueType{DType::I64, {std::int64_t{1} << 40}});
    add(g, op, "y", {x, dims});
    expect_error(g, ErrorKind::Shape, {"1099511627776", "limit"});
  }
}

TEST_CASE("Range from INT64_MIN to INT64_MAX by 2^62 knows its four values", "[unit][hostile_shapes]") {
  // Each value fits int64, but 2 * delta alone does not.
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kQuarter = std::int64_t{1} << 62;
  Graph g;
  add(g, OpKind::Range, "r",
      {g.add_constant("start", Tensor::scalar<std::int64_t>(kMin)),
       g.add_constant("limit", Tensor::scalar<std::int64_t>(kMax)),
       g.add_constant("delta", Tensor::scalar<std::int64_t>(kQuarter))});
  infer_shapes(g);
  check_dims(type_of(g, "r").shape, {4});
  const std::optional<DimVector>& known = g.value(*g.find_value("r")).known_dims;
  REQUIRE(known);
  check_dims(*known, {kMin, -kQuarter, 0, kQuarter});
}
