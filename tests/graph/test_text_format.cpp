// Round trips of the graph text format: example files, graphs built in code
// with every dtype and attribute type, exact floats, symbols and captures.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "canary/error.h"
#include "graph/op_registry.h"
#include "graph/text_format.h"

using namespace canary;
using namespace canary::graph;

namespace {

// print(parse(text)) must be a fixed point: printing the reparsed graph again gives the same text.
std::string require_fixed_point(const Graph& g) {
  std::string first = print_graph(g);
  std::shared_ptr<Graph> again = parse_graph(first, "<printed>");
  std::string second = print_graph(*again);
  REQUIRE(first == second);
  return first;
}

// The type of a named value of a graph, as text.
std::string type_of(const Graph& g, std::string_view name) {
  std::optional<ValueId> v = g.find_value(name);
  REQUIRE(v);
  return g.value(*v).type.to_string();
}

ValueType f32_type(DimVector dims) { return ValueType{DType::F32, std::move(dims)}; }

// The bits of a float, to compare -0.0 and nan exactly.
std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

}  // namespace

TEST_CASE("text format: example files round trip and infer the expected types", "[unit][text_format]") {
  std::string dir = CANARY_TEST_DATA_DIR;
  std::shared_ptr<Graph> mlp = load_graph_file(dir + "/mlp.cnr");
  require_fixed_point(*mlp);
  CHECK(type_of(*mlp, "h1") == "f32[N, 3]");
  CHECK(type_of(*mlp, "probs") == "f32[N, 2]");
  CHECK(mlp->symbols().constraints("N").max == 4096);
  CHECK(mlp->node(NodeId{0}).name == "fc1");
  CHECK(mlp->node(NodeId{1}).name.empty());

  std::shared_ptr<Graph> conv = load_graph_file(dir + "/conv1d.cnr");
  require_fixed_point(*conv);
  // (T + 1 + 1 - 3) // 2 + 1 for kernel 3, pads 1 and 1, stride 2.
  CHECK(conv->symbols().equal(conv->value(*conv->find_value("features")).type.shape[2],
                              floor_div(Dim::symbol("T") - 1, 2) + 1));
  CHECK(type_of(*conv, "pooled") == "f32[N, 3]");
  CHECK(conv->symbols().constraints("T").divisor == 4);

  std::shared_ptr<Graph> rnn = load_graph_file(dir + "/rnn_loop.cnr");
  require_fixed_point(*rnn);
  CHECK(type_of(*rnn, "hs") == "f32[T, N, 2]");
  const Graph& body = *std::get<std::shared_ptr<Graph>>(rnn->node(NodeId{1}).attrs.at("body"));
  REQUIRE(body.captures().size() == 3);  // xs, wx, wh in order of first use
  CHECK(body.value(body.captures()[0].local).name == "xs");
  CHECK(body.captures()[0].outer == *rnn->find_value("xs"));
  CHECK(body.value(body.captures()[2].local).name == "wh");

  std::shared_ptr<Graph> branch = load_graph_file(dir + "/if_select.cnr");
  require_fixed_point(*branch);
  CHECK(type_of(*branch, "y") == "f32[N, 4]");
  const Graph& then_g = *std::get<std::shared_ptr<Graph>>(branch->node(NodeId{0}).attrs.at("then_branch"));
  CHECK(then_g.name == "twice");
  CHECK(then_g.captures().size() == 2);
}

TEST_CASE("text format: constants of every dtype, scalars and empty tensors", "[unit][text_format]") {
  Graph g;
  Dim n = g.symbols().declare("N");
  ValueId x = g.add_input("x", f32_type({n, 3}));
  g.add_constant("c_f32", Tensor::from_vector<float>({0.1f, 1e-45f, -0.0f, std::numeric_limits<float>::infinity(),
                                                      std::numeric_limits<float>::quiet_NaN(), 3.4028235e38f},
                                                     {2, 3}));
  g.add_constant("c_f64", Tensor::from_vector<double>({0.1, -1e-300, 4.9406564584124654e-324}, {3}));
  g.add_constant("c_i64", Tensor::from_vector<std::int64_t>(
                              {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()}, {2}));
  g.add_constant("c_i32", Tensor::from_vector<std::int32_t>({-2147483647 - 1, 7}, {2, 1}));
  g.add_constant("c_bool", Tensor::from_vector<bool>({true, false, true}, {3}));
  g.add_constant("scalar", Tensor::scalar<float>(2.5f));
  g.add_constant("empty", Tensor::empty(DType::F32, {0, 3}));
  ValueId y = g.node(g.add_node(OpKind::Relu, "", {x}, {"y"})).outputs[0];
  g.add_output(y);
  infer_shapes(g);
  std::string text = require_fixed_point(g);
  CHECK(text.find("const c_f32: f32[2, 3] = [0.1, 1e-45, -0, inf, nan, 3.4028235e+38]") != std::string::npos);
  CHECK(text.find("const scalar: f32[] = [2.5]") != std::string::npos);
  CHECK(text.find("const empty: f32[0, 3] = []") != std::string::npos);

  std::shared_ptr<Graph> back = parse_graph(text);
  const Tensor& f = *back->value(*back->find_value("c_f32")).constant;
  CHECK(bits_of(f.data<float>()[0]) == bits_of(0.1f));
  CHECK(bits_of(f.data<float>()[1]) == 1u);        // the smallest subnormal
  CHECK(bits_of(f.data<float>()[2]) == 0x80000000u);  // -0.0 keeps its sign
  CHECK(std::isnan(f.data<float>()[4]));
  const Tensor& d = *back->value(*back->find_value("c_f64")).constant;
  CHECK(d.data<double>()[0] == 0.1);
  CHECK(d.data<double>()[2] == 4.9406564584124654e-324);
  const Tensor& i = *back->value(*back->find_value("c_i64")).constant;
  CHECK(i.data<std::int64_t>()[0] == std::numeric_limits<std::int64_t>::min());
  const Tensor& b = *back->value(*back->find_value("c_bool")).constant;
  CHECK(b.dtype() == DType::Bool);
  CHECK(b.data<bool>()[1] == false);
  CHECK(back->value(*back->find_value("scalar")).constant->rank() == 0);
  CHECK(back->value(*back->find_value("empty")).constant->shape() == Shape{0, 3});
}

TEST_CASE("text format: attributes of every type round trip without inference", "[unit][text_format]") {
  Graph g;
  ValueId x = g.add_input("x", f32_type({2}));
  auto sub = std::make_shared<Graph>("inner", g.shared_symbols());
  ValueId sx = sub->add_input("v", f32_type({2}));
  sub->add_output(sub->node(sub->add_node(OpKind::Neg, "", {sx}, {"w"})).outputs[0]);
  Attributes attrs;
  attrs["an_int"] = std::int64_t{-9223372036854775807LL - 1};
  attrs["a_float"] = 1e-5;
  attrs["whole_float"] = 2.0;
  attrs["neg_zero"] = -0.0;
  attrs["a_string"] = std::string("tab\there \"quoted\" back\\slash\nnew line \x01 caf\xC3\xA9");
  attrs["ints"] = std::vector<std::int64_t>{1, -2, 3};
  attrs["no_ints"] = std::vector<std::int64_t>{};
  attrs["floats"] = std::vector<double>{0.5, 1.0, -std::numeric_limits<double>::infinity()};
  attrs["no_floats"] = std::vector<double>{};
  attrs["tensor"] = Tensor::from_vector<std::int32_t>({1, 2, 3, 4}, {2, 2});
  attrs["graph"] = sub;
  NodeId node = g.add_node(OpKind::Identity, "odd \"name\"", {x}, {"y"}, attrs);
  g.add_output(g.node(node).outputs[0]);
  g.value(g.node(node).outputs[0]).type = f32_type({2});

  std::string text = print_graph(g);
  std::shared_ptr<Graph> back = parse_graph_uninferred(text);
  CHECK(print_graph(*back) == text);
  const Node& n = back->node(NodeId{0});
  CHECK(n.name == "odd \"name\"");
  CHECK(std::get<std::int64_t>(n.attrs.at("an_int")) == std::numeric_limits<std::int64_t>::min());
  CHECK(std::get<double>(n.attrs.at("a_float")) == 1e-5);
  CHECK(std::get<double>(n.attrs.at("whole_float")) == 2.0);
  CHECK(std::signbit(std::get<double>(n.attrs.at("neg_zero"))));
  CHECK(std::get<std::string>(n.attrs.at("a_string")) == std::get<std::string>(attrs["a_string"]));
  CHECK(std::get<std::vector<std::int64_t>>(n.attrs.at("ints")) == std::vector<std::int64_t>{1, -2, 3});
  CHECK(std::get<std::vector<std::int64_t>>(n.attrs.at("no_ints")).empty());
  CHECK(std::get<std::vector<double>>(n.attrs.at("floats"))[1] == 1.0);
  CHECK(std::get<std::vector<double>>(n.attrs.at("no_floats")).empty());
  const Tensor& t = std::get<Tensor>(n.attrs.at("tensor"));
  CHECK(t.dtype() == DType::I32);
  CHECK(t.data<std::int32_t>()[3] == 4);
  const Graph& inner = *std::get<std::shared_ptr<Graph>>(n.attrs.at("graph"));
  CHECK(inner.name == "inner");
  CHECK(inner.nodes().size() == 1);
  CHECK(&inner.symbols() == &back->symbols());
}

TEST_CASE("text format: symbols block restores ranges, divisors, equalities and values", "[unit][text_format]") {
  Graph g;
  SymbolTable& s = g.symbols();
  Dim n = s.declare("N"), t = s.declare("T"), m = s.declare("M");
  s.declare("K");
  s.declare("unused");
  s.declare("P");
  s.set_range("N", 1, 4096);
  s.set_divisor("T", 8);
  s.assert_equal(m, n, "test");
  s.assert_equal(Dim::symbol("P"), Dim::symbol("K"), "test");
  s.assert_equal(Dim::symbol("K"), Dim(3), "test");
  ValueId x = g.add_input("x", f32_type({n, t, m}));
  g.add_output(g.node(g.add_node(OpKind::Relu, "", {x}, {"y"})).outputs[0]);
  infer_shapes(g);
  std::string text = require_fixed_point(g);
  CHECK(text.find("symbols {\n  N in [1, 4096]\n  T % 8\n  M == N\n  K == 3\n  unused\n  P == K\n}") != std::string::npos);

  std::shared_ptr<Graph> back = parse_graph(text);
  const SymbolTable& r = back->symbols();
  CHECK(r.names() == std::vector<std::string>{"N", "T", "M", "K", "unused", "P"});
  CHECK(r.representative("M") == "N");
  CHECK(r.constraints("M").max == 4096);
  CHECK(r.constraints("T").divisor == 8);
  CHECK(r.fixed_value("K") == 3);
  CHECK(r.representative("P") == "K");  // joined with K, not fixed on its own
}

TEST_CASE("text format: captures in Loop bodies, explicit and renamed", "[unit][text_format]") {
  const char* text = R"(canary v1
graph main(x: f32[4], n: i64[]) -> (last, all) {
  const bias: f32[4] = [1, 2, 3, 4]
  last, all = Loop(n, _, x) {
    body = graph step(i: i64[], c: bool[], h: f32[4]) -> (c, h2, h2) captures (b = bias) {
      h2 = Add(h, b)
    }
  }
}
)";
  std::shared_ptr<Graph> g = parse_graph(text);
  const Graph& body = *std::get<std::shared_ptr<Graph>>(g->node(NodeId{0}).attrs.at("body"));
  REQUIRE(body.captures().size() == 1);
  CHECK(body.value(body.captures()[0].local).name == "b");
  CHECK(g->value(body.captures()[0].outer).name == "bias");
  CHECK(!g->node(NodeId{0}).inputs[1].valid());
  // The scan output's length is unknown (n is not a constant): a fresh symbol.
  const ValueType& all = g->value(*g->find_value("all")).type;
  REQUIRE(all.rank() == 2);
  CHECK(all.shape[0].is_symbol());
  std::string printed = require_fixed_point(*g);
  CHECK(printed.find("captures (b = bias)") != std::string::npos);
  // Reparsing keeps the fresh symbol's name and declares nothing new.
  std::shared_ptr<Graph> again = parse_graph(printed);
  CHECK(again->symbols().names() == g->symbols().names());
  CHECK(again->value(*again->find_value("all")).type.shape[0] == all.shape[0]);
}

TEST_CASE("text format: names that need quoting and absent inputs and outputs", "[unit][text_format]") {
  const char* text = R"(canary v1
graph `my model`(`x.0/in`: f32[2, 3], `_`: f32[3]) -> (`const`) {
  `const`: f32[2, 3], _, _ = LayerNormalization(`x.0/in`, `_`, _) {axis = -1, epsilon = 1e-05} "ln"
}
)";
  std::shared_ptr<Graph> g = parse_graph(text);
  CHECK(g->name == "my model");
  const Node& ln = g->node(NodeId{0});
  CHECK(ln.inputs.size() == 3);
  CHECK(!ln.inputs[2].valid());
  CHECK(ln.outputs.size() == 3);
  CHECK(!ln.outputs[1].valid());
  CHECK(std::get<double>(ln.attrs.at("epsilon")) == 1e-05);
  std::string printed = require_fixed_point(*g);
  CHECK(printed.find("`const`: f32[2, 3], _, _ = LayerNormalization(x.0/in") == std::string::npos);
  CHECK(printed.find("(`x.0/in`, `_`, _)") != std::string::npos);
}

TEST_CASE("text format: a wrong written type is reported with both types", "[unit][text_format]") {
  const char* text = "canary v1\ngraph main(x: f32[N, 3]) -> (y) {\n  y: f32[N, 4] = Relu(x)\n}\n";
  try {
    parse_graph(text, "t.cnr");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Model);
    std::string msg = e.detail();
    CHECK(msg.rfind("t.cnr:3:3: ", 0) == 0);
    CHECK(msg.find("'y'") != std::string::npos);
    CHECK(msg.find("f32[N, 4]") != std::string::npos);
    CHECK(msg.find("f32[N, 3]") != std::string::npos);
  }
}

TEST_CASE("text format: fresh symbols from inference keep their printed names", "[unit][text_format]") {
  const char* text = R"(canary v1
graph main(x: f32[N, 4], flag: bool[], n: i64[], shp: i64[2]) -> (y, r, all) {
  const starts: i64[1] = [1]
  const ends: i64[1] = [3]
  y = If(flag) {
    else_branch = graph e() -> (z) { z = Slice(x, starts, ends) },
    then_branch = graph t() -> (z) { z = Identity(x) }
  }
  r = Reshape(x, shp)
  last, all = Loop(n, _, x) {
    body = graph step(i: i64[], c: bool[], h: f32[N, 4]) -> (c, h2, h2) { h2 = Relu(h) }
  }
}
)";
  std::shared_ptr<Graph> g = parse_graph(text);
  // Unknown dims: the If's merged rows, Reshape's two dims, the Loop's length.
  const ValueType& r = g->value(*g->find_value("r")).type;
  REQUIRE(r.rank() == 2);
  CHECK(r.shape[0].is_symbol());
  CHECK(r.shape[0] != r.shape[1]);
  std::string printed = require_fixed_point(*g);
  std::shared_ptr<Graph> again = parse_graph(printed);
  CHECK(again->symbols().names() == g->symbols().names());
  CHECK(again->value(*again->find_value("r")).type.shape == r.shape);
  CHECK(again->value(*again->find_value("all")).type.shape == g->value(*g->find_value("all")).type.shape);
}
