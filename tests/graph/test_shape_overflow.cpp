// Tests of shape inference against attributes and constants at the int64
// extremes: Conv pads, Reshape's -1 over symbols fixed to large constants,
// Slice steps of INT64_MAX and INT64_MIN, a negative-step Slice of an empty
// shape vector, negative Expand targets, a negative Loop trip count and symbol
// divisors without a common multiple in int64. Each must give a typed error
// naming the node or symbol, or the right dims, and never wrap.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "canary/error.h"
#include "canary/tensor.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "graph/symbolic.h"
#include "tests/graph/graph_test_support.h"

using namespace canary;
using namespace canary::graph;
using namespace canary::test;

namespace {

using Ints = std::vector<std::int64_t>;

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

// The canary::Error f throws; fails the test when it throws nothing.
template <typename F>
Error error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  FAIL("expected a canary::Error");
  return Error(ErrorKind::Internal, "unreachable");
}

}  // namespace

TEST_CASE("Conv pads whose sum overflows int64 are a shape error naming the pads", "[unit][hostile_shapes][conv]") {
  Graph g;
  ValueId x = g.add_input("x", f32({1, 1, 8}));
  ValueId w = g.add_input("w", f32({1, 1, 3}));
  g.add_node(OpKind::Conv, "c", {x, w}, {"y"}, {{"pads", Ints{kMax, kMax}}});
  expect_error(g, ErrorKind::Shape,
               {"node 'c' (Conv)", "attribute 'pads'", std::to_string(kMax), "spatial axis 0", "overflows int64"});
}

TEST_CASE("Reshape to -1 over symbols fixed to 2^40 reports the overflowing product", "[unit][hostile_shapes]") {
  // MatMul fixes N == 2^40; z's element count N * N * T then has a constant
  // factor 2^80, which the -1 inference must not wrap to 0.
  Graph g;
  const Dim n = Dim::symbol("N"), t = Dim::symbol("T");
  ValueId x = g.add_input("x", f32({2, n}));
  ValueId w = g.add_input("w", f32({std::int64_t{1} << 40, 3}));
  add(g, OpKind::MatMul, "mm", {x, w});
  ValueId z = g.add_input("z", f32({n, n, t}));
  add(g, OpKind::Reshape, "flat", {z, ints(g, "minus_one", {-1})});
  expect_error(g, ErrorKind::Resource, {"node 'flat' (Reshape)", "the -1 in shape [-1]", "overflows int64"});
}

TEST_CASE("Slice steps of INT64_MAX and INT64_MIN pick one element without overflow", "[unit][hostile_shapes]") {
  Graph g;
  const Dim t = Dim::symbol("T");
  ValueId x = g.add_input("x", f32({10, t}));
  add(g, OpKind::Slice, "fwd", {x, ints(g, "s0", {0}), ints(g, "e0", {10}), ints(g, "a0", {0}), ints(g, "p0", {kMax})});
  add(g, OpKind::Slice, "back",
      {x, ints(g, "s1", {-1}), ints(g, "e1", {kMin}), ints(g, "a1", {0}), ints(g, "p1", {kMin})});
  add(g, OpKind::Slice, "back_t",
      {x, ints(g, "s2", {-1}), ints(g, "e2", {kMin}), ints(g, "a2", {1}), ints(g, "p2", {kMin})});
  infer_shapes(g);
  check_dims(type_of(g, "fwd").shape, {1, t});
  check_dims(type_of(g, "back").shape, {1, t});
  // ceil(T / 2^63) has no Dim form: the length becomes a fresh symbol.
  const DimVector& back_t = type_of(g, "back_t").shape;
  REQUIRE(back_t.size() == 2);
  CHECK(back_t[0] == Dim(10));
  CHECK(back_t[1].is_symbol());
}

TEST_CASE("A negative-step Slice of an empty shape vector is empty and reads no known dim",
          "[unit][hostile_shapes]") {
  // Shape of a scalar is i64[0] with known contents []; reversing it must not
  // index element 0 of the empty contents.
  Graph g;
  ValueId x = g.add_input("x", f32({}));
  ValueId shape = add(g, OpKind::Shape, "shape", {x});
  add(g, OpKind::Slice, "rev", {shape, ints(g, "s", {-1}), ints(g, "e", {kMin}), ints(g, "a", {0}), ints(g, "p", {-1})});
  infer_shapes(g);
  check_dims(type_of(g, "rev").shape, {0});
  const std::optional<DimVector>& known = g.value(*g.find_value("rev")).known_dims;
  REQUIRE(known);
  CHECK(known->empty());
}

TEST_CASE("Expand to a negative dim is a shape error, not a negative output dim", "[unit][hostile_shapes]") {
  Graph g;
  ValueId x = g.add_input("x", f32({1}));
  add(g, OpKind::Expand, "e", {x, ints(g, "target", {-5})});
  expect_error(g, ErrorKind::Shape, {"node 'e' (Expand)", "[-5]", "negative"});
}

TEST_CASE("A Loop with a negative constant trip count stacks zero iterations", "[unit][hostile_shapes][control]") {
  Graph g;
  ValueId m = g.add_constant("m", Tensor::scalar<std::int64_t>(-3));
  ValueId v0 = g.add_input("v0", f32({3}));
  auto body = std::make_shared<Graph>("body", g.shared_symbols());
  body->add_input("i", ValueType{DType::I64, {}});
  ValueId cond = body->add_input("cond", ValueType{DType::Bool, {}});
  ValueId v = body->add_input("v", f32({3}));
  body->add_output(add(*body, OpKind::Identity, "cond_out", {cond}));
  body->add_output(v);
  body->add_output(v);
  g.add_node(OpKind::Loop, "loop", {m, ValueId::none(), v0}, {"v_final", "trace"}, {{"body", body}});
  infer_shapes(g);
  check_dims(type_of(g, "trace").shape, {0, 3});
}

TEST_CASE("Symbol divisors without a common multiple in int64 are a shape error naming the symbol",
          "[unit][hostile_shapes][symbols]") {
  constexpr std::int64_t kQuarter = std::int64_t{1} << 62;
  SymbolTable one;
  one.declare("T");
  one.set_divisor("T", kQuarter);
  Error e = error_of([&] { one.set_divisor("T", 3); });
  CHECK(e.kind() == ErrorKind::Shape);
  CHECK_THAT(e.detail(), Catch::Matchers::Contains("symbol 'T'") && Catch::Matchers::Contains(std::to_string(kQuarter)) &&
                             Catch::Matchers::Contains("int64"));
  CHECK(one.constraints("T").divisor == kQuarter);  // the failed constraint left the class alone

  SymbolTable two;
  two.declare("A");
  two.declare("B");
  two.set_divisor("A", kQuarter);
  two.set_divisor("B", 3);
  e = error_of([&] { two.assert_equal(Dim::symbol("A"), Dim::symbol("B"), "inner dims"); });
  CHECK(e.kind() == ErrorKind::Shape);
  CHECK_THAT(e.detail(), Catch::Matchers::Contains("inner dims: A == B") && Catch::Matchers::Contains("int64"));

  // Divisors that do combine still give their least common multiple.
  SymbolTable three;
  three.declare("T");
  three.set_divisor("T", 4);
  three.set_divisor("T", 6);
  CHECK(three.constraints("T").divisor == 12);
}
