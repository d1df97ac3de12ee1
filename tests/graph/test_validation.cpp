// Tests of node validation and graph verification: each malformed graph must
// raise a canary::Error of the right kind naming the node and the problem.
#include <catch2/catch.hpp>

#include "canary/error.h"
#include "canary/tensor.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "tests/graph/graph_test_support.h"

using namespace canary;
using namespace canary::graph;
using namespace canary::test;

namespace {

const Dim N = Dim::symbol("N");
const Dim T = Dim::symbol("T");

ValueType of(DType t, DimVector dims) { return ValueType{t, std::move(dims)}; }

}  // namespace

TEST_CASE("wrong input count names node, op, expected range and actual", "[unit][validation]") {
  Graph g;
  ValueId a = g.add_input("a", f32({2}));
  add(g, OpKind::Add, "add3", {a, a, a});
  expect_error(g, ErrorKind::Model, {"node 'add3' (Add)", "expected 2 inputs, got 3"});
}

TEST_CASE("a required input that is absent is a model error", "[unit][validation]") {
  Graph g;
  ValueId a = g.add_input("a", f32({2}));
  add(g, OpKind::Add, "half", {a, ValueId::none()});
  expect_error(g, ErrorKind::Model, {"node 'half' (Add)", "input 1"});
}

TEST_CASE("wrong output count for a ranged op", "[unit][validation]") {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 4}));
  ValueId s = g.add_input("s", f32({4}));
  g.add_node(OpKind::LayerNormalization, "ln", {x, s}, {"y", "m", "v", "extra"});
  expect_error(g, ErrorKind::Model, {"node 'ln' (LayerNormalization)", "expected 1 to 3 outputs, got 4"});
}

TEST_CASE("unknown attribute", "[unit][validation]") {
  Graph g;
  ValueId a = g.add_input("a", f32({2}));
  add(g, OpKind::Relu, "relu", {a}, {{"alpha", 0.1}});
  expect_error(g, ErrorKind::Model, {"node 'relu' (Relu)", "unknown attribute 'alpha'"});
}

TEST_CASE("wrong attribute type", "[unit][validation]") {
  Graph g;
  ValueId a = g.add_input("a", f32({2, 3}));
  add(g, OpKind::Softmax, "sm", {a}, {{"axis", 1.5}});
  expect_error(g, ErrorKind::Model, {"node 'sm' (Softmax)", "attribute 'axis' has type float, expected int"});
}

TEST_CASE("missing required attribute", "[unit][validation]") {
  Graph g;
  ValueId a = g.add_input("a", f32({2, 3}));
  add(g, OpKind::Concat, "cat", {a, a});
  expect_error(g, ErrorKind::Model, {"node 'cat' (Concat)", "missing required attribute 'axis'"});
}

TEST_CASE("dtype mismatches name the input and both dtypes", "[unit][validation]") {
  Graph g;
  ValueId f = g.add_input("f", f32({2}));
  ValueId i = g.add_input("i", of(DType::I64, {2}));
  ValueId b = g.add_input("b", of(DType::Bool, {2, 2}));
  SECTION("Add of f32 and i64") {
    add(g, OpKind::Add, "mixed", {f, i});
    expect_error(g, ErrorKind::Model, {"node 'mixed' (Add)", "input 1 ('i')", "i64", "f32"});
  }
  SECTION("MatMul of bool") {
    add(g, OpKind::MatMul, "mm", {b, b});
    expect_error(g, ErrorKind::Model, {"node 'mm' (MatMul)", "input 0 ('b')", "bool"});
  }
  SECTION("Where with a non-bool condition") {
    add(g, OpKind::Where, "where", {f, f, f});
    expect_error(g, ErrorKind::Model, {"node 'where' (Where)", "input 0 ('f')", "expected one of {bool}"});
  }
  SECTION("Gather with float indices") {
    add(g, OpKind::Gather, "gather", {f, f});
    expect_error(g, ErrorKind::Model, {"node 'gather' (Gather)", "input 1 ('f')", "i64"});
  }
  SECTION("Exp of an integer") {
    add(g, OpKind::Exp, "exp", {i});
    expect_error(g, ErrorKind::Model, {"node 'exp' (Exp)", "i64"});
  }
  SECTION("Cast to an unknown dtype") {
    add(g, OpKind::Cast, "cast", {f}, {{"to", std::string("f16")}});
    expect_error(g, ErrorKind::Model, {"node 'cast' (Cast)", "'f16'"});
  }
}

TEST_CASE("incompatible broadcast of constant dims is a shape error", "[unit][validation]") {
  Graph g;
  ValueId a = g.add_input("a", f32({N, 3}));
  ValueId b = g.add_input("b", f32({4}));
  add(g, OpKind::Mul, "mul", {a, b});
  expect_error(g, ErrorKind::Shape, {"node 'mul' (Mul)", "cannot broadcast", "3", "4"});
}

TEST_CASE("rank mismatches are shape errors", "[unit][validation]") {
  Graph g;
  ValueId a3 = g.add_input("a3", f32({2, 3, 4}));
  ValueId b = g.add_input("b", f32({4, 5}));
  SECTION("Gemm of a 3-D operand") {
    add(g, OpKind::Gemm, "gemm", {a3, b});
    expect_error(g, ErrorKind::Shape, {"node 'gemm' (Gemm)", "input 0 ('a3') expected rank 2, got rank 3"});
  }
  SECTION("Concat of different ranks") {
    add(g, OpKind::Concat, "cat", {a3, b}, {{"axis", std::int64_t{0}}});
    expect_error(g, ErrorKind::Shape, {"node 'cat' (Concat)", "input 1 ('b') expected rank 3"});
  }
  SECTION("axis out of range") {
    add(g, OpKind::Softmax, "sm", {b}, {{"axis", std::int64_t{-3}}});
    expect_error(g, ErrorKind::Shape, {"node 'sm' (Softmax)", "-3", "rank 2"});
  }
}

TEST_CASE("contradicting dims: MatMul inner dims and Concat non-axis dims", "[unit][validation]") {
  Graph g;
  ValueId a = g.add_input("a", f32({2, 3}));
  ValueId b = g.add_input("b", f32({4, 5}));
  SECTION("MatMul") {
    add(g, OpKind::MatMul, "mm", {a, b});
    expect_error(g, ErrorKind::Shape, {"node 'mm' (MatMul)", "inner dims"});
  }
  SECTION("Concat") {
    add(g, OpKind::Concat, "cat", {a, b}, {{"axis", std::int64_t{0}}});
    expect_error(g, ErrorKind::Shape, {"node 'cat' (Concat)", "dim 1"});
  }
}

TEST_CASE("LSTM rejects an unsupported activation and wrong weight shapes", "[unit][validation][lstm]") {
  Graph g;
  ValueId x = g.add_input("x", f32({T, 2, 8}));
  ValueId w = g.add_input("w", f32({1, 64, 8}));
  ValueId r = g.add_input("r", f32({1, 64, 16}));
  SECTION("activation") {
    g.add_node(OpKind::LSTM, "lstm", {x, w, r}, {"y"},
               {{"hidden_size", std::int64_t{16}}, {"activations", std::string("Relu,Tanh,Tanh")}});
    expect_error(g, ErrorKind::Model, {"node 'lstm' (LSTM)", "unsupported activation 'Relu'"});
  }
  SECTION("hidden size does not match W") {
    g.add_node(OpKind::LSTM, "lstm", {x, w, r}, {"y"}, {{"hidden_size", std::int64_t{8}}});
    expect_error(g, ErrorKind::Shape, {"node 'lstm' (LSTM)", "input 1 ('w')"});
  }
  SECTION("direction") {
    g.add_node(OpKind::LSTM, "lstm", {x, w, r}, {"y"},
               {{"hidden_size", std::int64_t{16}}, {"direction", std::string("sideways")}});
    expect_error(g, ErrorKind::Model, {"node 'lstm' (LSTM)", "'sideways'"});
  }
}

TEST_CASE("Conv rejects 3-D input and a channel mismatch", "[unit][validation][conv]") {
  Graph g;
  SECTION("3-D") {
    ValueId x = g.add_input("x", f32({1, 2, 4, 4, 4}));
    ValueId w = g.add_input("w", f32({3, 2, 1, 1, 1}));
    add(g, OpKind::Conv, "conv3d", {x, w});
    expect_error(g, ErrorKind::Model, {"node 'conv3d' (Conv)", "3-D"});
  }
  SECTION("channels") {
    ValueId x = g.add_input("x", f32({1, 6, T}));
    ValueId w = g.add_input("w", f32({4, 4, 3}));
    add(g, OpKind::Conv, "conv", {x, w}, {{"group", std::int64_t{2}}});
    expect_error(g, ErrorKind::Shape, {"node 'conv' (Conv)", "channels"});
  }
}

TEST_CASE("shape ops: non-static rank, symbolic squeeze, bad reshape, bad Gelu mode", "[unit][validation]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 4}));
  SECTION("Reshape to a shape of unknown length") {
    ValueId s = g.add_input("s", of(DType::I64, {N}));
    add(g, OpKind::Reshape, "rs", {x, s});
    expect_error(g, ErrorKind::Shape, {"node 'rs' (Reshape)", "rank not static"});
  }
  SECTION("Squeeze without axes over a symbolic dim") {
    add(g, OpKind::Squeeze, "sq", {x});
    expect_error(g, ErrorKind::Shape, {"node 'sq' (Squeeze)", "explicit axes"});
  }
  SECTION("Reshape of 12 elements to 5 x -1") {
    ValueId c = g.add_input("c", f32({3, 4}));
    ValueId s = g.add_constant("s", Tensor::from_vector<std::int64_t>({5, -1}, {2}));
    add(g, OpKind::Reshape, "rs", {c, s});
    expect_error(g, ErrorKind::Shape, {"node 'rs' (Reshape)", "cannot reshape"});
  }
  SECTION("Gelu approximate") {
    add(g, OpKind::Gelu, "gelu", {x}, {{"approximate", std::string("erf")}});
    expect_error(g, ErrorKind::Model, {"node 'gelu' (Gelu)", "'erf'"});
  }
}

TEST_CASE("use before definition is a model error naming node and value", "[unit][validation][verify]") {
  Graph g;
  ValueId a = g.add_input("a", f32({2}));
  NodeId first = g.add_node(OpKind::Relu, "first", {a}, {"r1"});
  ValueId r2 = add(g, OpKind::Relu, "second", {g.node(first).outputs[0]});
  g.node(first).inputs[0] = r2;  // a cycle: first reads second's output
  g.add_output(r2);
  expect_error(g, ErrorKind::Model, {"node 'first' (Relu)", "'second'", "before it is defined"});
}

TEST_CASE("a capture must refer to an outer value defined before the node", "[unit][validation][verify]") {
  Graph g;
  ValueId c = g.add_input("c", of(DType::Bool, {}));
  ValueId a = g.add_input("a", f32({2}));
  auto then_g = std::make_shared<Graph>("then", g.shared_symbols());
  auto else_g = std::make_shared<Graph>("else", g.shared_symbols());
  g.add_node(OpKind::If, "if", {c}, {"out"}, {{"then_branch", then_g}, {"else_branch", else_g}});
  ValueId late = add(g, OpKind::Relu, "late", {a});
  then_g->add_output(then_g->add_capture("late_in", f32({2}), late));
  else_g->add_output(else_g->add_capture("a_in", f32({2}), a));
  expect_error(g, ErrorKind::Model, {"node 'if' (If)", "captures 'late'"});
}

TEST_CASE("control flow: Loop body signature and If branch dtypes", "[unit][validation][control]") {
  Graph g;
  ValueId m = g.add_constant("m", Tensor::scalar<std::int64_t>(3));
  ValueId v0 = g.add_input("v0", f32({2}));
  SECTION("Loop body without the condition input") {
    auto body = std::make_shared<Graph>("body", g.shared_symbols());
    body->add_input("i", of(DType::I64, {}));
    ValueId v = body->add_input("v", f32({2}));
    body->add_output(v);
    g.add_node(OpKind::Loop, "loop", {m, ValueId::none(), v0}, {"vf"}, {{"body", body}});
    expect_error(g, ErrorKind::Model, {"node 'loop' (Loop)", "body has 2 inputs, expected 3"});
  }
  SECTION("If branches with different dtypes") {
    ValueId c = g.add_input("c", of(DType::Bool, {}));
    auto then_g = std::make_shared<Graph>("then", g.shared_symbols());
    then_g->add_output(then_g->add_constant("one", Tensor::scalar<float>(1.0f)));
    auto else_g = std::make_shared<Graph>("else", g.shared_symbols());
    else_g->add_output(else_g->add_constant("two", Tensor::scalar<std::int64_t>(2)));
    g.add_node(OpKind::If, "if", {c}, {"out"}, {{"then_branch", then_g}, {"else_branch", else_g}});
    expect_error(g, ErrorKind::Shape, {"node 'if' (If)", "f32[]", "i64[]"});
  }
  SECTION("an error inside a body names the inner node") {
    auto body = std::make_shared<Graph>("body", g.shared_symbols());
    body->add_input("i", of(DType::I64, {}));
    ValueId cond = body->add_input("cond", of(DType::Bool, {}));
    ValueId v = body->add_input("v", f32({2}));
    body->add_output(cond);
    body->add_output(add(*body, OpKind::Add, "inner", {v, cond}));
    g.add_node(OpKind::Loop, "loop", {m, ValueId::none(), v0}, {"vf"}, {{"body", body}});
    expect_error(g, ErrorKind::Model, {"node 'inner' (Add)", "bool"});
  }
}

TEST_CASE("every op has a schema whose arity matches op_kinds.def", "[unit][validation]") {
  const OpSchema& add_schema = op_schema(OpKind::Add);
  CHECK(add_schema.name == "Add");
  CHECK(add_schema.min_inputs == 2);
  CHECK(add_schema.max_inputs == 2);
  const OpSchema& lstm = op_schema(OpKind::LSTM);
  CHECK(lstm.min_inputs == 3);
  CHECK(lstm.max_inputs == 8);
  CHECK(lstm.max_outputs == 3);
  for (int k = 0; k < kOpKindCount; ++k) {
    const OpSchema& s = op_schema(static_cast<OpKind>(k));
    CHECK(s.kind == static_cast<OpKind>(k));
    CHECK(s.infer != nullptr);
  }
  const OpSchema& conv = op_schema(OpKind::Conv);
  bool found_group = false;
  for (const AttrSpec& a : conv.attrs) {
    if (a.name != "group") continue;
    found_group = true;
    CHECK(a.type == AttrType::Int);
    REQUIRE(a.default_value.has_value());
    CHECK(std::get<std::int64_t>(*a.default_value) == 1);
  }
  CHECK(found_group);
}
