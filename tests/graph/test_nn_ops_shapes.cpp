// Tests of symbolic shape inference and validation for the conv- and
// recurrent-net ops: MaxPool, AveragePool, GlobalAveragePool,
// BatchNormalization and GRU. Expected lengths are computed by hand.
#include <catch2/catch.hpp>

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
const Dim H = Dim::symbol("H");

using Ints = std::vector<std::int64_t>;

}  // namespace

TEST_CASE("MaxPool over symbolic T with stride 2, floor and ceil mode", "[unit][shape_inference][pool]") {
  Graph g;
  ValueId x = g.add_input("x", f32({B, 4, T}));
  add(g, OpKind::MaxPool, "floor", {x}, {{"kernel_shape", Ints{2}}, {"strides", Ints{2}}});
  add(g, OpKind::MaxPool, "ceil", {x}, {{"kernel_shape", Ints{2}}, {"strides", Ints{2}}, {"ceil_mode", std::int64_t{1}}});
  add(g, OpKind::MaxPool, "ceil_padded", {x},
      {{"kernel_shape", Ints{2}}, {"strides", Ints{2}}, {"pads", Ints{1, 1}}, {"ceil_mode", std::int64_t{1}}});
  infer_shapes(g);
  const DimVector& fl = type_of(g, "floor").shape;
  const DimVector& ce = type_of(g, "ceil").shape;
  const DimVector& cp = type_of(g, "ceil_padded").shape;
  REQUIRE(fl.size() == 3);
  REQUIRE(ce.size() == 3);
  REQUIRE(cp.size() == 3);
  CHECK(ce[0] == B);
  CHECK(ce[1] == Dim(4));
  // floor((T - 2) / 2) + 1 versus ceil((T - 2) / 2) + 1, by hand.
  const std::int64_t ts[] = {2, 3, 4, 5, 6, 7, 100, 101};
  const std::int64_t want_floor[] = {1, 1, 2, 2, 3, 3, 50, 50};
  const std::int64_t want_ceil[] = {1, 2, 2, 3, 3, 4, 50, 51};
  // Pads 1+1: ceil((T + 2 - 2) / 2) + 1, minus a last window that would start
  // at (out - 1) * 2 - 1 >= T, inside the end padding (T = 3: 3 → 2; T = 5: 4 → 3).
  const std::int64_t want_padded[] = {2, 2, 3, 3, 4, 4, 51, 51};
  for (std::size_t i = 0; i < std::size(ts); ++i) {
    INFO("T = " << ts[i]);
    CHECK(eval(fl[2], "T", ts[i]) == want_floor[i]);
    CHECK(eval(ce[2], "T", ts[i]) == want_ceil[i]);
    CHECK(eval(cp[2], "T", ts[i]) == want_padded[i]);
  }
}

TEST_CASE("pooling shapes: 2-D with dilation, SAME_UPPER, VALID and constants", "[unit][shape_inference][pool]") {
  Graph g;
  ValueId x = g.add_input("x", f32({1, 3, H, 10}));
  add(g, OpKind::AveragePool, "same", {x},
      {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 3}}, {"auto_pad", std::string("SAME_UPPER")}});
  add(g, OpKind::MaxPool, "dilated", {x},
      {{"kernel_shape", Ints{2, 3}}, {"dilations", Ints{2, 1}}, {"pads", Ints{0, 1, 0, 1}}});
  add(g, OpKind::AveragePool, "valid", {x},
      {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"auto_pad", std::string("VALID")}});
  infer_shapes(g);
  const DimVector& same = type_of(g, "same").shape;
  REQUIRE(same.size() == 4);
  CHECK(eval(same[2], "H", 7) == 4);  // ceil(7 / 2)
  CHECK(same[3] == Dim(4));           // ceil(10 / 3)
  const DimVector& dilated = type_of(g, "dilated").shape;
  REQUIRE(dilated.size() == 4);
  CHECK(eval(dilated[2], "H", 7) == 5);  // span 3: 7 - 3 + 1
  CHECK(dilated[3] == Dim(10));          // 10 + 2 - 3 + 1
  const DimVector& valid = type_of(g, "valid").shape;
  CHECK(eval(valid[2], "H", 9) == 4);
  CHECK(valid[3] == Dim(5));
  CHECK(type_of(g, "valid").dtype == DType::F32);
}

TEST_CASE("GlobalAveragePool keeps N and C and sets every spatial dim to 1", "[unit][shape_inference][pool]") {
  Graph g;
  ValueId x4 = g.add_input("x4", f32({B, 8, H, T}));
  ValueId x5 = g.add_input("x5", f32({2, 3, 4, 5, T}));
  add(g, OpKind::GlobalAveragePool, "g4", {x4});
  add(g, OpKind::GlobalAveragePool, "g5", {x5});
  infer_shapes(g);
  check_dims(type_of(g, "g4").shape, {B, 8, 1, 1});
  check_dims(type_of(g, "g5").shape, {2, 3, 1, 1, 1});
}

TEST_CASE("pooling validation errors name the node and the problem", "[unit][validation][pool]") {
  Graph g;
  ValueId x = g.add_input("x", f32({1, 2, T}));
  SECTION("Indices output") {
    g.add_node(OpKind::MaxPool, "mp", {x}, {"y", "idx"}, {{"kernel_shape", Ints{2}}});
    expect_error(g, ErrorKind::Model, {"node 'mp' (MaxPool)", "Indices", "not supported"});
  }
  SECTION("storage_order") {
    add(g, OpKind::MaxPool, "mp", {x}, {{"kernel_shape", Ints{2}}, {"storage_order", std::int64_t{1}}});
    expect_error(g, ErrorKind::Model, {"node 'mp' (MaxPool)", "storage_order"});
  }
  SECTION("missing kernel_shape") {
    add(g, OpKind::AveragePool, "ap", {x});
    expect_error(g, ErrorKind::Model, {"node 'ap' (AveragePool)", "kernel_shape"});
  }
  SECTION("kernel_shape length") {
    add(g, OpKind::AveragePool, "ap", {x}, {{"kernel_shape", Ints{2, 2}}});
    expect_error(g, ErrorKind::Model, {"node 'ap' (AveragePool)", "'kernel_shape' has 2 values, expected 1"});
  }
  SECTION("pads not smaller than the kernel") {
    add(g, OpKind::MaxPool, "mp", {x}, {{"kernel_shape", Ints{2}}, {"pads", Ints{2, 0}}});
    expect_error(g, ErrorKind::Model, {"node 'mp' (MaxPool)", "smaller than the kernel span 2"});
  }
  SECTION("constant input shorter than the kernel") {
    ValueId c = g.add_input("c", f32({1, 2, 3}));
    add(g, OpKind::MaxPool, "mp", {c}, {{"kernel_shape", Ints{5}}});
    expect_error(g, ErrorKind::Shape, {"node 'mp' (MaxPool)", "shorter than the kernel span 5"});
  }
  SECTION("3-D pooling") {
    ValueId x5 = g.add_input("x5", f32({1, 2, 3, 4, 5}));
    add(g, OpKind::MaxPool, "mp", {x5}, {{"kernel_shape", Ints{2, 2, 2}}});
    expect_error(g, ErrorKind::Shape, {"node 'mp' (MaxPool)", "rank 3 or 4"});
  }
  SECTION("GlobalAveragePool of rank 2") {
    ValueId x2 = g.add_input("x2", f32({1, 2}));
    add(g, OpKind::GlobalAveragePool, "gap", {x2});
    expect_error(g, ErrorKind::Shape, {"node 'gap' (GlobalAveragePool)", "rank >= 3"});
  }
}

TEST_CASE("BatchNormalization output matches X; channel lengths are checked", "[unit][shape_inference][batch_norm]") {
  Graph g;
  ValueId x = g.add_input("x", f32({B, 3, H, T}));
  ValueId c3 = g.add_input("c3", f32({3}));
  ValueId c4 = g.add_input("c4", f32({4}));
  SECTION("shape") {
    add(g, OpKind::BatchNormalization, "bn", {x, c3, c3, c3, c3}, {{"momentum", 0.1}});
    infer_shapes(g);
    check_dims(type_of(g, "bn").shape, {B, 3, H, T});
  }
  SECTION("channel mismatch") {
    add(g, OpKind::BatchNormalization, "bn", {x, c3, c3, c4, c3});
    expect_error(g, ErrorKind::Shape, {"node 'bn' (BatchNormalization)", "input 3 ('c4')", "input_mean"});
  }
  SECTION("training mode") {
    add(g, OpKind::BatchNormalization, "bn", {x, c3, c3, c3, c3}, {{"training_mode", std::int64_t{1}}});
    expect_error(g, ErrorKind::Model, {"node 'bn' (BatchNormalization)", "training_mode"});
  }
  SECTION("running statistics outputs") {
    g.add_node(OpKind::BatchNormalization, "bn", {x, c3, c3, c3, c3}, {"y", "running_mean"});
    expect_error(g, ErrorKind::Model, {"node 'bn' (BatchNormalization)", "running_mean", "not supported"});
  }
}

TEST_CASE("GRU shapes for both layouts and bidirectional", "[unit][shape_inference][gru]") {
  Graph g;
  ValueId x = g.add_input("x", f32({T, B, 16}));
  ValueId w = g.add_input("w", f32({2, 96, 16}));
  ValueId r = g.add_input("r", f32({2, 96, 32}));
  ValueId bias = g.add_input("bias", f32({2, 192}));
  g.add_node(OpKind::GRU, "gru", {x, w, r, bias}, {"y", "yh"},
             {{"hidden_size", std::int64_t{32}}, {"direction", std::string("bidirectional")},
              {"activations", std::string("Sigmoid,Tanh,Sigmoid,Tanh")}, {"linear_before_reset", std::int64_t{1}}});
  ValueId x1 = g.add_input("x1", f32({B, T, 16}));
  ValueId w1 = g.add_input("w1", f32({1, 96, 16}));
  ValueId r1 = g.add_input("r1", f32({1, 96, 32}));
  g.add_node(OpKind::GRU, "gru1", {x1, w1, r1}, {"", "yh1"}, {{"hidden_size", std::int64_t{32}},
                                                              {"layout", std::int64_t{1}}});
  infer_shapes(g);
  check_dims(type_of(g, "y").shape, {T, 2, B, 32});
  check_dims(type_of(g, "yh").shape, {2, B, 32});
  check_dims(type_of(g, "yh1").shape, {B, 1, 32});
}

TEST_CASE("GRU rejects bad activations, weight shapes and attributes", "[unit][validation][gru]") {
  Graph g;
  ValueId x = g.add_input("x", f32({T, 2, 8}));
  ValueId w = g.add_input("w", f32({1, 48, 8}));
  ValueId r = g.add_input("r", f32({1, 48, 16}));
  SECTION("activation") {
    g.add_node(OpKind::GRU, "gru", {x, w, r}, {"y"},
               {{"hidden_size", std::int64_t{16}}, {"activations", std::string("Sigmoid,Relu")}});
    expect_error(g, ErrorKind::Model, {"node 'gru' (GRU)", "unsupported activation 'Relu'"});
  }
  SECTION("hidden size does not match W") {
    g.add_node(OpKind::GRU, "gru", {x, w, r}, {"y"}, {{"hidden_size", std::int64_t{8}}});
    expect_error(g, ErrorKind::Shape, {"node 'gru' (GRU)", "input 1 ('w')"});
  }
  SECTION("linear_before_reset") {
    g.add_node(OpKind::GRU, "gru", {x, w, r}, {"y"},
               {{"hidden_size", std::int64_t{16}}, {"linear_before_reset", std::int64_t{2}}});
    expect_error(g, ErrorKind::Model, {"node 'gru' (GRU)", "'linear_before_reset' is 2"});
  }
  SECTION("initial_h batch") {
    ValueId h0 = g.add_input("h0", f32({1, 3, 16}));
    g.add_node(OpKind::GRU, "gru", {x, w, r, ValueId::none(), ValueId::none(), h0}, {"y"},
               {{"hidden_size", std::int64_t{16}}});
    expect_error(g, ErrorKind::Shape, {"node 'gru' (GRU)", "initial_h"});
  }
}
