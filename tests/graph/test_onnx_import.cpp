// ONNX import into the graph IR: value types and symbols, attribute
// conversions, initializers of every dtype, node order, subgraphs.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>

#include "graph/onnx_import.h"
#include "tests/graph/onnx_fixtures.h"
#include "tests/graph/onnx_import_checks.h"

using namespace onnx_fixtures;
using canary::DType;
using canary::graph::Graph;
using canary::graph::import_onnx;
using canary::test::type_text;

namespace {

// The graph attribute of a node's attribute.
const Graph& subgraph_of(const Graph& g, std::size_t node, const std::string& attr) {
  return *std::get<std::shared_ptr<Graph>>(g.nodes().at(node).attrs.at(attr));
}

// A model of one node reading x and writing y.
onnx::ModelProto one_node_model(const onnx::NodeProto& n, const onnx::ValueInfoProto& x, int out_type) {
  return model(graph("g", {n}, {x}, {unshaped("y", out_type)}));
}

}  // namespace

TEST_CASE("onnx: MLP imports with a sanitised dim_param symbol", "[unit][onnx]") {
  auto g = import_onnx(bytes(mlp_model()), "mlp.onnx");
  CHECK(type_text(*g, "x") == "f32[batch_size, 2]");
  CHECK(type_text(*g, "y") == "f32[batch_size, 3]");
  CHECK(g->symbols().contains("batch_size"));
  REQUIRE(g->nodes().size() == 3);
  CHECK(g->nodes()[0].name == "matmul");
  CHECK(g->constants().size() == 2);
  CHECK(g->inputs().size() == 1);
}

TEST_CASE("onnx: Shape-Gather-Unsqueeze-Concat-Reshape gives an exact symbolic type", "[unit][onnx]") {
  auto g = import_onnx(bytes(shape_chain_model()), "chain.onnx");
  const auto& y = g->value(g->outputs().at(0)).type;
  REQUIRE(y.rank() == 2);
  CHECK(y.shape[0].is_symbol());
  CHECK(y.shape[0].symbol_name() == "N");
  CHECK(y.shape[1].is_constant());
  CHECK(y.shape[1].value() == 24);
  CHECK(y.to_string() == "f32[N, 24]");
}

TEST_CASE("onnx: Conv1d keeps the dynamic length T", "[unit][onnx]") {
  auto g = import_onnx(bytes(conv1d_model()), "conv.onnx");
  CHECK(type_text(*g, "y") == "f32[1, 1, T]");
  const auto& attrs = g->nodes().at(0).attrs;
  CHECK(std::get<std::vector<std::int64_t>>(attrs.at("pads")) == std::vector<std::int64_t>{1, 1});
}

TEST_CASE("onnx: nodes out of topological order are sorted", "[unit][onnx]") {
  onnx::ModelProto m = mlp_model();
  auto* nodes = m.mutable_graph()->mutable_node();
  std::reverse(nodes->begin(), nodes->end());
  auto g = import_onnx(bytes(m), "reversed.onnx");
  REQUIRE(g->nodes().size() == 3);
  CHECK(g->nodes()[0].name == "matmul");
  CHECK(g->nodes()[1].name == "add");
  CHECK(g->nodes()[2].name == "relu");
}

TEST_CASE("onnx: Cast's integer `to` becomes a dtype name", "[unit][onnx]") {
  auto g = import_onnx(bytes(one_node_model(node("Cast", {"x"}, {"y"}, {attr_int("to", kInt64)}, "cast"),
                                            value("x", kFloat, {3}), kInt64)),
                       "cast.onnx");
  CHECK(std::get<std::string>(g->nodes().at(0).attrs.at("to")) == "i64");
  CHECK(type_text(*g, "y") == "i64[3]");
}

TEST_CASE("onnx: LSTM activations become one comma-separated string", "[unit][onnx]") {
  auto g = import_onnx(bytes(lstm_model()), "lstm.onnx");
  CHECK(std::get<std::string>(g->nodes().at(0).attrs.at("activations")) == "Sigmoid,Tanh,Tanh");
  CHECK(type_text(*g, "h") == "f32[1, 1, 1]");
  CHECK(g->nodes().at(0).outputs.at(0) == canary::graph::ValueId::none());
}

TEST_CASE("onnx: a Loop body captures the outer x and types its unshaped inputs", "[unit][onnx]") {
  auto g = import_onnx(bytes(loop_model()), "loop.onnx");
  const Graph& body = subgraph_of(*g, 0, "body");
  REQUIRE(body.captures().size() == 1);
  CHECK(body.value(body.captures()[0].local).name == "x");
  CHECK(g->value(body.captures()[0].outer).name == "x");
  CHECK(type_text(body, "iter") == "i64[]");
  CHECK(type_text(body, "cond") == "bool[]");
  CHECK(type_text(body, "s") == "f32[2]");
  CHECK(type_text(*g, "s_final") == "f32[2]");
  CHECK(type_text(*g, "s_all") == "f32[3, 2]");
}

TEST_CASE("onnx: Scan body inputs take the state and one slice of the scan input", "[unit][onnx]") {
  auto g = import_onnx(bytes(scan_model()), "scan.onnx");
  const Graph& body = subgraph_of(*g, 0, "body");
  CHECK(type_text(body, "s") == "f32[2]");
  CHECK(type_text(body, "row") == "f32[2]");
  CHECK(type_text(*g, "partials") == "f32[T, 2]");
}

TEST_CASE("onnx: If branches capture the outer x", "[unit][onnx]") {
  auto g = import_onnx(bytes(if_model()), "if.onnx");
  CHECK(subgraph_of(*g, 0, "then_branch").captures().size() == 1);
  CHECK(subgraph_of(*g, 0, "else_branch").captures().size() == 1);
  CHECK(type_text(*g, "y") == "f32[3]");
}

TEST_CASE("onnx: subgraphs nested 64 deep are accepted", "[unit][onnx]") {
  auto g = import_onnx(bytes(nested_if_model(64)), "deep.onnx");
  CHECK(type_text(*g, "y0") == "f32[2]");
}

TEST_CASE("onnx: initializers in raw_data and typed fields of every dtype", "[unit][onnx]") {
  float f32[] = {1.5f, -2};
  double f64[] = {0.25, 1e300};
  std::int64_t i64[] = {-5, std::int64_t{1} << 40};
  std::int32_t i32[] = {7, -8};
  bool b[] = {true, false};
  std::vector<onnx::TensorProto> inits = {raw_tensor("rf32", kFloat, {2}, f32, sizeof f32),
                                          f32_tensor("tf32", {2}, {1.5f, -2}),
                                          raw_tensor("rf64", kDouble, {2}, f64, sizeof f64),
                                          f64_tensor("tf64", {2}, {0.25, 1e300}),
                                          raw_tensor("ri64", kInt64, {2}, i64, sizeof i64),
                                          i64_tensor("ti64", {2}, {-5, std::int64_t{1} << 40}),
                                          raw_tensor("ri32", kInt32, {2}, i32, sizeof i32),
                                          i32_tensor("ti32", {2}, {7, -8}),
                                          raw_tensor("rbool", kBool, {2}, b, sizeof b),
                                          bool_tensor("tbool", {2}, {1, 0}),
                                          f32_tensor("empty", {0, 3}, {})};
  std::vector<onnx::NodeProto> nodes;
  std::vector<onnx::ValueInfoProto> outputs;
  for (const auto& t : inits) {
    nodes.push_back(node("Identity", {t.name()}, {"out_" + t.name()}));
    outputs.push_back(unshaped("out_" + t.name(), t.data_type()));
  }
  auto g = import_onnx(bytes(model(graph("inits", nodes, {}, outputs, inits))), "inits.onnx");
  auto constant = [&](const std::string& name) -> const canary::Tensor& {
    return *g->value(*g->find_value(name)).constant;
  };
  for (const char* prefix : {"r", "t"}) {
    std::string p = prefix;
    CHECK(constant(p + "f32").data<float>()[0] == 1.5f);
    CHECK(constant(p + "f32").data<float>()[1] == -2.0f);
    CHECK(constant(p + "f64").data<double>()[1] == 1e300);
    CHECK(constant(p + "i64").data<std::int64_t>()[0] == -5);
    CHECK(constant(p + "i64").data<std::int64_t>()[1] == (std::int64_t{1} << 40));
    CHECK(constant(p + "i32").data<std::int32_t>()[1] == -8);
    CHECK(constant(p + "bool").data<bool>()[0] == true);
    CHECK(constant(p + "bool").data<bool>()[1] == false);
  }
  CHECK(constant("empty").shape() == canary::Shape{0, 3});
  CHECK(type_text(*g, "out_ti64") == "i64[2]");
}

TEST_CASE("onnx: an initializer also listed as an input is a constant", "[unit][onnx]") {
  onnx::ModelProto m = mlp_model();
  *m.mutable_graph()->add_input() = value("W", kFloat, {2, 3});
  auto g = import_onnx(bytes(m), "override.onnx");
  CHECK(g->inputs().size() == 1);
  CHECK(g->value(*g->find_value("W")).constant.has_value());
}

TEST_CASE("onnx: a Constant node becomes a graph constant", "[unit][onnx]") {
  onnx::AttributeProto v;
  v.set_name("value");
  v.set_type(onnx::AttributeProto::TENSOR);
  *v.mutable_t() = f32_tensor("", {2}, {3, 4});
  auto m = model(graph("g", {node("Constant", {}, {"k"}, {v}), node("Add", {"x", "k"}, {"y"})},
                       {value("x", kFloat, {2})}, {unshaped("y", kFloat)}));
  auto g = import_onnx(bytes(m), "const.onnx");
  REQUIRE(g->nodes().size() == 1);
  CHECK(g->value(*g->find_value("k")).constant->data<float>()[1] == 4.0f);
}

TEST_CASE("onnx: unnamed dims become fresh symbols", "[unit][onnx]") {
  auto g =
      import_onnx(bytes(one_node_model(node("Relu", {"x"}, {"y"}), value("x", kFloat, {std::string("?"), 3}), kFloat)),
                  "fresh.onnx");
  const auto& x = g->value(*g->find_value("x")).type;
  CHECK(x.shape[0].is_symbol());
  CHECK(x.shape[1].value() == 3);
}

TEST_CASE("onnx: ops the standard defines as functions import as their bodies", "[unit][onnx]") {
  // LessOrEqual (opset 12): Or(Less, Equal). Two nodes of the same name:
  // their inner values stay apart.
  const onnx::GraphProto le = graph(
      "g", {node("LessOrEqual", {"a", "b"}, {"y1"}, {}, "cmp"), node("LessOrEqual", {"b", "a"}, {"y2"}, {}, "cmp")},
      {value("a", kFloat, {"N", 4}), value("b", kFloat, {"N", 4})}, {unshaped("y1", kBool), unshaped("y2", kBool)});
  auto g = import_onnx(bytes(model(le)), "lessorequal.onnx");
  REQUIRE(g->nodes().size() == 6);
  int less = 0, equal = 0, ors = 0;
  for (const auto& n : g->nodes()) {
    less += n.op == canary::graph::OpKind::Less;
    equal += n.op == canary::graph::OpKind::Equal;
    ors += n.op == canary::graph::OpKind::Or;
  }
  CHECK((less == 2 && equal == 2 && ors == 2));
  CHECK(g->nodes()[0].outputs[0] != g->nodes()[3].outputs[0]);
  CHECK(type_text(*g, "y1") == "bool[N, 4]");
  CHECK(type_text(*g, "y2") == "bool[N, 4]");

  // GreaterOrEqual: Or(Greater, Equal), broadcasting as the op does.
  const onnx::GraphProto ge =
      graph("g", {node("GreaterOrEqual", {"a", "b"}, {"y"})}, {value("a", kFloat, {3, 1}), value("b", kFloat, {4})},
            {unshaped("y", kBool)});
  auto g2 = import_onnx(bytes(model(ge)), "ge.onnx");
  CHECK(type_text(*g2, "y") == "bool[3, 4]");

  // An op with neither a kernel nor a function body is still named as unknown.
  const onnx::GraphProto det = graph("g", {node("Det", {"x"}, {"y"}, {}, "d")}, {value("x", kFloat, {2, 2})},
                                     {unshaped("y", kFloat)});
  CHECK_THROWS_WITH(import_onnx(bytes(model(det)), "det.onnx"), Catch::Contains("node 'd' (Det): unknown op"));
}

TEST_CASE("onnx: a function body built for its input type knows types computed before it", "[unit][onnx]") {
  // NegativeLogLikelihoodLoss's body is built for its input's element type,
  // and SoftmaxCrossEntropyLoss's body feeds it a computed log-probability.
  // The scores are computed too (Relu), f64 so that a body built for another
  // type would not type-check, and the loss also runs in If branches that
  // capture them.
  const auto sce = [](const std::string& reduction, const std::string& out) {
    const onnx::AttributeProto reduce = attr_string("reduction", reduction);
    return node("SoftmaxCrossEntropyLoss", {"r", "labels"}, {out}, {reduce}, "sce_" + out);
  };
  const onnx::GraphProto then_g = graph("then", {sce("sum", "t")}, {}, {unshaped("t", kDouble)});
  const onnx::GraphProto else_g = graph("else", {sce("mean", "e")}, {}, {unshaped("e", kDouble)});
  const onnx::GraphProto g =
      graph("g",
            {node("Relu", {"x"}, {"r"}, {}, "relu"), sce("none", "y"),
             node("If", {"c"}, {"z"}, {attr_graph("then_branch", then_g), attr_graph("else_branch", else_g)}, "if")},
            {value("x", kDouble, {"N", 5}), value("labels", kInt64, {"N"}), value("c", kBool, {})},
            {unshaped("y", kDouble), unshaped("z", kDouble)});
  auto imported = import_onnx(bytes(model(g)), "sce.onnx");
  CHECK(type_text(*imported, "y") == "f64[N]");
  CHECK(type_text(*imported, "z") == "f64[]");
  // The inner loss imports as its body too: a GatherElements picks each
  // sample's log-probability, in the main graph and in each branch.
  const auto gathers = [](const Graph& graph) {
    return std::count_if(graph.nodes().begin(), graph.nodes().end(),
                         [](const auto& n) { return n.op == canary::graph::OpKind::GatherElements; });
  };
  CHECK(gathers(*imported) == 1);
  const std::size_t if_node = imported->nodes().size() - 1;
  CHECK(gathers(subgraph_of(*imported, if_node, "then_branch")) == 1);
  CHECK(gathers(subgraph_of(*imported, if_node, "else_branch")) == 1);
}

TEST_CASE("onnx: an opset-11 model is upgraded to 13 on load, attributes becoming inputs", "[unit][onnx]") {
  // Split's sizes, Squeeze's and Unsqueeze's axes and ReduceSum's axes are
  // attributes in opset 11 and inputs in 13.
  const onnx::GraphProto g11 =
      graph("g",
            {node("Split", {"x"}, {"a", "b"}, {attr_int("axis", 1), attr_ints("split", {1, 3})}, "split"),
             node("Squeeze", {"a"}, {"sa"}, {attr_ints("axes", {1})}, "squeeze"),
             node("Unsqueeze", {"sa"}, {"y"}, {attr_ints("axes", {0})}, "unsqueeze"),
             node("ReduceSum", {"b"}, {"z"}, {attr_ints("axes", {1}), attr_int("keepdims", 0)}, "sum")},
            {value("x", kFloat, {"N", 4})}, {unshaped("y", kFloat), unshaped("z", kFloat)});
  auto g = import_onnx(bytes(model(g11, 11)), "old.onnx");
  CHECK(type_text(*g, "y") == "f32[1, N]");
  CHECK(type_text(*g, "z") == "f32[N]");
  for (const auto& n : g->nodes())
    if (n.op == canary::graph::OpKind::Split) CHECK(n.inputs.size() == 2);  // the sizes as an input
}
