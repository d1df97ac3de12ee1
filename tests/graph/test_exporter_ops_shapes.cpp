// Tests of symbolic shape inference and validation for ops exporters emit
// (elementwise extras, Dropout, ConstantOfShape, Range, Tile, Pad, Split),
// with hand-derived symbolic shapes, and a text-format round trip of a graph
// that uses several of them.
#include <catch2/catch.hpp>

#include "canary/error.h"
#include "canary/tensor.h"
#include "graph/graph.h"
#include "graph/onnx_import.h"
#include "graph/op_registry.h"
#include "graph/text_format.h"
#include "tests/graph/onnx_fixtures.h"
#include "tests/graph/graph_test_support.h"

using namespace canary;
using namespace canary::graph;
using namespace canary::test;

namespace {

const Dim N = Dim::symbol("N");
const Dim T = Dim::symbol("T");

// Asserts dims are equal under the graph's symbol table, element by element.
void check_dims(const Graph& g, const DimVector& got, const DimVector& want) {
  INFO("got " << dims_to_string(got) << ", want " << dims_to_string(want));
  REQUIRE(got.size() == want.size());
  for (std::size_t k = 0; k < got.size(); ++k) CHECK(g.symbols().equal(got[k], want[k]));
}

}  // namespace

TEST_CASE("elementwise extras keep shapes; logical ops broadcast to bool", "[unit][exporter_ops]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 4}));
  ValueId a = g.add_input("a", ValueType{DType::Bool, {N, 1}});
  ValueId b = g.add_input("b", ValueType{DType::Bool, {4}});
  ValueId k = g.add_input("k", ValueType{DType::I64, {N, 4}});
  ValueId d = g.add_input("d", ValueType{DType::I64, {1}});
  add(g, OpKind::Softplus, "sp", {x});
  add(g, OpKind::HardSigmoid, "hs", {x}, {{"alpha", 0.3}});
  add(g, OpKind::Sign, "sg", {k});
  add(g, OpKind::And, "ab", {a, b});
  add(g, OpKind::Not, "na", {a});
  add(g, OpKind::Mod, "km", {k, d}, {{"fmod", std::int64_t{1}}});
  NodeId drop = g.add_node(OpKind::Dropout, "drop", {x}, {"dy", "dmask"});
  infer_shapes(g);
  CHECK(type_of(g, "sp").to_string() == "f32[N, 4]");
  CHECK(type_of(g, "hs").to_string() == "f32[N, 4]");
  CHECK(type_of(g, "sg").to_string() == "i64[N, 4]");
  CHECK(type_of(g, "ab").to_string() == "bool[N, 4]");
  CHECK(type_of(g, "na").to_string() == "bool[N, 1]");
  CHECK(type_of(g, "km").to_string() == "i64[N, 4]");
  CHECK(g.value(g.node(drop).outputs[0]).type.to_string() == "f32[N, 4]");
  CHECK(g.value(g.node(drop).outputs[1]).type.to_string() == "bool[N, 4]");
}

TEST_CASE("elementwise extras reject wrong dtypes and attributes", "[unit][exporter_ops]") {
  SECTION("Reciprocal of an integer") {
    Graph g;
    add(g, OpKind::Reciprocal, "r", {g.add_input("k", ValueType{DType::I64, {2}})});
    expect_error(g, ErrorKind::Model, {"node 'r' (Reciprocal)", "i64"});
  }
  SECTION("Or of floats") {
    Graph g;
    ValueId x = g.add_input("x", f32({2}));
    add(g, OpKind::Or, "o", {x, x});
    expect_error(g, ErrorKind::Model, {"(Or)", "f32", "bool"});
  }
  SECTION("Mod of mixed dtypes and a bad fmod") {
    Graph g;
    ValueId x = g.add_input("x", f32({2}));
    ValueId k = g.add_input("k", ValueType{DType::I64, {2}});
    add(g, OpKind::Mod, "m", {x, k});
    expect_error(g, ErrorKind::Model, {"(Mod)", "input 1 ('k')", "i64"});
    Graph h;
    ValueId y = h.add_input("y", f32({2}));
    add(h, OpKind::Mod, "m", {y, y}, {{"fmod", std::int64_t{2}}});
    expect_error(h, ErrorKind::Model, {"fmod", "2"});
  }
  SECTION("Dropout with a constant true training_mode") {
    Graph g;
    ValueId x = g.add_input("x", f32({2}));
    ValueId mode = g.add_constant("mode", Tensor::scalar<bool>(true));
    add(g, OpKind::Dropout, "drop", {x, ValueId::none(), mode});
    expect_error(g, ErrorKind::Model, {"(Dropout)", "training mode is not supported"});
  }
}

TEST_CASE("ConstantOfShape takes the input's symbolic dims from Shape", "[unit][exporter_ops]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, T}));
  ValueId s = add(g, OpKind::Shape, "s", {x});
  add(g, OpKind::ConstantOfShape, "zeros", {s});
  add(g, OpKind::ConstantOfShape, "sevens", {s}, {{"value", Tensor::from_vector<std::int64_t>({7}, {1})}});
  add(g, OpKind::ConstantOfShape, "fixed", {ints(g, "two_three", {2, 3})});
  ValueId unknown = g.add_input("dims", ValueType{DType::I64, {3}});
  add(g, OpKind::ConstantOfShape, "fresh", {unknown});
  add(g, OpKind::ConstantOfShape, "vec", {ints(g, "three", {3})},
      {{"value", Tensor::from_vector<std::int64_t>({5}, {1})}});
  infer_shapes(g);
  CHECK(type_of(g, "zeros").to_string() == "f32[N, T]");
  CHECK(type_of(g, "sevens").to_string() == "i64[N, T]");
  CHECK(type_of(g, "fixed").to_string() == "f32[2, 3]");
  CHECK(type_of(g, "fresh").rank() == 3);
  const std::optional<DimVector>& known = g.value(*g.find_value("vec")).known_dims;
  REQUIRE(known);
  check_dims(g, *known, {5, 5, 5});
}

TEST_CASE("ConstantOfShape rejects a negative dim and a multi-element value", "[unit][exporter_ops]") {
  Graph g;
  add(g, OpKind::ConstantOfShape, "c", {ints(g, "bad", {2, -1})});
  expect_error(g, ErrorKind::Shape, {"(ConstantOfShape)", "negative"});
  Graph h;
  add(h, OpKind::ConstantOfShape, "c", {ints(h, "ok", {2})}, {{"value", Tensor::from_vector<float>({1, 2}, {2})}});
  expect_error(h, ErrorKind::Model, {"'value'", "one element"});
}

TEST_CASE("Range lengths: constants, negative delta, floats and symbolic limits", "[unit][exporter_ops]") {
  Graph g;
  auto scalar = [&](const std::string& name, std::int64_t v) {
    return g.add_constant(name, Tensor::scalar<std::int64_t>(v));
  };
  auto real = [&](const std::string& name, float v) { return g.add_constant(name, Tensor::scalar<float>(v)); };
  ValueId zero = scalar("zero", 0), one = scalar("one", 1), ten = scalar("ten", 10), three = scalar("three", 3);
  add(g, OpKind::Range, "up", {zero, ten, three});
  add(g, OpKind::Range, "down", {ten, scalar("four", 4), scalar("minus_two", -2)});
  add(g, OpKind::Range, "none", {ten, zero, one});
  add(g, OpKind::Range, "quarters", {real("f0", 0.0f), real("f1", 1.0f), real("fq", 0.25f)});
  ValueId x = g.add_input("x", f32({N, T}));
  ValueId n = add(g, OpKind::Gather, "n", {add(g, OpKind::Shape, "s", {x}), zero});
  add(g, OpKind::Range, "to_n", {zero, n, one});
  add(g, OpKind::Range, "odd", {one, n, scalar("two", 2)});
  ValueId unknown = g.add_input("limit", ValueType{DType::I64, {}});
  add(g, OpKind::Range, "unknown", {zero, unknown, one});
  infer_shapes(g);
  CHECK(type_of(g, "up").to_string() == "i64[4]");
  CHECK(type_of(g, "down").to_string() == "i64[3]");
  CHECK(type_of(g, "none").to_string() == "i64[0]");
  CHECK(type_of(g, "quarters").to_string() == "f32[4]");
  const std::optional<DimVector>& up = g.value(*g.find_value("up")).known_dims;
  REQUIRE(up);
  check_dims(g, *up, {0, 3, 6, 9});
  // [0, N): N elements; [1, N) step 2: ceil((N - 1) / 2), e.g. 2 for N = 5 and 0 for N = 1.
  const Dim to_n = type_of(g, "to_n").shape.at(0);
  CHECK(to_n.evaluate(Bindings{{"N", 7}}) == 7);
  const Dim odd = type_of(g, "odd").shape.at(0);
  CHECK(odd.evaluate(Bindings{{"N", 5}}) == 2);
  CHECK(odd.evaluate(Bindings{{"N", 6}}) == 3);
  CHECK(odd.evaluate(Bindings{{"N", 1}}) == 0);
  CHECK(type_of(g, "unknown").rank() == 1);
  CHECK_FALSE(type_of(g, "unknown").shape[0].is_constant());
}

TEST_CASE("Range rejects a constant zero delta and mixed dtypes", "[unit][exporter_ops]") {
  Graph g;
  ValueId zero = g.add_constant("zero", Tensor::scalar<std::int64_t>(0));
  add(g, OpKind::Range, "r", {zero, zero, zero});
  expect_error(g, ErrorKind::Model, {"(Range)", "delta", "0"});
  Graph h;
  ValueId i = h.add_constant("i", Tensor::scalar<std::int64_t>(0));
  ValueId f = h.add_constant("f", Tensor::scalar<float>(1.0f));
  add(h, OpKind::Range, "r", {i, f, i});
  expect_error(h, ErrorKind::Model, {"input 1 ('f')", "f32"});
}

TEST_CASE("Pad and Tile with constant parameters on symbolic dims", "[unit][exporter_ops]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, T}));
  add(g, OpKind::Pad, "padded", {x, ints(g, "pads", {0, 1, 0, 2})});
  add(g, OpKind::Pad, "cropped", {x, ints(g, "crop", {-1, 0, 0, 0})}, {{"mode", std::string("edge")}});
  add(g, OpKind::Tile, "tiled", {x, ints(g, "reps", {2, 1})});
  ValueId pads_in = g.add_input("pads_in", ValueType{DType::I64, {4}});
  add(g, OpKind::Pad, "unknown", {x, pads_in});
  infer_shapes(g);
  check_dims(g, type_of(g, "padded").shape, {N, T + 3});
  check_dims(g, type_of(g, "cropped").shape, {N - 1, T});
  check_dims(g, type_of(g, "tiled").shape, {N * 2, T});
  CHECK(type_of(g, "unknown").rank() == 2);
}

TEST_CASE("Pad validation: mode, pads length, reflect width, constant dtype", "[unit][exporter_ops]") {
  SECTION("unknown mode") {
    Graph g;
    ValueId x = g.add_input("x", f32({3}));
    add(g, OpKind::Pad, "p", {x, ints(g, "pads", {1, 1})}, {{"mode", std::string("wrap")}});
    expect_error(g, ErrorKind::Model, {"(Pad)", "'wrap'"});
  }
  SECTION("pads of the wrong length") {
    Graph g;
    ValueId x = g.add_input("x", f32({N, 3}));
    add(g, OpKind::Pad, "p", {x, ints(g, "pads", {1, 1})});
    expect_error(g, ErrorKind::Shape, {"(Pad)", "2 entries, expected 4"});
  }
  SECTION("reflect pad as wide as the dim") {
    Graph g;
    ValueId x = g.add_input("x", f32({3}));
    add(g, OpKind::Pad, "p", {x, ints(g, "pads", {3, 0})}, {{"mode", std::string("reflect")}});
    expect_error(g, ErrorKind::Shape, {"reflect"});
  }
  SECTION("constant value of another dtype") {
    Graph g;
    ValueId x = g.add_input("x", f32({3}));
    ValueId v = g.add_constant("v", Tensor::scalar<double>(1.0));
    add(g, OpKind::Pad, "p", {x, ints(g, "pads", {1, 1}), v});
    expect_error(g, ErrorKind::Model, {"input 2 ('v')", "f64"});
  }
}

TEST_CASE("Split: equal parts and explicit sizes on symbolic dims", "[unit][exporter_ops]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 6, T}));
  NodeId equal = g.add_node(OpKind::Split, "equal", {x}, {"e0", "e1", "e2"}, {{"axis", std::int64_t{1}}});
  NodeId halves = g.add_node(OpKind::Split, "halves", {x}, {"h0", "h1"}, {{"axis", std::int64_t{-1}}});
  NodeId sized = g.add_node(OpKind::Split, "sized", {x, ints(g, "sizes", {1, 5})}, {"s0", "s1"},
                            {{"axis", std::int64_t{1}}});
  infer_shapes(g);
  for (int i = 0; i < 3; ++i) CHECK(g.value(g.node(equal).outputs[i]).type.to_string() == "f32[N, 2, T]");
  check_dims(g, g.value(g.node(halves).outputs[1]).type.shape, {N, 6, floor_div(T, 2)});
  CHECK(g.value(g.node(sized).outputs[0]).type.to_string() == "f32[N, 1, T]");
  CHECK(g.value(g.node(sized).outputs[1]).type.to_string() == "f32[N, 5, T]");
}

TEST_CASE("Split with sizes along a symbolic dim fixes it; bad splits fail", "[unit][exporter_ops]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, T}));
  g.add_node(OpKind::Split, "sized", {x, ints(g, "sizes", {2, 3})}, {"a", "b"}, {{"axis", std::int64_t{1}}});
  infer_shapes(g);
  CHECK(g.symbols().equal(T, Dim(5)));
  SECTION("equal parts that do not divide a constant dim") {
    Graph h;
    ValueId y = h.add_input("y", f32({N, 5}));
    h.add_node(OpKind::Split, "s", {y}, {"a", "b"}, {{"axis", std::int64_t{1}}});
    expect_error(h, ErrorKind::Shape, {"(Split)", "2 equal parts"});
  }
  SECTION("sizes that do not sum to a constant dim") {
    Graph h;
    ValueId y = h.add_input("y", f32({4}));
    h.add_node(OpKind::Split, "s", {y, ints(h, "sizes", {1, 2})}, {"a", "b"});
    expect_error(h, ErrorKind::Shape, {"(Split)", "sum of split"});
  }
  SECTION("sizes of the wrong count") {
    Graph h;
    ValueId y = h.add_input("y", f32({4}));
    h.add_node(OpKind::Split, "s", {y, ints(h, "sizes", {1, 2, 1})}, {"a", "b"});
    expect_error(h, ErrorKind::Shape, {"3 entries, expected 2"});
  }
}

TEST_CASE("text format: a graph of exporter ops round trips and infers", "[unit][exporter_ops][text_format]") {
  const std::string text = R"(canary v1
graph main(x: f32[N, 4], m: bool[N, 4]) -> (y, first, second, r, z, keep) {
  const pads: i64[4] = [0, 1, 0, 1]
  const fill: f32[] = [0.5]
  const start: i64[] = [0]
  const step: i64[] = [2]
  p = Pad(x, pads, fill) {mode = "constant"}
  l = LeakyRelu(p) {alpha = 0.1}
  h = HardSigmoid(l) {alpha = 0.2, beta = 0.5}
  d, mask = Dropout(h)
  y = Round(d)
  first, second = Split(y) {axis = 1}
  s = Shape(x)
  z = ConstantOfShape(s) {value = i64[1] [3]}
  n = Gather(s, start) {axis = 0}
  r = Range(start, n, step)
  nm = Not(m)
  keep = Or(m, nm)
}
)";
  std::shared_ptr<Graph> g = parse_graph(text, "<exporter ops>");
  const std::string printed = print_graph(*g);
  std::shared_ptr<Graph> again = parse_graph(printed, "<printed>");
  CHECK(print_graph(*again) == printed);
  CHECK(type_of(*again, "p").to_string() == "f32[N, 6]");
  CHECK(type_of(*again, "first").to_string() == "f32[N, 3]");
  CHECK(type_of(*again, "z").to_string() == "i64[N, 4]");
  CHECK(type_of(*again, "mask").to_string() == "bool[N, 6]");
  CHECK(std::get<double>(again->node(NodeId{1}).attrs.at("alpha")) == 0.1);
  CHECK(std::get<Tensor>(again->node(NodeId{7}).attrs.at("value")).data<std::int64_t>()[0] == 3);
  CHECK(type_of(*again, "r").shape.at(0).evaluate(Bindings{{"N", 5}}) == 3);
}

TEST_CASE("ONNX import of exporter ops with their attributes", "[unit][exporter_ops][onnx]") {
  namespace fx = onnx_fixtures;
  onnx::AttributeProto fill_value;
  fill_value.set_name("value");
  fill_value.set_type(onnx::AttributeProto::TENSOR);
  *fill_value.mutable_t() = fx::i64_tensor("", {1}, {4});
  onnx::GraphProto g = fx::graph(
      "exported",
      {fx::node("Shape", {"x"}, {"s"}),
       fx::node("ConstantOfShape", {"s"}, {"fours"}, {fill_value}),
       fx::node("Pad", {"x", "pads"}, {"p"}, {fx::attr_string("mode", "reflect")}),
       fx::node("LeakyRelu", {"p"}, {"l"}, {fx::attr_float("alpha", 0.25f)}),
       fx::node("Dropout", {"l"}, {"d", "mask"}, {fx::attr_int("seed", 7)}),
       fx::node("Split", {"d", "sizes"}, {"a", "b"}, {fx::attr_int("axis", 1)}),
       fx::node("Mod", {"fours", "fours"}, {"m"}, {fx::attr_int("fmod", 1)})},
      {fx::value("x", fx::kFloat, {"N", 4})},
      {fx::value("a", fx::kFloat, {"N", 1}), fx::value("b", fx::kFloat, {"N", 5}),
       fx::value("m", fx::kInt64, {"N", 4})},
      {fx::i64_tensor("pads", {4}, {0, 1, 0, 1}), fx::i64_tensor("sizes", {2}, {1, 5})});
  std::shared_ptr<Graph> imported = import_onnx(fx::bytes(fx::model(g, 17)), "exported.onnx");
  CHECK(type_of(*imported, "fours").to_string() == "i64[N, 4]");
  CHECK(type_of(*imported, "p").to_string() == "f32[N, 6]");
  CHECK(type_of(*imported, "mask").to_string() == "bool[N, 6]");
  CHECK(type_of(*imported, "b").to_string() == "f32[N, 5]");
  const Node& leaky = imported->node(NodeId{3});
  REQUIRE(leaky.op == OpKind::LeakyRelu);
  CHECK(std::get<double>(leaky.attrs.at("alpha")) == 0.25);
  const Node& fill = imported->node(NodeId{1});
  CHECK(std::get<Tensor>(fill.attrs.at("value")).data<std::int64_t>()[0] == 4);
}

TEST_CASE("PRelu is shaped like x; its slope broadcasts to x one way", "[unit][exporter_ops]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 3, T}));
  add(g, OpKind::PRelu, "per_channel", {x, g.add_input("c", f32({3, 1}))});
  add(g, OpKind::PRelu, "scalar", {x, g.add_input("s", f32({1}))});
  add(g, OpKind::Sum, "sum", {x, g.add_input("row", f32({T})), x});
  add(g, OpKind::Mean, "mean", {x, x});
  add(g, OpKind::IsInf, "inf", {x});
  infer_shapes(g);
  check_dims(g, type_of(g, "per_channel").shape, {N, 3, T});
  check_dims(g, type_of(g, "scalar").shape, {N, 3, T});
  check_dims(g, type_of(g, "sum").shape, {N, 3, T});
  check_dims(g, type_of(g, "mean").shape, {N, 3, T});
  CHECK(type_of(g, "inf").dtype == DType::Bool);
  SECTION("a slope with more dims than x") {
    Graph h;
    add(h, OpKind::PRelu, "p", {h.add_input("x", f32({3})), h.add_input("c", f32({2, 3}))});
    expect_error(h, ErrorKind::Shape, {"p", "more dims than x"});
  }
  SECTION("a slope dim that is neither 1 nor x's") {
    Graph h;
    add(h, OpKind::PRelu, "p", {h.add_input("x", f32({2, 3})), h.add_input("c", f32({4, 1}))});
    expect_error(h, ErrorKind::Shape, {"p", "slope"});
  }
  SECTION("Mean of integers") {
    Graph h;
    ValueId i = h.add_input("i", ValueType{DType::I64, {2}});
    add(h, OpKind::Mean, "m", {i, i});
    expect_error(h, ErrorKind::Model, {"m", "i64"});
  }
}
