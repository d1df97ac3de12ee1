// Tests of symbolic shape inference: every op's output types, computed by
// hand, with symbolic dims, broadcasting, folding of shape arithmetic and
// control-flow bodies.
#include <catch2/catch.hpp>

#include <limits>

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
const Dim M = Dim::symbol("M");
const Dim T = Dim::symbol("T");
const Dim B = Dim::symbol("B");

ValueType i64(DimVector dims) { return ValueType{DType::I64, std::move(dims)}; }

// A scalar i64 constant.
ValueId scalar(Graph& g, const std::string& name, std::int64_t v) {
  return g.add_constant(name, Tensor::scalar<std::int64_t>(v));
}

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

}  // namespace

TEST_CASE("broadcasting: size-1, equal, distinct symbols, constants and empty dims", "[unit][shape_inference]") {
  Graph g;
  ValueId a = g.add_input("a", f32({N, 1, 3}));
  ValueId b = g.add_input("b", f32({M, 1}));
  ValueId c = g.add_input("c", f32({N}));
  ValueId d = g.add_input("d", f32({M}));
  ValueId e = g.add_input("e", f32({0, 3}));
  ValueId f = g.add_input("f", f32({1, 3}));
  ValueId s = g.add_input("s", f32({}));
  ValueId k = g.add_input("k", f32({4}));
  add(g, OpKind::Add, "ab", {a, b});
  add(g, OpKind::Sub, "cd", {c, d});
  add(g, OpKind::Mul, "ef", {e, f});
  add(g, OpKind::Div, "sc", {s, c});
  add(g, OpKind::Add, "kc", {c, k});
  infer_shapes(g);
  check_dims(type_of(g, "ab").shape, {N, M, 3});
  check_dims(type_of(g, "cd").shape, {max(N, M)});
  check_dims(type_of(g, "ef").shape, {0, 3});
  check_dims(type_of(g, "sc").shape, {N});
  check_dims(type_of(g, "kc").shape, {4});
  CHECK(type_of(g, "ab").dtype == DType::F32);
  // Add does not assert equality of N and M.
  CHECK_FALSE(g.symbols().equal(N, M));
}

TEST_CASE("elementwise dtypes: comparisons give bool, Where, Max/Min, unary, Clip, Pow", "[unit][shape_inference]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 1}));
  ValueId y = g.add_input("y", f32({4}));
  ValueId z = g.add_input("z", f32({1, 1}));
  ValueId cond = g.add_input("cond", ValueType{DType::Bool, {T, 1, 1}});
  ValueId lo = g.add_constant("lo", Tensor::scalar<float>(0.0f));
  ValueId n = g.add_input("n", i64({N}));
  add(g, OpKind::Less, "lt", {x, y});
  add(g, OpKind::Equal, "eq", {cond, cond});
  add(g, OpKind::Where, "w", {cond, x, y});
  add(g, OpKind::Max, "mx", {x, y, z});
  add(g, OpKind::Min, "mn", {x});
  add(g, OpKind::Clip, "cl", {x, lo});
  add(g, OpKind::Pow, "pw", {x, n});
  add(g, OpKind::Gelu, "ge", {x}, {{"approximate", std::string("tanh")}});
  add(g, OpKind::Neg, "ng", {n});
  for (OpKind op : {OpKind::Abs, OpKind::Exp, OpKind::Log, OpKind::Sqrt, OpKind::Tanh, OpKind::Sigmoid,
                    OpKind::Relu, OpKind::Erf}) {
    add(g, op, "u" + std::to_string(static_cast<int>(op)), {x});
  }
  infer_shapes(g);
  CHECK(type_of(g, "lt").dtype == DType::Bool);
  check_dims(type_of(g, "lt").shape, {N, 4});
  CHECK(type_of(g, "eq").dtype == DType::Bool);
  check_dims(type_of(g, "w").shape, {T, N, 4});
  CHECK(type_of(g, "w").dtype == DType::F32);
  check_dims(type_of(g, "mx").shape, {N, 4});
  check_dims(type_of(g, "mn").shape, {N, 1});
  check_dims(type_of(g, "cl").shape, {N, 1});
  // Pow [N, 1] with [N]: the trailing dims 1 and N broadcast to N.
  check_dims(type_of(g, "pw").shape, {N, N});
  check_dims(type_of(g, "ge").shape, {N, 1});
  CHECK(type_of(g, "ng").dtype == DType::I64);
  CHECK(type_of(g, "u" + std::to_string(static_cast<int>(OpKind::Erf))).to_string() == "f32[N, 1]");
}

TEST_CASE("MatMul records the inner-dim equality and broadcasts batch dims", "[unit][shape_inference]") {
  Graph g;
  Dim k1 = Dim::symbol("K1"), k2 = Dim::symbol("K2");
  ValueId a = g.add_input("a", f32({B, T, k1}));
  ValueId b = g.add_input("b", f32({k2, N}));
  ValueId v = g.add_input("v", f32({k1}));
  ValueId m = g.add_input("m", f32({M, k2}));
  add(g, OpKind::MatMul, "ab", {a, b});
  add(g, OpKind::MatMul, "vb", {v, b});
  add(g, OpKind::MatMul, "mv", {m, v});
  CHECK_FALSE(g.symbols().equal(k1, k2));
  infer_shapes(g);
  CHECK(g.symbols().equal(k1, k2));
  check_dims(type_of(g, "ab").shape, {B, T, N});
  check_dims(type_of(g, "vb").shape, {N});
  check_dims(type_of(g, "mv").shape, {M});
}

TEST_CASE("Gemm with transposes and a broadcast bias", "[unit][shape_inference]") {
  Graph g;
  ValueId a = g.add_input("a", f32({16, M}));
  ValueId b = g.add_input("b", f32({N, 16}));
  ValueId c = g.add_input("c", f32({N}));
  add(g, OpKind::Gemm, "gemm", {a, b, c}, {{"transA", std::int64_t{1}}, {"transB", std::int64_t{1}}});
  infer_shapes(g);
  check_dims(type_of(g, "gemm").shape, {M, N});
}

TEST_CASE("Conv 1-D output length with symbolic T, k=3, pad 1, stride 2", "[unit][shape_inference][conv]") {
  Graph g;
  ValueId x = g.add_input("x", f32({B, 4, T}));
  ValueId w = g.add_input("w", f32({8, 4, 3}));
  ValueId bias = g.add_input("bias", f32({8}));
  add(g, OpKind::Conv, "conv", {x, w, bias},
      {{"pads", std::vector<std::int64_t>{1, 1}}, {"strides", std::vector<std::int64_t>{2}}});
  infer_shapes(g);
  const DimVector& out = type_of(g, "conv").shape;
  REQUIRE(out.size() == 3);
  CHECK(out[0] == B);
  CHECK(out[1] == Dim(8));
  // (T + 2 - 3) / 2 + 1, by hand.
  CHECK(eval(out[2], "T", 1) == 1);
  CHECK(eval(out[2], "T", 5) == 3);
  CHECK(eval(out[2], "T", 10) == 5);
  CHECK(eval(out[2], "T", 11) == 6);
  CHECK(eval(out[2], "T", 100) == 50);
}

TEST_CASE("Conv 2-D with groups, SAME_UPPER and VALID with dilation", "[unit][shape_inference][conv]") {
  Graph g;
  Dim h = Dim::symbol("H"), wd = Dim::symbol("W");
  ValueId x = g.add_input("x", f32({1, 6, h, wd}));
  ValueId w = g.add_input("w", f32({4, 3, 3, 3}));
  add(g, OpKind::Conv, "same", {x, w},
      {{"group", std::int64_t{2}}, {"auto_pad", std::string("SAME_UPPER")},
       {"strides", std::vector<std::int64_t>{2, 2}}});
  ValueId w6 = g.add_input("w6", f32({5, 6, 3, 3}));
  add(g, OpKind::Conv, "valid", {x, w6},
      {{"auto_pad", std::string("VALID")}, {"dilations", std::vector<std::int64_t>{2, 1}},
       {"kernel_shape", std::vector<std::int64_t>{3, 3}}});
  infer_shapes(g);
  const DimVector& same = type_of(g, "same").shape;
  REQUIRE(same.size() == 4);
  CHECK(same[1] == Dim(4));
  CHECK(eval(same[2], "H", 7) == 4);
  CHECK(eval(same[3], "W", 8) == 4);
  const DimVector& valid = type_of(g, "valid").shape;
  REQUIRE(valid.size() == 4);
  CHECK(valid[1] == Dim(5));
  // Dilation 2 makes the 3-tap kernel span 5: H - 4; the other axis W - 2.
  CHECK(eval(valid[2], "H", 9) == 5);
  CHECK(eval(valid[3], "W", 9) == 7);
}

TEST_CASE("reductions: constant axes, attribute axes, all axes, unknown axes, noop", "[unit][shape_inference]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, T, 8}));
  ValueId last = ints(g, "last", {-1});
  ValueId dyn = g.add_input("dyn", i64({2}));
  add(g, OpKind::ReduceSum, "sum", {x, last}, {{"keepdims", std::int64_t{0}}});
  add(g, OpKind::ReduceMean, "mean", {x}, {{"axes", std::vector<std::int64_t>{1}}});
  add(g, OpKind::ReduceMax, "max", {x});
  add(g, OpKind::ReduceSum, "dynsum", {x, dyn});
  add(g, OpKind::ReduceSum, "dynsum0", {x, dyn}, {{"keepdims", std::int64_t{0}}});
  add(g, OpKind::ReduceSum, "noop", {x}, {{"noop_with_empty_axes", std::int64_t{1}}});
  infer_shapes(g);
  check_dims(type_of(g, "sum").shape, {N, T});
  check_dims(type_of(g, "mean").shape, {N, 1, 8});
  check_dims(type_of(g, "max").shape, {1, 1, 1});
  const DimVector& dynsum = type_of(g, "dynsum").shape;
  REQUIRE(dynsum.size() == 3);
  CHECK(dynsum[0].is_symbol());
  CHECK(dynsum[0] != N);
  CHECK(type_of(g, "dynsum0").rank() == 1);
  check_dims(type_of(g, "noop").shape, {N, T, 8});
}

TEST_CASE("Softmax and LayerNormalization outputs", "[unit][shape_inference]") {
  Graph g;
  ValueId x = g.add_input("x", f32({B, T, 64}));
  ValueId scale = g.add_input("scale", f32({64}));
  ValueId bias = g.add_input("bias", f32({64}));
  add(g, OpKind::Softmax, "sm", {x}, {{"axis", std::int64_t{1}}});
  g.add_node(OpKind::LayerNormalization, "ln", {x, scale, bias}, {"y", "mean", "inv"});
  infer_shapes(g);
  check_dims(type_of(g, "sm").shape, {B, T, 64});
  check_dims(type_of(g, "y").shape, {B, T, 64});
  check_dims(type_of(g, "mean").shape, {B, T, 1});
  check_dims(type_of(g, "inv").shape, {B, T, 1});
  CHECK(type_of(g, "inv").dtype == DType::F32);
}

TEST_CASE("LogSoftmax, ArgMax and ArgMin outputs", "[unit][shape_inference]") {
  Graph g;
  ValueId x = g.add_input("x", f32({B, T, 64}));
  add(g, OpKind::LogSoftmax, "lsm", {x}, {});
  add(g, OpKind::ArgMax, "am", {x}, {{"axis", std::int64_t{-1}}});
  add(g, OpKind::ArgMin, "an", {x}, {{"axis", std::int64_t{1}}, {"keepdims", std::int64_t{0}}});
  infer_shapes(g);
  check_dims(type_of(g, "lsm").shape, {B, T, 64});
  check_dims(type_of(g, "am").shape, {B, T, 1});
  CHECK(type_of(g, "am").dtype == DType::I64);
  check_dims(type_of(g, "an").shape, {B, 64});
  Graph bad;
  ValueId e = bad.add_input("e", f32({B, 0}));
  add(bad, OpKind::ArgMax, "am", {e}, {{"axis", std::int64_t{1}}});
  CHECK_THROWS_WITH(infer_shapes(bad), Catch::Contains("empty axis"));
}

TEST_CASE("Reshape with 0, -1 and static shapes", "[unit][shape_inference][reshape]") {
  Graph g;
  ValueId x = g.add_input("x", f32({B, T, 512}));
  ValueId s = g.add_input("s", f32({2, 3, 4}));
  add(g, OpKind::Reshape, "r1", {x, ints(g, "sh1", {0, -1, 64})});
  add(g, OpKind::Reshape, "r2", {s, ints(g, "sh2", {-1})});
  add(g, OpKind::Reshape, "r3", {s, ints(g, "sh3", {4, -1})});
  add(g, OpKind::Reshape, "r4", {x, g.add_input("unknown", i64({2}))});
  infer_shapes(g);
  const DimVector& r1 = type_of(g, "r1").shape;
  REQUIRE(r1.size() == 3);
  CHECK(r1[0] == B);
  CHECK(r1[1] == Dim(8) * T);
  CHECK(r1[2] == Dim(64));
  check_dims(type_of(g, "r2").shape, {24});
  check_dims(type_of(g, "r3").shape, {4, 6});
  const DimVector& r4 = type_of(g, "r4").shape;
  REQUIRE(r4.size() == 2);
  CHECK(r4[0].is_symbol());
  CHECK(r4[0] != r4[1]);
}

TEST_CASE("Shape -> Gather -> Unsqueeze -> Concat -> Reshape folds to symbolic dims", "[unit][shape_inference][reshape]") {
  Graph g;
  ValueId x = g.add_input("x", f32({B, T, 512}));
  ValueId shape = add(g, OpKind::Shape, "shape", {x});
  ValueId b = add(g, OpKind::Gather, "b", {shape, scalar(g, "zero", 0)});
  ValueId t = add(g, OpKind::Gather, "t", {shape, scalar(g, "one", 1)});
  ValueId t2 = add(g, OpKind::Mul, "t2", {t, scalar(g, "two", 2)});
  ValueId bu = add(g, OpKind::Unsqueeze, "bu", {b, ints(g, "ax0", {0})});
  ValueId tu = add(g, OpKind::Unsqueeze, "tu", {t2, ints(g, "ax0b", {0})});
  ValueId cat = add(g, OpKind::Concat, "cat", {bu, tu, ints(g, "tail", {-1, 64})}, {{"axis", std::int64_t{0}}});
  ValueId cast = add(g, OpKind::Cast, "cast", {cat}, {{"to", std::string("i64")}});
  add(g, OpKind::Reshape, "y", {x, cast});
  infer_shapes(g);
  check_dims(*g.value(shape).known_dims, {B, T, 512});
  check_dims(type_of(g, "b").shape, {});
  check_dims(*g.value(b).known_dims, {B});
  check_dims(*g.value(t2).known_dims, {Dim(2) * T});
  check_dims(type_of(g, "cat").shape, {4});
  check_dims(*g.value(cat).known_dims, {B, Dim(2) * T, -1, 64});
  // 512 * B * T / (B * 2T * 64) = 4.
  check_dims(type_of(g, "y").shape, {B, Dim(2) * T, 4, 64});
}

TEST_CASE("Expand, Transpose, Concat, Flatten, Identity, Cast", "[unit][shape_inference]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 1}));
  ValueId y = g.add_input("y", f32({N, T, 3}));
  ValueId z = g.add_input("z", f32({M, T, 5}));
  add(g, OpKind::Expand, "ex", {x, ints(g, "to", {2, 1, 7})});
  add(g, OpKind::Transpose, "tp", {y}, {{"perm", std::vector<std::int64_t>{0, 2, 1}}});
  add(g, OpKind::Transpose, "tr", {y});
  add(g, OpKind::Concat, "cc", {y, z}, {{"axis", std::int64_t{-1}}});
  add(g, OpKind::Flatten, "fl", {y}, {{"axis", std::int64_t{2}}});
  add(g, OpKind::Flatten, "f0", {y}, {{"axis", std::int64_t{0}}});
  add(g, OpKind::Identity, "id", {y});
  add(g, OpKind::Cast, "ca", {y}, {{"to", std::string("i32")}});
  CHECK_FALSE(g.symbols().equal(N, M));
  infer_shapes(g);
  check_dims(type_of(g, "ex").shape, {2, N, 7});
  check_dims(type_of(g, "tp").shape, {N, 3, T});
  check_dims(type_of(g, "tr").shape, {3, T, N});
  check_dims(type_of(g, "cc").shape, {N, T, 8});
  CHECK(g.symbols().equal(N, M));  // Concat asserts non-axis dims equal
  check_dims(type_of(g, "fl").shape, {N * T, 3});
  check_dims(type_of(g, "f0").shape, {1, N * T * Dim(3)});
  check_dims(type_of(g, "id").shape, {N, T, 3});
  CHECK(type_of(g, "ca").dtype == DType::I32);
}

TEST_CASE("Slice with constant parameters: clamping, negative and strided", "[unit][shape_inference][slice]") {
  Graph g;
  ValueId x = g.add_input("x", f32({T, 10}));
  add(g, OpKind::Slice, "tail", {x, ints(g, "s1", {1}), ints(g, "e1", {kMax}), ints(g, "a1", {0})});
  add(g, OpKind::Slice, "last3", {x, ints(g, "s2", {-3}), ints(g, "e2", {100}), ints(g, "a2", {-1})});
  add(g, OpKind::Slice, "rev", {x, ints(g, "s3", {-1}), ints(g, "e3", {std::numeric_limits<std::int64_t>::min()}),
                                ints(g, "a3", {1}), ints(g, "st3", {-1})});
  add(g, OpKind::Slice, "every3", {x, ints(g, "s4", {0}), ints(g, "e4", {10}), ints(g, "a4", {1}), ints(g, "st4", {3})});
  add(g, OpKind::Slice, "head", {x, ints(g, "s5", {0}), ints(g, "e5", {4})});
  add(g, OpKind::Slice, "dyn", {x, g.add_input("ds", i64({1})), ints(g, "e6", {4}), ints(g, "a6", {1})});
  infer_shapes(g);
  const DimVector& tail = type_of(g, "tail").shape;
  REQUIRE(tail.size() == 2);
  CHECK(eval(tail[0], "T", 5) == 4);
  CHECK(eval(tail[0], "T", 1) == 0);
  CHECK(eval(tail[0], "T", 0) == 0);
  CHECK(tail[1] == Dim(10));
  check_dims(type_of(g, "last3").shape, {T, 3});
  check_dims(type_of(g, "rev").shape, {T, 10});
  check_dims(type_of(g, "every3").shape, {T, 4});
  const DimVector& head = type_of(g, "head").shape;
  CHECK(eval(head[0], "T", 9) == 4);
  CHECK(eval(head[0], "T", 2) == 2);
  const DimVector& dyn = type_of(g, "dyn").shape;
  CHECK(dyn[0] == T);
  CHECK(dyn[1].is_symbol());
}

TEST_CASE("Gather, Squeeze, Unsqueeze and Shape with start/end", "[unit][shape_inference]") {
  Graph g;
  ValueId data = g.add_input("data", f32({N, 16}));
  ValueId idx = g.add_input("idx", i64({B, T}));
  ValueId x = g.add_input("x", f32({N, 1, 3}));
  ValueId ones = g.add_input("ones", f32({1, 3, 1}));
  add(g, OpKind::Gather, "emb", {data, idx});
  add(g, OpKind::Gather, "col", {data, scalar(g, "c5", 5)}, {{"axis", std::int64_t{-1}}});
  add(g, OpKind::Squeeze, "sq", {x, ints(g, "ax1", {1})});
  add(g, OpKind::Squeeze, "sq_all", {ones});
  add(g, OpKind::Unsqueeze, "us", {data, ints(g, "ax", {0, -1})});
  ValueId s1 = add(g, OpKind::Shape, "s1", {x}, {{"start", std::int64_t{1}}});
  ValueId s2 = add(g, OpKind::Shape, "s2", {x}, {{"end", std::int64_t{-1}}});
  infer_shapes(g);
  check_dims(type_of(g, "emb").shape, {B, T, 16});
  check_dims(type_of(g, "col").shape, {N});
  check_dims(type_of(g, "sq").shape, {N, 3});
  check_dims(type_of(g, "sq_all").shape, {3});
  check_dims(type_of(g, "us").shape, {1, N, 16, 1});
  check_dims(type_of(g, "s1").shape, {2});
  check_dims(*g.value(s1).known_dims, {1, 3});
  check_dims(*g.value(s2).known_dims, {N, 1});
  CHECK(type_of(g, "s2").dtype == DType::I64);
}

TEST_CASE("LSTM shapes for both layouts and bidirectional", "[unit][shape_inference][lstm]") {
  Graph g;
  ValueId x = g.add_input("x", f32({T, B, 16}));
  ValueId w = g.add_input("w", f32({2, 128, 16}));
  ValueId r = g.add_input("r", f32({2, 128, 32}));
  ValueId bias = g.add_input("bias", f32({2, 256}));
  g.add_node(OpKind::LSTM, "lstm", {x, w, r, bias}, {"y", "yh", "yc"},
             {{"hidden_size", std::int64_t{32}}, {"direction", std::string("bidirectional")},
              {"activations", std::string("Sigmoid,Tanh,Tanh,Sigmoid,Tanh,Tanh")}});
  ValueId x1 = g.add_input("x1", f32({B, T, 16}));
  ValueId w1 = g.add_input("w1", f32({1, 128, 16}));
  ValueId r1 = g.add_input("r1", f32({1, 128, 32}));
  g.add_node(OpKind::LSTM, "lstm1", {x1, w1, r1}, {"y1", "", "yc1"}, {{"hidden_size", std::int64_t{32}},
                                                                       {"layout", std::int64_t{1}}});
  infer_shapes(g);
  check_dims(type_of(g, "y").shape, {T, 2, B, 32});
  check_dims(type_of(g, "yh").shape, {2, B, 32});
  check_dims(type_of(g, "yc").shape, {2, B, 32});
  check_dims(type_of(g, "y1").shape, {B, T, 1, 32});
  check_dims(type_of(g, "yc1").shape, {B, 1, 32});
}

TEST_CASE("Loop with a symbolic trip count and a captured value", "[unit][shape_inference][control]") {
  Graph g;
  ValueId x = g.add_input("x", f32({T, N}));
  ValueId v0 = g.add_input("v0", f32({N}));
  ValueId shape = add(g, OpKind::Shape, "shape", {x});
  ValueId trip = add(g, OpKind::Gather, "trip", {shape, scalar(g, "zero", 0)});
  auto body = std::make_shared<Graph>("body", g.shared_symbols());
  body->add_input("i", i64({}));
  ValueId cond = body->add_input("cond", ValueType{DType::Bool, {}});
  ValueId v = body->add_input("v", f32({N}));
  ValueId w = body->add_capture("w", f32({}), v0);
  ValueId next = add(*body, OpKind::Add, "next", {v, w});
  ValueId sq = add(*body, OpKind::Mul, "sq", {v, v});
  ValueId cond_out = add(*body, OpKind::Identity, "cond_out", {cond});
  body->add_output(cond_out);
  body->add_output(next);
  body->add_output(sq);
  g.add_node(OpKind::Loop, "loop", {trip, ValueId::none(), v0}, {"v_final", "squares"}, {{"body", body}});
  infer_shapes(g);
  CHECK(body->value(w).type.to_string() == "f32[N]");  // capture typed from the outer value
  check_dims(type_of(g, "v_final").shape, {N});
  check_dims(type_of(g, "squares").shape, {T, N});
}

TEST_CASE("Loop whose condition may stop early gets a fresh trip symbol", "[unit][shape_inference][control]") {
  Graph g;
  ValueId m = g.add_constant("m", Tensor::scalar<std::int64_t>(10));
  ValueId c = g.add_input("c", ValueType{DType::Bool, {}});
  ValueId v0 = g.add_input("v0", f32({3}));
  auto body = std::make_shared<Graph>("body", g.shared_symbols());
  body->add_input("i", i64({}));
  body->add_input("cond", ValueType{DType::Bool, {}});
  ValueId v = body->add_input("v", f32({3}));
  ValueId lim = body->add_constant("lim", Tensor::scalar<float>(5.0f));
  ValueId s = add(*body, OpKind::ReduceSum, "s", {v}, {{"keepdims", std::int64_t{0}}});
  ValueId keep = add(*body, OpKind::Less, "keep", {s, lim});
  body->add_output(keep);
  body->add_output(v);
  body->add_output(v);
  g.add_node(OpKind::Loop, "loop", {m, c, v0}, {"v_final", "trace"}, {{"body", body}});
  infer_shapes(g);
  const DimVector& trace = type_of(g, "trace").shape;
  REQUIRE(trace.size() == 2);
  CHECK(trace[0].is_symbol());
  CHECK(trace[1] == Dim(3));
}

TEST_CASE("If keeps dims the branches agree on and makes the others fresh", "[unit][shape_inference][control]") {
  Graph g;
  ValueId c = g.add_input("c", ValueType{DType::Bool, {}});
  ValueId a = g.add_input("a", f32({N, 3}));
  ValueId b = g.add_input("b", f32({N, M}));
  auto then_g = std::make_shared<Graph>("then", g.shared_symbols());
  then_g->add_output(add(*then_g, OpKind::Relu, "ra", {then_g->add_capture("a_in", f32({}), a)}));
  auto else_g = std::make_shared<Graph>("else", g.shared_symbols());
  else_g->add_output(add(*else_g, OpKind::Abs, "rb", {else_g->add_capture("b_in", f32({}), b)}));
  g.add_node(OpKind::If, "if", {c}, {"out"}, {{"then_branch", then_g}, {"else_branch", else_g}});
  infer_shapes(g);
  const DimVector& out = type_of(g, "out").shape;
  REQUIRE(out.size() == 2);
  CHECK(out[0] == N);
  CHECK(out[1].is_symbol());
  CHECK(out[1] != M);
  CHECK(out[1] != Dim(3));
}

TEST_CASE("Scan over a symbolic length with input and output axes", "[unit][shape_inference][control]") {
  Graph g;
  ValueId h0 = g.add_input("h0", f32({4}));
  ValueId xs = g.add_input("xs", f32({4, T}));
  auto body = std::make_shared<Graph>("body", g.shared_symbols());
  ValueId h = body->add_input("h", f32({4}));
  ValueId x = body->add_input("x", f32({4}));
  ValueId h_next = add(*body, OpKind::Add, "h_next", {h, x});
  ValueId y = add(*body, OpKind::Tanh, "y", {h_next});
  body->add_output(h_next);
  body->add_output(y);
  body->add_output(y);
  g.add_node(OpKind::Scan, "scan", {h0, xs}, {"h_final", "ys", "ys_t"},
             {{"body", body},
              {"num_scan_inputs", std::int64_t{1}},
              {"scan_input_axes", std::vector<std::int64_t>{1}},
              {"scan_output_axes", std::vector<std::int64_t>{0, -1}}});
  infer_shapes(g);
  check_dims(type_of(g, "h_final").shape, {4});
  check_dims(type_of(g, "ys").shape, {T, 4});
  check_dims(type_of(g, "ys_t").shape, {4, T});
}

TEST_CASE("Size is a rank-0 i64 known as the product of the dims", "[unit][shape_inference]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 3, T}));
  ValueId n = add(g, OpKind::Size, "n", {x});
  ValueId nb = add(g, OpKind::Size, "nb", {g.add_input("b", ValueType{DType::Bool, {0, 4}})});
  ValueId ns = add(g, OpKind::Size, "ns", {g.add_input("s", f32({}))});
  ValueId as_shape = add(g, OpKind::Unsqueeze, "as_shape", {n, ints(g, "ax0", {0})});
  add(g, OpKind::Reshape, "flat", {x, as_shape});
  infer_shapes(g);
  CHECK(type_of(g, "n").dtype == DType::I64);
  CHECK(type_of(g, "n").shape.empty());
  check_dims(*g.value(n).known_dims, {N * 3 * T});
  check_dims(*g.value(nb).known_dims, {0});
  check_dims(*g.value(ns).known_dims, {1});
  // Shape arithmetic on the count stays symbolic.
  check_dims(type_of(g, "flat").shape, {N * 3 * T});
}

TEST_CASE("CumSum, Trilu and Hardmax keep their input's type", "[unit][shape_inference]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, T, 4}));
  ValueId i = g.add_input("i", ValueType{DType::I32, {B, 3}});
  ValueId b = g.add_input("b", ValueType{DType::Bool, {0, 0}});
  ValueId axis = g.add_input("axis", i64({}));  // known only at run time
  add(g, OpKind::CumSum, "cs", {x, scalar(g, "m1", -1)},
      {{"exclusive", std::int64_t{1}}, {"reverse", std::int64_t{1}}});
  add(g, OpKind::CumSum, "cs_run_time", {i, axis});
  add(g, OpKind::CumSum, "cs_i32_axis", {x, g.add_constant("a32", Tensor::scalar<std::int32_t>(-3))});
  add(g, OpKind::Trilu, "tu", {x});
  add(g, OpKind::Trilu, "tl", {i, scalar(g, "k9", 9)}, {{"upper", std::int64_t{0}}});
  add(g, OpKind::Trilu, "tb", {b, axis});
  add(g, OpKind::Hardmax, "hm", {x});
  add(g, OpKind::Hardmax, "hm0", {x}, {{"axis", std::int64_t{0}}});
  infer_shapes(g);
  for (const char* name : {"cs", "cs_i32_axis", "tu", "hm", "hm0"}) {
    INFO(name);
    CHECK(type_of(g, name).dtype == DType::F32);
    check_dims(type_of(g, name).shape, {N, T, 4});
  }
  for (const char* name : {"cs_run_time", "tl"}) {
    INFO(name);
    CHECK(type_of(g, name).dtype == DType::I32);
    check_dims(type_of(g, name).shape, {B, 3});
  }
  CHECK(type_of(g, "tb").dtype == DType::Bool);
  check_dims(type_of(g, "tb").shape, {0, 0});
}

TEST_CASE("CumSum, Trilu and Hardmax errors name the node and what is wrong", "[unit][shape_inference]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 4}));
  SECTION("CumSum axis out of range") {
    add(g, OpKind::CumSum, "cs", {x, scalar(g, "two", 2)});
    expect_error(g, ErrorKind::Shape, {"node 'cs' (CumSum)", "axis 2", "rank 2"});
  }
  SECTION("CumSum axis not a scalar") {
    add(g, OpKind::CumSum, "cs", {x, ints(g, "zero", {0})});
    expect_error(g, ErrorKind::Shape, {"node 'cs' (CumSum)", "input 1 ('zero')", "i64[1]", "scalar"});
  }
  SECTION("CumSum axis of a float dtype") {
    add(g, OpKind::CumSum, "cs", {x, g.add_constant("half", Tensor::scalar<float>(0.5f))});
    expect_error(g, ErrorKind::Model, {"node 'cs' (CumSum)", "f32"});
  }
  SECTION("CumSum of a scalar") {
    add(g, OpKind::CumSum, "cs", {g.add_input("s", f32({})), g.add_input("a", i64({}))});
    expect_error(g, ErrorKind::Shape, {"node 'cs' (CumSum)", "scalar", "rank >= 1"});
  }
  SECTION("CumSum of bool") {
    add(g, OpKind::CumSum, "cs", {g.add_input("b", ValueType{DType::Bool, {3}}), scalar(g, "zero", 0)});
    expect_error(g, ErrorKind::Model, {"node 'cs' (CumSum)", "bool"});
  }
  SECTION("Trilu of rank 1") {
    add(g, OpKind::Trilu, "tr", {g.add_input("v", f32({N}))});
    expect_error(g, ErrorKind::Shape, {"node 'tr' (Trilu)", "rank 1", "rank >= 2"});
  }
  SECTION("Trilu k not a scalar") {
    add(g, OpKind::Trilu, "tr", {x, ints(g, "k", {1})});
    expect_error(g, ErrorKind::Shape, {"node 'tr' (Trilu)", "input 1 ('k')", "scalar"});
  }
  SECTION("Trilu k of i32") {
    add(g, OpKind::Trilu, "tr", {x, g.add_constant("k", Tensor::scalar<std::int32_t>(1))});
    expect_error(g, ErrorKind::Model, {"node 'tr' (Trilu)", "i32"});
  }
  SECTION("Hardmax axis out of range") {
    add(g, OpKind::Hardmax, "hm", {x}, {{"axis", std::int64_t{-3}}});
    expect_error(g, ErrorKind::Shape, {"node 'hm' (Hardmax)", "axis", "-3"});
  }
  SECTION("Hardmax of integers") {
    add(g, OpKind::Hardmax, "hm", {g.add_input("k", i64({N, 4}))});
    expect_error(g, ErrorKind::Model, {"node 'hm' (Hardmax)", "i64"});
  }
}

TEST_CASE("Neg of known dims folds, so LayerNormalization's function body keeps its shapes",
          "[unit][shape_inference]") {
  // The body at axis -1: ReducedShape = Concat(Shape(X)[0:-1], ConstantOfShape(Neg([-1]), value 1)), and
  // Mean reshaped to it.
  Graph g;
  ValueId x = g.add_input("x", f32({N, T, 8}));
  ValueId xshape = add(g, OpKind::Shape, "xshape", {x});
  ValueId axis = ints(g, "axis", {-1});
  ValueId prefix = add(g, OpKind::Slice, "prefix", {xshape, ints(g, "zero", {0}), axis});
  ValueId count = add(g, OpKind::Neg, "count", {axis});
  ValueId suffix =
      add(g, OpKind::ConstantOfShape, "suffix", {count}, {{"value", Tensor::from_vector<std::int64_t>({1}, {1})}});
  ValueId reduced = add(g, OpKind::Concat, "reduced", {prefix, suffix}, {{"axis", std::int64_t{0}}});
  ValueId mean = add(g, OpKind::ReduceMean, "mean2d", {x}, {{"axes", std::vector<std::int64_t>{-1}}});
  add(g, OpKind::Reshape, "mean", {mean, reduced});
  ValueId negated_dims = add(g, OpKind::Neg, "negated_dims", {xshape});
  add(g, OpKind::Neg, "float_neg", {x});
  infer_shapes(g);
  check_dims(*g.value(count).known_dims, {1});
  check_dims(*g.value(negated_dims).known_dims, {Dim(0) - N, Dim(0) - T, -8});
  CHECK_FALSE(g.value(*g.find_value("float_neg")).known_dims.has_value());
  check_dims(type_of(g, "mean").shape, {N, T, 1});
}
