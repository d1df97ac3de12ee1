// Shape inference of RNN and LRN: RNN's outputs in both layouts and for each
// direction, its activations, weight shapes tied to hidden_size and the
// errors that name the node; LRN's output shaped like its input of any rank
// >= 3 and its attribute checks.
#include <catch2/catch.hpp>

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

const Dim T = Dim::symbol("T");
const Dim B = Dim::symbol("B");
const Dim N = Dim::symbol("N");

Attributes hidden(std::int64_t h) { return {{"hidden_size", h}}; }

// hidden_size h with one more string attribute.
Attributes hidden_and(std::int64_t h, const std::string& name, const std::string& value) {
  return {{"hidden_size", h}, {name, value}};
}

}  // namespace

TEST_CASE("RNN shapes for both layouts and each direction", "[unit][shape_inference][rnn]") {
  Graph g;
  const ValueId x = g.add_input("x", f32({T, B, 16}));
  const ValueId w2 = g.add_input("w2", f32({2, 8, 16})), r2 = g.add_input("r2", f32({2, 8, 8}));
  const ValueId b2 = g.add_input("b2", f32({2, 16}));
  const ValueId lens = g.add_input("lens", ValueType{DType::I32, {B}});
  const ValueId h0 = g.add_input("h0", f32({2, B, 8}));
  g.add_node(OpKind::RNN, "bi", {x, w2, r2, b2, lens, h0}, {"y", "yh"},
             {{"hidden_size", std::int64_t{8}}, {"direction", std::string("bidirectional")},
              {"activations", std::string("Relu,Sigmoid")}, {"clip", 2.0}});
  const ValueId w1 = g.add_input("w1", f32({1, 8, 16})), r1 = g.add_input("r1", f32({1, 8, 8}));
  g.add_node(OpKind::RNN, "rev", {x, w1, r1}, {"yr"}, hidden_and(8, "direction", "reverse"));
  const ValueId x1 = g.add_input("x1", f32({B, T, 16}));
  g.add_node(OpKind::RNN, "bf", {x1, w1, r1}, {"", "yh1"}, {{"hidden_size", std::int64_t{8}},
                                                           {"layout", std::int64_t{1}}});
  const ValueId xd = g.add_input("xd", ValueType{DType::F64, {3, 2, 4}});
  const ValueId wd = g.add_input("wd", ValueType{DType::F64, {1, 5, 4}});
  const ValueId rd = g.add_input("rd", ValueType{DType::F64, {1, 5, 5}});
  g.add_node(OpKind::RNN, "f64", {xd, wd, rd}, {"yd"}, hidden_and(5, "activations", "Tanh"));
  infer_shapes(g);
  check_dims(type_of(g, "y").shape, {T, 2, B, 8});
  check_dims(type_of(g, "yh").shape, {2, B, 8});
  check_dims(type_of(g, "yr").shape, {T, 1, B, 8});
  check_dims(type_of(g, "yh1").shape, {B, 1, 8});
  check_dims(type_of(g, "yd").shape, {3, 1, 2, 5});
  CHECK(type_of(g, "yd").dtype == DType::F64);
}

TEST_CASE("RNN rejects bad activations, attributes and shapes", "[unit][validation][rnn]") {
  Graph g;
  const ValueId x = g.add_input("x", f32({T, 2, 8}));
  const ValueId w = g.add_input("w", f32({1, 16, 8}));
  const ValueId r = g.add_input("r", f32({1, 16, 16}));
  SECTION("an activation Canary lacks") {
    g.add_node(OpKind::RNN, "rnn", {x, w, r}, {"y"}, hidden_and(16, "activations", "Elu"));
    expect_error(g, ErrorKind::Model, {"node 'rnn' (RNN)", "unsupported activation 'Elu'", "Tanh, Relu, Sigmoid"});
  }
  SECTION("one activation for two directions") {
    const ValueId w2 = g.add_input("w2", f32({2, 16, 8})), r2 = g.add_input("r2", f32({2, 16, 16}));
    g.add_node(OpKind::RNN, "rnn", {x, w2, r2}, {"y"},
               {{"hidden_size", std::int64_t{16}}, {"direction", std::string("bidirectional")},
                {"activations", std::string("Relu")}});
    expect_error(g, ErrorKind::Model, {"node 'rnn' (RNN)", "lists 1 functions, expected 2"});
  }
  SECTION("hidden_size does not match W") {
    g.add_node(OpKind::RNN, "rnn", {x, w, r}, {"y"}, hidden(8));
    expect_error(g, ErrorKind::Shape, {"node 'rnn' (RNN)", "input 1 ('w')"});
  }
  SECTION("a W with the rows of a GRU") {
    const ValueId w3 = g.add_input("w3", f32({1, 48, 8}));
    g.add_node(OpKind::RNN, "rnn", {x, w3, r}, {"y"}, hidden(16));
    expect_error(g, ErrorKind::Shape, {"node 'rnn' (RNN)", "input 1 ('w3')"});
  }
  SECTION("bias of a GRU's length") {
    const ValueId b = g.add_input("b", f32({1, 96}));
    g.add_node(OpKind::RNN, "rnn", {x, w, r, b}, {"y"}, hidden(16));
    expect_error(g, ErrorKind::Shape, {"node 'rnn' (RNN)", "input 3 ('b')"});
  }
  SECTION("direction") {
    g.add_node(OpKind::RNN, "rnn", {x, w, r}, {"y"}, hidden_and(16, "direction", "sideways"));
    expect_error(g, ErrorKind::Model, {"node 'rnn' (RNN)", "'direction' is 'sideways'"});
  }
  SECTION("layout") {
    g.add_node(OpKind::RNN, "rnn", {x, w, r}, {"y"}, {{"hidden_size", std::int64_t{16}}, {"layout", std::int64_t{2}}});
    expect_error(g, ErrorKind::Model, {"node 'rnn' (RNN)", "'layout' is 2"});
  }
  SECTION("clip") {
    g.add_node(OpKind::RNN, "rnn", {x, w, r}, {"y"}, {{"hidden_size", std::int64_t{16}}, {"clip", -1.0}});
    expect_error(g, ErrorKind::Model, {"node 'rnn' (RNN)", "'clip' must be > 0"});
  }
  SECTION("sequence_lens of another batch") {
    const ValueId lens = g.add_input("lens", ValueType{DType::I64, {3}});
    g.add_node(OpKind::RNN, "rnn", {x, w, r, ValueId::none(), lens}, {"y"}, hidden(16));
    expect_error(g, ErrorKind::Shape, {"node 'rnn' (RNN)", "sequence_lens"});
  }
  SECTION("initial_h of another dtype") {
    const ValueId h0 = g.add_input("h0", ValueType{DType::F64, {1, 2, 16}});
    g.add_node(OpKind::RNN, "rnn", {x, w, r, ValueId::none(), ValueId::none(), h0}, {"y"}, hidden(16));
    expect_error(g, ErrorKind::Model, {"node 'rnn' (RNN)", "('h0') has dtype f64"});
  }
  SECTION("missing hidden_size") {
    g.add_node(OpKind::RNN, "rnn", {x, w, r}, {"y"});
    expect_error(g, ErrorKind::Model, {"node 'rnn' (RNN)", "hidden_size"});
  }
}

TEST_CASE("LRN keeps its input's shape for ranks 3 to 5", "[unit][shape_inference][lrn]") {
  Graph g;
  add(g, OpKind::LRN, "r4", {g.add_input("x4", f32({N, 16, 7, 7}))}, {{"size", std::int64_t{5}}});
  add(g, OpKind::LRN, "r3", {g.add_input("x3", f32({N, 3, 9}))}, {{"size", std::int64_t{2}}, {"beta", 0.5}});
  add(g, OpKind::LRN, "r5", {g.add_input("x5", ValueType{DType::F64, {2, 4, N, 3, 3}})},
      {{"size", std::int64_t{3}}, {"alpha", 1e-3}, {"bias", 2.0}});
  infer_shapes(g);
  check_dims(type_of(g, "r4").shape, {N, 16, 7, 7});
  check_dims(type_of(g, "r3").shape, {N, 3, 9});
  check_dims(type_of(g, "r5").shape, {2, 4, N, 3, 3});
  CHECK(type_of(g, "r5").dtype == DType::F64);
}

TEST_CASE("LRN rejects a low rank, a bad size and integer input", "[unit][validation][lrn]") {
  Graph g;
  SECTION("rank 2") {
    add(g, OpKind::LRN, "lrn", {g.add_input("x", f32({N, 16}))}, {{"size", std::int64_t{3}}});
    expect_error(g, ErrorKind::Shape, {"node 'lrn' (LRN)", "rank >= 3"});
  }
  SECTION("size 0") {
    add(g, OpKind::LRN, "lrn", {g.add_input("x", f32({N, 16, 4}))}, {{"size", std::int64_t{0}}});
    expect_error(g, ErrorKind::Model, {"node 'lrn' (LRN)", "'size' is 0"});
  }
  SECTION("size missing") {
    add(g, OpKind::LRN, "lrn", {g.add_input("x", f32({N, 16, 4}))});
    expect_error(g, ErrorKind::Model, {"node 'lrn' (LRN)", "size"});
  }
  SECTION("i64 input") {
    add(g, OpKind::LRN, "lrn", {g.add_input("x", ValueType{DType::I64, {1, 2, 3}})}, {{"size", std::int64_t{3}}});
    expect_error(g, ErrorKind::Model, {"node 'lrn' (LRN)", "has dtype i64"});
  }
}
