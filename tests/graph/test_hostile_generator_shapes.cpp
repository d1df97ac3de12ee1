// Tests of the ConstantOfShape, Reshape and Expand shape rules against hostile
// inputs: shape inputs far longer than the rank limit, and integer fill values
// at the edges of their dtype.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "canary/error.h"
#include "canary/tensor.h"
#include "graph/graph.h"
#include "graph/op_registry.h"

using namespace canary;
using namespace canary::graph;

namespace {

// Adds a one-output node whose node and output share a name.
ValueId add(Graph& g, OpKind op, const std::string& name, std::vector<ValueId> in, Attributes attrs = {}) {
  NodeId n = g.add_node(op, name, std::move(in), {name}, std::move(attrs));
  return g.node(n).outputs[0];
}

// A 1-D i64 constant.
ValueId ints(Graph& g, const std::string& name, const std::vector<std::int64_t>& v) {
  return g.add_constant(name, Tensor::from_vector<std::int64_t>(v, {static_cast<std::int64_t>(v.size())}));
}

// Runs inference and asserts it fails with `kind` and a message containing every fragment.
void require_infer_error(Graph& g, ErrorKind kind, const std::vector<std::string>& fragments) {
  try {
    infer_shapes(g);
    FAIL("expected a canary::Error");
  } catch (const Error& e) {
    CHECK(e.kind() == kind);
    for (const std::string& s : fragments) CHECK_THAT(std::string(e.what()), Catch::Matchers::Contains(s));
  }
}

}  // namespace

TEST_CASE("ConstantOfShape fails fast on an unknown shape input of huge length", "[unit][hostile_shapes]") {
  // One fresh symbol per element would mean 2^40 symbols; the rule must fail before that.
  Graph g;
  ValueId dims = g.add_input("dims", ValueType{DType::I64, {std::int64_t{1} << 40}});
  add(g, OpKind::ConstantOfShape, "c", {dims});
  require_infer_error(g, ErrorKind::Shape, {"(ConstantOfShape)", "1099511627776", "limit"});
}

TEST_CASE("ConstantOfShape rejects a shape input one longer than the rank limit", "[unit][hostile_shapes]") {
  Graph unknown;
  ValueId dims = unknown.add_input("dims", ValueType{DType::I64, {static_cast<std::int64_t>(kMaxTensorRank) + 1}});
  add(unknown, OpKind::ConstantOfShape, "c", {dims});
  require_infer_error(unknown, ErrorKind::Shape, {"(ConstantOfShape)", "limit"});
  Graph known;
  add(known, OpKind::ConstantOfShape, "c", {ints(known, "ones", std::vector<std::int64_t>(kMaxTensorRank + 1, 1))});
  require_infer_error(known, ErrorKind::Shape, {"(ConstantOfShape)", "limit"});
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
    require_infer_error(g, ErrorKind::Shape, {"1099511627776", "limit"});
  }
}
