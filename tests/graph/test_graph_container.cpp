// Tests of the Graph container, value types, attribute types and op names.
#include <catch2/catch.hpp>

#include <set>

#include "canary/error.h"
#include "canary/tensor.h"
#include "graph/graph.h"

using canary::DType;
using canary::Error;
using canary::ErrorKind;
using canary::Tensor;
using namespace canary::graph;

namespace {

// A type with the given dtype and dims.
ValueType type_of(DType dtype, DimVector shape) { return ValueType{dtype, std::move(shape)}; }

}  // namespace

TEST_CASE("value types print dtype and dims", "[unit][graph]") {
  CHECK(type_of(DType::F32, {Dim::symbol("N"), Dim(128)}).to_string() == "f32[N, 128]");
  CHECK(type_of(DType::I64, {}).to_string() == "i64[]");
  CHECK(type_of(DType::F32, {}).rank() == 0);
  CHECK(type_of(DType::Bool, {Dim(2), Dim(3)}).rank() == 2);
}

TEST_CASE("a graph owns or shares its symbol table", "[unit][graph]") {
  Graph g;
  CHECK(g.name == "main");
  REQUIRE(g.shared_symbols() != nullptr);
  g.symbols().declare("N");
  Graph body("body", g.shared_symbols());
  CHECK(body.shared_symbols() == g.shared_symbols());
  CHECK(body.symbols().contains("N"));
  Graph other("other");
  CHECK(other.shared_symbols() != g.shared_symbols());
}

TEST_CASE("building a graph records inputs, constants, nodes and outputs", "[unit][graph]") {
  Graph g;
  Dim n = g.symbols().declare("N");
  ValueId x = g.add_input("x", type_of(DType::F32, {n, Dim(3)}));
  ValueId w = g.add_constant("w", Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {3, 2}));
  NodeId mm = g.add_node(OpKind::MatMul, "mm", {x, w}, {"y"});
  ValueId y = g.node(mm).outputs.at(0);
  g.add_output(y);

  CHECK(g.inputs() == std::vector<ValueId>{x});
  CHECK(g.constants() == std::vector<ValueId>{w});
  CHECK(g.outputs() == std::vector<ValueId>{y});
  CHECK(g.value(w).type.to_string() == "f32[3, 2]");
  REQUIRE(g.value(w).constant.has_value());
  CHECK(g.value(w).constant->numel() == 6);
  CHECK_FALSE(g.value(x).producer.valid());
  CHECK(g.value(y).producer == mm);
  CHECK(g.value(y).name == "y");
  CHECK(g.node(mm).op == OpKind::MatMul);
  CHECK(g.node(mm).inputs == std::vector<ValueId>{x, w});
  CHECK(g.nodes().size() == 1);
  CHECK(g.values().size() == 3);
  CHECK(g.find_value("y") == y);
  CHECK(g.find_value("x") == x);
  CHECK_FALSE(g.find_value("z").has_value());
}

TEST_CASE("omitted optional inputs and outputs are none", "[unit][graph]") {
  Graph g;
  ValueId x = g.add_input("x", type_of(DType::F32, {Dim(4)}));
  NodeId ln = g.add_node(OpKind::LayerNormalization, "ln", {x, x, ValueId::none()}, {"y", "", "inv"},
                         {{"axis", std::int64_t{-1}}});
  const Node& node = g.node(ln);
  CHECK_FALSE(node.inputs[2].valid());
  REQUIRE(node.outputs.size() == 3);
  CHECK(node.outputs[0].valid());
  CHECK_FALSE(node.outputs[1].valid());
  CHECK(g.value(node.outputs[2]).name == "inv");
  CHECK(std::get<std::int64_t>(node.attrs.at("axis")) == -1);
}

TEST_CASE("value names are unique within a graph", "[unit][graph]") {
  Graph g;
  ValueId x = g.add_input("x", type_of(DType::F32, {Dim(4)}));
  auto expect_duplicate = [](auto&& f) {
    try {
      f();
      FAIL("duplicate accepted");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::Model);
      CHECK_THAT(e.detail(), Catch::Contains("'x'"));
    }
  };
  expect_duplicate([&] { g.add_input("x", type_of(DType::F32, {})); });
  expect_duplicate([&] { g.add_constant("x", Tensor::scalar<float>(1.0f)); });
  expect_duplicate([&] { g.add_node(OpKind::Relu, "r", {x}, {"x"}); });
  expect_duplicate([&] { g.add_node(OpKind::LSTM, "l", {x, x, x}, {"x", "x"}); });
  CHECK_THROWS_AS(g.add_node(OpKind::LayerNormalization, "ln", {x, x}, {"y", "y"}), Error);
  CHECK(g.nodes().empty());
  CHECK(g.values().size() == 1);
  Graph sub("body", g.shared_symbols());
  sub.add_input("x", type_of(DType::F32, {}));  // another graph may reuse the name
}

TEST_CASE("invalid value ids are rejected", "[unit][graph]") {
  Graph g;
  ValueId x = g.add_input("x", type_of(DType::F32, {Dim(4)}));
  try {
    g.add_node(OpKind::Add, "add1", {x, ValueId{7}}, {"y"});
    FAIL("bad input accepted");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Model);
    CHECK_THAT(e.detail(), Catch::Contains("'add1'"));
    CHECK_THAT(e.detail(), Catch::Contains("7"));
  }
  CHECK(g.nodes().empty());
  CHECK_FALSE(g.find_value("y").has_value());
  CHECK_THROWS_AS(g.add_output(ValueId{42}), Error);
  CHECK_THROWS_AS(g.add_output(ValueId::none()), Error);
  CHECK_THROWS_AS(g.add_capture("c", type_of(DType::F32, {}), ValueId::none()), Error);
  CHECK_THROWS_AS(g.add_input("", type_of(DType::F32, {})), Error);
  CHECK(g.outputs().empty());
}

TEST_CASE("captures link a subgraph value to an outer value", "[unit][graph]") {
  Graph g;
  ValueId x = g.add_input("x", type_of(DType::F32, {Dim(4)}));
  Graph body("body", g.shared_symbols());
  ValueId c = body.add_capture("x_outer", g.value(x).type, x);
  REQUIRE(body.captures().size() == 1);
  CHECK(body.captures()[0].local == c);
  CHECK(body.captures()[0].outer == x);
  CHECK_FALSE(body.value(c).producer.valid());
  auto shared = std::make_shared<Graph>(std::move(body));
  Attributes attrs{{"body", shared}};
  CHECK(attr_type_of(attrs.at("body")) == AttrType::Graph);
}

TEST_CASE("attribute types have names", "[unit][graph]") {
  CHECK(attr_type_of(AttrValue{std::int64_t{3}}) == AttrType::Int);
  CHECK(attr_type_of(AttrValue{2.5}) == AttrType::Float);
  CHECK(attr_type_of(AttrValue{std::string("a")}) == AttrType::String);
  CHECK(attr_type_of(AttrValue{std::vector<std::int64_t>{1, 2}}) == AttrType::Ints);
  CHECK(attr_type_of(AttrValue{std::vector<double>{1.0}}) == AttrType::Floats);
  CHECK(attr_type_of(AttrValue{Tensor::scalar<float>(1.0f)}) == AttrType::Tensor);
  CHECK(std::string(attr_type_name(AttrType::Int)) == "int");
  CHECK(std::string(attr_type_name(AttrType::Float)) == "float");
  CHECK(std::string(attr_type_name(AttrType::String)) == "string");
  CHECK(std::string(attr_type_name(AttrType::Ints)) == "ints");
  CHECK(std::string(attr_type_name(AttrType::Floats)) == "floats");
  CHECK(std::string(attr_type_name(AttrType::Tensor)) == "tensor");
  CHECK(std::string(attr_type_name(AttrType::Graph)) == "graph");
}

TEST_CASE("every op name maps back to its op", "[unit][graph][ops]") {
  std::set<std::string_view> names;
  for (int i = 0; i < kOpKindCount; ++i) {
    auto op = static_cast<OpKind>(i);
    INFO(op_name(op));
    CHECK(find_op(op_name(op)) == op);
    CHECK(names.insert(op_name(op)).second);
  }
  CHECK(kOpKindCount == 120);
  CHECK(op_name(OpKind::Add) == "Add");
  CHECK(op_name(OpKind::LayerNormalization) == "LayerNormalization");
  CHECK(op_name(OpKind::Scan) == "Scan");
  CHECK(find_op("Conv") == OpKind::Conv);
  CHECK(find_op("LSTM") == OpKind::LSTM);
  CHECK_FALSE(find_op("conv").has_value());
  CHECK_FALSE(find_op("Convolution").has_value());
  CHECK_FALSE(find_op("").has_value());
}
