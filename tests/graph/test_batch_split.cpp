// The batch-split analysis (graph/batch_split.h): which graphs may run as
// independent slices of their batch, and the reason named when one may not.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "canary/tensor.h"
#include "graph/batch_split.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "tests/graph/graph_test_support.h"

using canary::DType;
using canary::Tensor;
using canary::graph::Dim;
using canary::graph::Graph;
using canary::graph::NodeId;
using canary::graph::OpKind;
using canary::graph::ValueId;
using canary::graph::ValueType;
using canary::test::add;
using canary::test::check_dims;
using canary::test::f32;
using canary::test::ints;
using canary::test::type_of;

namespace {

const Dim N = Dim::symbol("N");
const Dim T = Dim::symbol("T");
const Dim M = Dim::symbol("M");

// An f32 constant of zeros.
ValueId zeros(Graph& g, const std::string& name, const std::vector<std::int64_t>& shape) {
  return g.add_constant(name, Tensor::empty(DType::F32, shape));
}

// A 0-D i64 constant.
ValueId scalar(Graph& g, const std::string& name, std::int64_t v) {
  return g.add_constant(name, Tensor::scalar<std::int64_t>(v));
}

// A shape vector: the 1-D parts concatenated.
ValueId shape_of(Graph& g, const std::string& name, std::vector<ValueId> parts) {
  return add(g, OpKind::Concat, name, std::move(parts), {{"axis", std::int64_t{0}}});
}

// The batch size of x as a 1-D i64 tensor of one element: Shape(x)[0:1] by Gather.
ValueId batch_size(Graph& g, ValueId x, const std::string& name) {
  const ValueId sizes = add(g, OpKind::Shape, name + "_shape", {x});
  return add(g, OpKind::Gather, name, {sizes, ints(g, name + "_at", {0})});
}

// [N, rest...] as a shape vector, N read from x.
ValueId batch_shape(Graph& g, ValueId x, const std::string& name, const std::vector<std::int64_t>& rest) {
  return shape_of(g, name, {batch_size(g, x, name + "_n"), ints(g, name + "_rest", rest)});
}

// x plus the sum of every element of v: an output that keeps x's batch, so
// that the interface checks pass and the analysis has to judge v's node.
ValueId absorb(Graph& g, ValueId x, ValueId v) {
  const std::string base = g.value(v).name;
  const ValueId total = add(g, OpKind::ReduceSum, base + "_total", {v}, {{"keepdims", std::int64_t{0}}});
  return add(g, OpKind::Add, base + "_absorbed", {x, total});
}

// A bidirectional GRU of hidden size 64 over xt [T, N, input] with initial state h0.
NodeId bidirectional_gru(Graph& g, const std::string& name, ValueId xt, std::int64_t input, ValueId h0) {
  return g.add_node(OpKind::GRU, name,
                    {xt, zeros(g, name + "_W", {2, 192, input}), zeros(g, name + "_R", {2, 192, 64}), {}, {}, h0},
                    {name + "_y", name + "_h"},
                    {{"hidden_size", std::int64_t{64}}, {"direction", std::string("bidirectional")}});
}

void expect_separable(Graph& g) {
  canary::graph::infer_shapes(g);
  const canary::graph::BatchSplit split = canary::graph::analyse_batch_split(g);
  INFO("reason: " << split.reason);
  CHECK(split.separable);
}

void expect_inseparable(Graph& g, const std::vector<std::string>& fragments) {
  canary::graph::infer_shapes(g);
  const canary::graph::BatchSplit split = canary::graph::analyse_batch_split(g);
  INFO("reason: " << split.reason);
  CHECK_FALSE(split.separable);
  for (const std::string& f : fragments) CHECK_THAT(split.reason, Catch::Matchers::Contains(f));
}

}  // namespace

TEST_CASE("batch split: a Conv/BatchNorm/pool/Gemm classifier is separable", "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 3, 8, 8}));
  ValueId conv = add(g, OpKind::Conv, "conv", {x, zeros(g, "w", {4, 3, 3, 3}), zeros(g, "b", {4})},
                     {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}});
  ValueId bn = add(g, OpKind::BatchNormalization, "bn",
                   {conv, zeros(g, "scale", {4}), zeros(g, "shift", {4}), zeros(g, "mean", {4}), zeros(g, "var", {4})});
  ValueId relu = add(g, OpKind::Relu, "relu", {bn});
  ValueId pool = add(g, OpKind::MaxPool, "pool", {relu},
                     {{"kernel_shape", std::vector<std::int64_t>{2, 2}}, {"strides", std::vector<std::int64_t>{2, 2}}});
  ValueId gap = add(g, OpKind::GlobalAveragePool, "gap", {pool});
  ValueId flat = add(g, OpKind::Flatten, "flat", {gap});
  ValueId logits = add(g, OpKind::Gemm, "fc", {flat, zeros(g, "fc_w", {4, 10}), zeros(g, "fc_b", {10})});
  g.add_output(logits);
  expect_separable(g);
  check_dims(type_of(g, "fc").shape, {N, 10});
}

TEST_CASE("batch split: Reshape to [N, -1] through Shape, Gather and Concat is separable",
          "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 2, 3}));
  ValueId y = add(g, OpKind::Reshape, "y", {x, batch_shape(g, x, "target", {-1})});
  g.add_output(y);
  expect_separable(g);
  check_dims(type_of(g, "y").shape, {N, 6});
}

TEST_CASE("batch split: Transpose to [T, N, C], LSTM and Transpose back is separable", "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, T, 3}));
  ValueId xt = add(g, OpKind::Transpose, "xt", {x}, {{"perm", std::vector<std::int64_t>{1, 0, 2}}});
  NodeId lstm = g.add_node(OpKind::LSTM, "lstm",
                           {xt, zeros(g, "W", {1, 8, 3}), zeros(g, "R", {1, 8, 2}), zeros(g, "B", {1, 16})},
                           {"y", "y_h", ""}, {{"hidden_size", std::int64_t{2}}});
  ValueId y = add(g, OpKind::Transpose, "y_nt", {g.node(lstm).outputs[0]},
                  {{"perm", std::vector<std::int64_t>{2, 0, 1, 3}}});
  ValueId h = add(g, OpKind::Transpose, "h_n", {g.node(lstm).outputs[1]},
                  {{"perm", std::vector<std::int64_t>{1, 0, 2}}});
  g.add_output(y);
  g.add_output(h);
  expect_separable(g);
  check_dims(type_of(g, "y_nt").shape, {N, T, 1, 2});
  check_dims(type_of(g, "h_n").shape, {N, 1, 2});
}

TEST_CASE("batch split: attention over batched Q, K, V with Softmax on the last axis is separable",
          "[unit][graph][batch_split]") {
  Graph g;
  ValueId q = g.add_input("q", f32({N, T, 8}));
  ValueId k = g.add_input("k", f32({N, T, 8}));
  ValueId v = g.add_input("v", f32({N, T, 8}));
  ValueId kt = add(g, OpKind::Transpose, "kt", {k}, {{"perm", std::vector<std::int64_t>{0, 2, 1}}});
  ValueId scores = add(g, OpKind::MatMul, "scores", {q, kt});
  ValueId scaled = add(g, OpKind::Mul, "scaled", {scores, g.add_constant("scale", Tensor::scalar<float>(0.125f))});
  ValueId p = add(g, OpKind::Softmax, "p", {scaled}, {{"axis", std::int64_t{-1}}});
  ValueId out = add(g, OpKind::MatMul, "out", {p, v});
  g.add_output(out);
  expect_separable(g);
  check_dims(type_of(g, "scores").shape, {N, T, T});
}

TEST_CASE("batch split: an embedding lookup, positions from T and LayerNorm are separable",
          "[unit][graph][batch_split]") {
  Graph g;
  ValueId tokens = g.add_input("tokens", ValueType{DType::I64, {N, T}});
  ValueId emb = add(g, OpKind::Gather, "emb", {zeros(g, "table", {16, 4}), tokens});
  // Range(0, T): Shape(tokens)[1] does not involve the batch, so it is the same in every slice.
  ValueId t = add(g, OpKind::Gather, "t", {add(g, OpKind::Shape, "shape", {tokens}), scalar(g, "one", 1)});
  ValueId pos = add(g, OpKind::Range, "pos", {scalar(g, "zero", 0), t, scalar(g, "step", 1)});
  ValueId posf = add(g, OpKind::Cast, "posf", {pos}, {{"to", std::string("f32")}});
  ValueId col = add(g, OpKind::Unsqueeze, "col", {posf, ints(g, "axis1", {1})});
  ValueId sum = add(g, OpKind::Add, "sum", {emb, col});
  ValueId ln = add(g, OpKind::LayerNormalization, "ln", {sum, zeros(g, "gamma", {4})});
  g.add_output(ln);
  expect_separable(g);
}

TEST_CASE("batch split: data movement, selection and GRU that keep the batch are separable",
          "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 6}));
  ValueId seq = g.add_input("seq", f32({N, T, 3}));
  ValueId h0 = g.add_input("h0", f32({N, 1, 2}));
  ValueId u = add(g, OpKind::Unsqueeze, "u", {x, ints(g, "axes1", {1})});
  ValueId sq = add(g, OpKind::Squeeze, "sq", {u, ints(g, "axes1b", {1})});
  NodeId split = g.add_node(OpKind::Split, "split", {sq, ints(g, "sizes", {2, 4})}, {"part0", "part1"},
                            {{"axis", std::int64_t{1}}});
  ValueId pad = add(g, OpKind::Pad, "pad", {g.node(split).outputs[0], ints(g, "pads", {0, 1, 0, 1})});
  g.add_output(add(g, OpKind::Tile, "tile", {pad, ints(g, "repeats", {1, 2})}));
  g.add_output(g.node(split).outputs[1]);
  g.add_output(add(g, OpKind::Gather, "cols", {x, ints(g, "picks", {0, 2})}, {{"axis", std::int64_t{1}}}));
  g.add_output(add(g, OpKind::ArgMax, "best", {x}, {{"axis", std::int64_t{1}}, {"keepdims", std::int64_t{0}}}));
  ValueId zero = g.add_constant("fzero", Tensor::scalar<float>(0.0f));
  ValueId positive = add(g, OpKind::Greater, "positive", {x, zero});
  g.add_output(add(g, OpKind::Where, "rectified", {positive, x, zero}));
  g.add_output(add(g, OpKind::Dropout, "dropped", {x}));
  g.add_output(add(g, OpKind::MatMul, "proj", {x, zeros(g, "wp", {6, 3})}));
  g.add_output(add(g, OpKind::ConstantOfShape, "filled", {batch_shape(g, x, "fill_shape", {5})}));
  g.add_output(add(g, OpKind::Flatten, "flat2", {u}, {{"axis", std::int64_t{2}}}));
  NodeId gru = g.add_node(OpKind::GRU, "gru", {seq, zeros(g, "W", {1, 6, 3}), zeros(g, "R", {1, 6, 2}), {}, {}, h0},
                          {"gy", "gh"}, {{"hidden_size", std::int64_t{2}}, {"layout", std::int64_t{1}}});
  g.add_output(g.node(gru).outputs[0]);
  g.add_output(g.node(gru).outputs[1]);
  expect_separable(g);
  check_dims(type_of(g, "gy").shape, {N, T, 1, 2});
  check_dims(type_of(g, "flat2").shape, {N, 6});
}

TEST_CASE("batch split: ReduceMean over the batch axis is not separable", "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 4}));
  ValueId mean = add(g, OpKind::ReduceMean, "mean0", {x}, {{"axes", std::vector<std::int64_t>{0}}});
  g.add_output(add(g, OpKind::Sub, "centred", {x, mean}));
  expect_inseparable(g, {"node 'mean0' (ReduceMean)", "batch axis 0"});
}

TEST_CASE("batch split: Softmax over the batch axis is not separable", "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 4}));
  g.add_output(add(g, OpKind::Softmax, "softmax0", {x}, {{"axis", std::int64_t{0}}}));
  expect_inseparable(g, {"node 'softmax0' (Softmax)", "batch axis 0"});
}

TEST_CASE("batch split: a Reshape that reads the batch as another dim is not separable", "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 4}));
  // [N, 4] read as [4, N]: row n of the result takes one element of each of four samples.
  ValueId swapped = add(g, OpKind::Reshape, "swapped", {x, ints(g, "target", {4, -1})});
  ValueId back = add(g, OpKind::Reshape, "back", {swapped, add(g, OpKind::Shape, "x_shape", {x})});
  g.add_output(back);
  expect_inseparable(g, {"node 'swapped' (Reshape)", "into f32[4, N]",
                         "does not keep each sample's elements together on one axis"});
  check_dims(type_of(g, "back").shape, {N, 4});
}

TEST_CASE("batch split: flattening the batch into one axis and back is separable", "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 4}));
  // [N, 4] as [4N]: each sample's 4 elements stay together, so Relu on the flat
  // vector and the reshape back keep the samples apart.
  ValueId flat = add(g, OpKind::Reshape, "flat", {x, ints(g, "minus_one", {-1})});
  ValueId act = add(g, OpKind::Relu, "act", {flat});
  g.add_output(add(g, OpKind::Reshape, "back", {act, add(g, OpKind::Shape, "x_shape", {x})}));
  expect_separable(g);
  check_dims(type_of(g, "flat").shape, {Dim(4) * N});
}

TEST_CASE("batch split: torch's multi-head attention, heads merged with the batch and back, is separable",
          "[unit][graph][batch_split]") {
  // nn.MultiheadAttention as exported: [T, N, 64] -> [T, 4N, 16] (the batch
  // grouped with the heads), per-head Q @ K^T, Softmax, @ V, back to
  // [T, 4N, 16], merged as [T*N, 64] (the batch grouped with T) for the
  // output projection, and [T, N, 64] again.
  Graph g;
  ValueId x = g.add_input("x", f32({N, T, 64}));
  ValueId xt = add(g, OpKind::Transpose, "xt", {x}, {{"perm", std::vector<std::int64_t>{1, 0, 2}}});
  ValueId heads = add(g, OpKind::Reshape, "heads", {xt, ints(g, "per_head", {0, -1, 16})});
  ValueId q = add(g, OpKind::Transpose, "q", {heads}, {{"perm", std::vector<std::int64_t>{1, 0, 2}}});
  ValueId k = add(g, OpKind::Transpose, "k", {heads}, {{"perm", std::vector<std::int64_t>{1, 2, 0}}});
  ValueId scores = add(g, OpKind::MatMul, "scores", {q, k});
  ValueId weights = add(g, OpKind::Softmax, "weights", {scores}, {{"axis", std::int64_t{-1}}});
  ValueId context = add(g, OpKind::MatMul, "context", {weights, q});
  ValueId back = add(g, OpKind::Transpose, "back", {context}, {{"perm", std::vector<std::int64_t>{1, 0, 2}}});
  ValueId rows = add(g, OpKind::Reshape, "rows", {back, ints(g, "row_shape", {-1, 64})});
  ValueId proj = add(g, OpKind::MatMul, "proj", {rows, zeros(g, "w_out", {64, 64})});
  ValueId seq = add(g, OpKind::Reshape, "seq", {proj, add(g, OpKind::Shape, "xt_shape", {xt})});
  g.add_output(add(g, OpKind::Transpose, "y", {seq}, {{"perm", std::vector<std::int64_t>{1, 0, 2}}}));
  expect_separable(g);
  check_dims(type_of(g, "heads").shape, {T, Dim(4) * N, 16});
  check_dims(type_of(g, "scores").shape, {Dim(4) * N, T, T});
  check_dims(type_of(g, "rows").shape, {T * N, 64});
}

TEST_CASE("batch split: a sum over an axis that merges the batch with T mixes samples", "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, T, 64}));
  ValueId xt = add(g, OpKind::Transpose, "xt", {x}, {{"perm", std::vector<std::int64_t>{1, 0, 2}}});
  ValueId rows = add(g, OpKind::Reshape, "rows", {xt, ints(g, "row_shape", {-1, 64})});
  g.add_output(absorb(g, x, rows));
  expect_inseparable(g, {"node 'rows_total' (ReduceSum)", "reduces over the batch axis 0"});
  check_dims(type_of(g, "rows").shape, {T * N, 64});
}

TEST_CASE("batch split: operands whose samples a Reshape grouped differently do not meet",
          "[unit][graph][batch_split]") {
  // [N, 2, 4] as [2N, 4] groups each sample's 2 rows together; the same data
  // transposed to [2, N, 4] first puts sample n's rows at n and N + n. Same
  // dims, different samples per row: adding them would mix samples.
  Graph g;
  ValueId x = g.add_input("x", f32({N, 2, 4}));
  ValueId by_sample = add(g, OpKind::Reshape, "by_sample", {x, ints(g, "rows", {-1, 4})});
  ValueId xt = add(g, OpKind::Transpose, "xt", {x}, {{"perm", std::vector<std::int64_t>{1, 0, 2}}});
  ValueId by_half = add(g, OpKind::Reshape, "by_half", {xt, ints(g, "rows2", {-1, 4})});
  ValueId sum = add(g, OpKind::Add, "sum", {by_sample, by_half});
  g.add_output(add(g, OpKind::Reshape, "y", {sum, add(g, OpKind::Shape, "x_shape", {x})}));
  expect_inseparable(g, {"node 'sum' (Add)", "grouped differently"});
  check_dims(type_of(g, "sum").shape, {Dim(2) * N, 4});
}

TEST_CASE("batch split: Concat of a batch-expanded constant along axis 1 is separable, along axis 0 not",
          "[unit][graph][batch_split]") {
  SECTION("a constant expanded to [N, 2], concatenated along axis 1") {
    Graph g;
    ValueId x = g.add_input("x", f32({N, 3}));
    ValueId cls = add(g, OpKind::Expand, "cls", {zeros(g, "token", {1, 2}), batch_shape(g, x, "cls_shape", {2})});
    g.add_output(add(g, OpKind::Concat, "cat1", {x, cls}, {{"axis", std::int64_t{1}}}));
    expect_separable(g);
    check_dims(type_of(g, "cat1").shape, {N, 5});
  }
  SECTION("a constant row concatenated along axis 0") {
    Graph g;
    ValueId x = g.add_input("x", f32({N, 4}));
    ValueId cat = add(g, OpKind::Concat, "cat0", {x, zeros(g, "pad_row", {1, 4})}, {{"axis", std::int64_t{0}}});
    ValueId mean = add(g, OpKind::ReduceMean, "mean", {cat}, {{"axes", std::vector<std::int64_t>{0}}});
    g.add_output(add(g, OpKind::Add, "y", {x, mean}));
    expect_inseparable(g, {"node 'cat0' (Concat)", "'pad_row'"});
  }
  SECTION("two batched values concatenated along axis 0") {
    Graph g;
    ValueId x = g.add_input("x", f32({N, 4}));
    ValueId z = g.add_input("z", f32({N, 4}));
    ValueId cat = add(g, OpKind::Concat, "cat0", {x, z}, {{"axis", std::int64_t{0}}});
    ValueId mean = add(g, OpKind::ReduceMean, "mean", {cat}, {{"axes", std::vector<std::int64_t>{0}}});
    g.add_output(add(g, OpKind::Add, "y", {x, mean}));
    expect_inseparable(g, {"node 'cat0' (Concat)", "along the batch axis 0"});
  }
}

TEST_CASE("batch split: an output without the batch dim is not separable", "[unit][graph][batch_split]") {
  SECTION("ReduceSum over all axes gives a scalar") {
    Graph g;
    ValueId x = g.add_input("x", f32({N, 4}));
    g.add_output(add(g, OpKind::ReduceSum, "total", {x}, {{"keepdims", std::int64_t{0}}}));
    expect_inseparable(g, {"output 'total'", "scalar"});
  }
  SECTION("ReduceSum over all axes with keepdims gives [1, 1]") {
    Graph g;
    ValueId x = g.add_input("x", f32({N, 4}));
    g.add_output(add(g, OpKind::ReduceSum, "total", {x}));
    expect_inseparable(g, {"output 'total'", "leading dim 1"});
  }
}

TEST_CASE("batch split: an input whose dim 0 is a constant is not separable", "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({4, 3}));
  g.add_output(add(g, OpKind::Relu, "y", {x}));
  expect_inseparable(g, {"input 'x'", "leading dim 4", "not a symbol"});
}

TEST_CASE("batch split: inputs with different leading symbols are not separable", "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 3}));
  ValueId y = g.add_input("y", f32({M, 3}));
  g.add_output(add(g, OpKind::Relu, "rx", {x}));
  g.add_output(add(g, OpKind::Relu, "ry", {y}));
  expect_inseparable(g, {"input 'y'", "leading dim M", "not the batch N"});
}

TEST_CASE("batch split: a Range over the batch size is not separable", "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 4}));
  ValueId n = add(g, OpKind::Gather, "n", {add(g, OpKind::Shape, "shape", {x}), scalar(g, "zero", 0)});
  ValueId r = add(g, OpKind::Range, "Range_3", {scalar(g, "start", 0), n, scalar(g, "step", 1)});
  ValueId rf = add(g, OpKind::Cast, "rf", {r}, {{"to", std::string("f32")}});
  ValueId s = add(g, OpKind::ReduceSum, "s", {rf}, {{"keepdims", std::int64_t{0}}});
  g.add_output(add(g, OpKind::Add, "y", {x, s}));
  expect_inseparable(g, {"node 'Range_3' (Range) depends on the batch size"});
}

TEST_CASE("batch split: dividing by the batch size is not separable", "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 4}));
  ValueId n = add(g, OpKind::Gather, "n", {add(g, OpKind::Shape, "shape", {x}), scalar(g, "zero", 0)});
  ValueId nf = add(g, OpKind::Cast, "nf", {n}, {{"to", std::string("f32")}});
  g.add_output(add(g, OpKind::Div, "per_batch", {x, nf}));
  expect_inseparable(g, {"node 'per_batch' (Div)", "depends on the batch size", "'nf'"});
}

TEST_CASE("batch split: slicing the batch axis or convolving along it is not separable",
          "[unit][graph][batch_split]") {
  SECTION("Slice of the batch axis") {
    Graph g;
    ValueId x = g.add_input("x", f32({N, 4}));
    ValueId first = add(g, OpKind::Slice, "first", {x, ints(g, "s", {0}), ints(g, "e", {1}), ints(g, "a", {0})});
    ValueId total = add(g, OpKind::ReduceSum, "total", {first}, {{"keepdims", std::int64_t{0}}});
    g.add_output(add(g, OpKind::Add, "y", {x, total}));
    expect_inseparable(g, {"node 'first' (Slice)", "slices the batch axis 0"});
  }
  SECTION("Conv over data whose batch moved to the spatial axis") {
    Graph g;
    ValueId x = g.add_input("x", f32({N, 2, 8}));
    ValueId xt = add(g, OpKind::Transpose, "xt", {x}, {{"perm", std::vector<std::int64_t>{2, 1, 0}}});
    ValueId c = add(g, OpKind::Conv, "conv", {xt, zeros(g, "w", {3, 2, 1})});
    g.add_output(add(g, OpKind::Transpose, "y", {c}, {{"perm", std::vector<std::int64_t>{2, 1, 0}}}));
    expect_inseparable(g, {"node 'conv' (Conv)", "on axis 2"});
  }
}

TEST_CASE("batch split: selection and reshaping along the batch axis are not separable",
          "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 4}));
  std::string node, fragment;
  SECTION("Gather of rows") {
    g.add_output(absorb(g, x, add(g, OpKind::Gather, "rows", {x, ints(g, "idx", {0})})));
    node = "node 'rows' (Gather)", fragment = "gathers along the batch axis 0";
    expect_inseparable(g, {node, fragment});
  }
  SECTION("Pad of rows") {
    g.add_output(absorb(g, x, add(g, OpKind::Pad, "padded", {x, ints(g, "pads", {1, 0, 0, 0})})));
    node = "node 'padded' (Pad)", fragment = "pads the batch axis 0";
    expect_inseparable(g, {node, fragment});
  }
  SECTION("Tile of rows") {
    g.add_output(absorb(g, x, add(g, OpKind::Tile, "tiled", {x, ints(g, "repeats", {2, 1})})));
    node = "node 'tiled' (Tile)", fragment = "repeats along the batch axis 0";
    expect_inseparable(g, {node, fragment});
  }
  SECTION("Split of rows") {
    NodeId split = g.add_node(OpKind::Split, "halves", {x}, {"h0", "h1"}, {{"axis", std::int64_t{0}}});
    g.add_output(absorb(g, x, g.node(split).outputs[0]));
    node = "node 'halves' (Split)", fragment = "splits along the batch axis 0";
    expect_inseparable(g, {node, fragment});
  }
  SECTION("LayerNormalization from axis 0") {
    g.add_output(add(g, OpKind::LayerNormalization, "ln", {x, g.add_constant("gamma", Tensor::scalar<float>(1.0f))},
                     {{"axis", std::int64_t{0}}}));
    node = "node 'ln' (LayerNormalization)", fragment = "include the batch axis 0";
    expect_inseparable(g, {node, fragment});
  }
  SECTION("ArgMax over rows") {
    ValueId best = add(g, OpKind::ArgMax, "argmax0", {x});
    g.add_output(absorb(g, x, add(g, OpKind::Cast, "best", {best}, {{"to", std::string("f32")}})));
    node = "node 'argmax0' (ArgMax)", fragment = "reduces over the batch axis 0";
    expect_inseparable(g, {node, fragment});
  }
  SECTION("MatMul contracting the batch (a Gram matrix)") {
    ValueId xt = add(g, OpKind::Transpose, "xt", {x});
    g.add_output(absorb(g, x, add(g, OpKind::MatMul, "gram", {xt, x})));
    node = "node 'gram' (MatMul)", fragment = "contracts the batch axis 1 of input 0 ('xt')";
    expect_inseparable(g, {node, fragment});
  }
  SECTION("Flatten at axis 0") {
    g.add_output(absorb(g, x, add(g, OpKind::Flatten, "flat0", {x}, {{"axis", std::int64_t{0}}})));
    node = "node 'flat0' (Flatten)", fragment = "flattens the batch axis 0";
    expect_inseparable(g, {node, fragment});
  }
}

TEST_CASE("batch split: graphs without inputs or outputs are not separable", "[unit][graph][batch_split]") {
  Graph none;
  none.add_output(zeros(none, "c", {2}));
  expect_inseparable(none, {"no inputs"});
  Graph silent;
  silent.add_input("x", f32({N, 2}));
  expect_inseparable(silent, {"no outputs"});
}

TEST_CASE("batch split: a GRU whose initial state is ConstantOfShape([2, N, 64]) is separable",
          "[unit][graph][batch_split]") {
  // As PyTorch exports nn.GRU(batch_first=True, bidirectional=True) called
  // without h0: the zeros are built from Shape(x)[0] with the batch on axis 1.
  Graph g;
  ValueId x = g.add_input("x", f32({N, T, 3}));
  ValueId xt = add(g, OpKind::Transpose, "xt", {x}, {{"perm", std::vector<std::int64_t>{1, 0, 2}}});
  ValueId h0 = add(g, OpKind::ConstantOfShape, "h0",
                   {shape_of(g, "h0_shape", {ints(g, "dirs", {2}), batch_size(g, x, "n"), ints(g, "hidden", {64})})});
  NodeId gru = bidirectional_gru(g, "gru", xt, 3, h0);
  g.add_output(add(g, OpKind::Transpose, "y", {g.node(gru).outputs[0]},
                   {{"perm", std::vector<std::int64_t>{2, 0, 1, 3}}}));
  g.add_output(add(g, OpKind::Transpose, "h_n", {g.node(gru).outputs[1]},
                   {{"perm", std::vector<std::int64_t>{1, 0, 2}}}));
  expect_separable(g);
  check_dims(type_of(g, "h0").shape, {2, N, 64});
  check_dims(type_of(g, "y").shape, {N, T, 2, 64});
}

TEST_CASE("batch split: a two-layer bidirectional GRU as PyTorch exports it is separable",
          "[unit][graph][batch_split]") {
  // h0 [4, N, 64] sliced per layer along axis 0; between the layers Y
  // [T, 2, N, 64] is transposed to [T, N, 2, 64] and reshaped to [T, N, 128]
  // with the batch on axis 1.
  Graph g;
  ValueId x = g.add_input("x", f32({N, T, 3}));
  ValueId xt = add(g, OpKind::Transpose, "xt", {x}, {{"perm", std::vector<std::int64_t>{1, 0, 2}}});
  ValueId h0_shape =
      shape_of(g, "h0_shape", {ints(g, "layers_dirs", {4}), batch_size(g, x, "n"), ints(g, "hidden", {64})});
  ValueId h0 = add(g, OpKind::ConstantOfShape, "h0", {h0_shape});
  ValueId axis0 = ints(g, "axis0", {0});
  ValueId h0_l0 = add(g, OpKind::Slice, "h0_l0", {h0, ints(g, "from0", {0}), ints(g, "to2", {2}), axis0});
  ValueId h0_l1 = add(g, OpKind::Slice, "h0_l1", {h0, ints(g, "from2", {2}), ints(g, "to4", {4}), axis0});
  NodeId gru0 = bidirectional_gru(g, "gru0", xt, 3, h0_l0);
  ValueId y0t = add(g, OpKind::Transpose, "y0t", {g.node(gru0).outputs[0]},
                    {{"perm", std::vector<std::int64_t>{0, 2, 1, 3}}});
  ValueId y0 = add(g, OpKind::Reshape, "y0", {y0t, ints(g, "keep_t_n", {0, 0, -1})});
  NodeId gru1 = bidirectional_gru(g, "gru1", y0, 128, h0_l1);
  g.add_output(add(g, OpKind::Transpose, "y", {g.node(gru1).outputs[0]},
                   {{"perm", std::vector<std::int64_t>{2, 0, 1, 3}}}));
  expect_separable(g);
  check_dims(type_of(g, "h0").shape, {4, N, 64});
  check_dims(type_of(g, "y0").shape, {T, N, 128});
}

TEST_CASE("batch split: Expand of a constant with the batch on axis 1 is separable", "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 3, 4}));
  ValueId bias_shape =
      shape_of(g, "bias_shape", {ints(g, "three", {3}), batch_size(g, x, "n"), ints(g, "four", {4})});
  ValueId bias = add(g, OpKind::Expand, "bias", {zeros(g, "row", {3, 1, 4}), bias_shape});
  ValueId bt = add(g, OpKind::Transpose, "bt", {bias}, {{"perm", std::vector<std::int64_t>{1, 0, 2}}});
  g.add_output(add(g, OpKind::Add, "y", {x, bt}));
  expect_separable(g);
  check_dims(type_of(g, "bias").shape, {3, N, 4});
}

TEST_CASE("batch split: ConstantOfShape or Expand with the batch on no single axis is not separable",
          "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 4}));
  ValueId n = batch_size(g, x, "n");
  std::string node, fragment;
  SECTION("ConstantOfShape sized by 2N") {
    ValueId twice = add(g, OpKind::Mul, "twice", {n, ints(g, "two", {2})});
    ValueId fill_shape = shape_of(g, "fill_shape", {twice, ints(g, "four", {4})});
    ValueId filled = add(g, OpKind::ConstantOfShape, "filled", {fill_shape});
    g.add_output(absorb(g, x, filled));
    node = "node 'filled' (ConstantOfShape)", fragment = "has the batch N on no axis";
    expect_inseparable(g, {node, fragment});
  }
  SECTION("ConstantOfShape of [N, N]") {
    ValueId square = add(g, OpKind::ConstantOfShape, "square", {shape_of(g, "square_shape", {n, n})});
    g.add_output(absorb(g, x, square));
    node = "node 'square' (ConstantOfShape)", fragment = "on several axes (0, 1)";
    expect_inseparable(g, {node, fragment});
  }
  SECTION("Expand of a constant to [3, N, N]") {
    ValueId grid = add(g, OpKind::Expand, "grid",
                       {zeros(g, "cell", {3, 1, 1}), shape_of(g, "grid_shape", {ints(g, "three", {3}), n, n})});
    g.add_output(absorb(g, x, grid));
    node = "node 'grid' (Expand)", fragment = "on several axes (1, 2)";
    expect_inseparable(g, {node, fragment});
  }
}

TEST_CASE("batch split: ConstantOfShape([2, N, 64]) transposed to a layout-1 GRU's [N, 2, 64] is separable",
          "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, T, 3}));
  ValueId h0 = add(g, OpKind::ConstantOfShape, "h0",
                   {shape_of(g, "h0_shape", {ints(g, "dirs", {2}), batch_size(g, x, "n"), ints(g, "hidden", {64})})});
  ValueId h0t = add(g, OpKind::Transpose, "h0t", {h0}, {{"perm", std::vector<std::int64_t>{1, 0, 2}}});
  NodeId gru = g.add_node(OpKind::GRU, "gru", {x, zeros(g, "W", {2, 192, 3}), zeros(g, "R", {2, 192, 64}), {}, {}, h0t},
                          {"gy", "gh"},
                          {{"hidden_size", std::int64_t{64}}, {"direction", std::string("bidirectional")},
                           {"layout", std::int64_t{1}}});
  g.add_output(g.node(gru).outputs[0]);
  g.add_output(g.node(gru).outputs[1]);
  expect_separable(g);
  check_dims(type_of(g, "gh").shape, {N, 2, 64});
}

TEST_CASE("batch split: a Reshape regrouping the dims after a batch on axis 1 is separable",
          "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, T, 64}));
  ValueId xt = add(g, OpKind::Transpose, "xt", {x}, {{"perm", std::vector<std::int64_t>{1, 0, 2}}});
  SECTION("by a constant shape [0, 0, 4, 16]") {
    add(g, OpKind::Reshape, "heads", {xt, ints(g, "target", {0, 0, 4, 16})});
    ValueId heads = *g.find_value("heads");
    g.add_output(add(g, OpKind::Transpose, "y", {heads}, {{"perm", std::vector<std::int64_t>{1, 0, 2, 3}}}));
    expect_separable(g);
    check_dims(type_of(g, "heads").shape, {T, N, 4, 16});
    check_dims(type_of(g, "y").shape, {N, T, 4, 16});
  }
  SECTION("by a constant shape [0, 0, 4, -1]") {
    add(g, OpKind::Reshape, "heads", {xt, ints(g, "target", {0, 0, 4, -1})});
    ValueId heads = *g.find_value("heads");
    g.add_output(add(g, OpKind::Transpose, "y", {heads}, {{"perm", std::vector<std::int64_t>{1, 0, 2, 3}}}));
    expect_separable(g);
    check_dims(type_of(g, "heads").shape, {T, N, 4, 16});
    check_dims(type_of(g, "y").shape, {N, T, 4, 16});
  }
  SECTION("by a batch-sized shape Shape(xt)[0:2] ++ [4, 16]") {
    ValueId lead = add(g, OpKind::Slice, "lead",
                       {add(g, OpKind::Shape, "xt_shape", {xt}), ints(g, "s0", {0}), ints(g, "e2", {2})});
    add(g, OpKind::Reshape, "heads", {xt, shape_of(g, "target", {lead, ints(g, "head_dims", {4, 16})})});
    ValueId heads = *g.find_value("heads");
    g.add_output(add(g, OpKind::Transpose, "y", {heads}, {{"perm", std::vector<std::int64_t>{1, 0, 2, 3}}}));
    expect_separable(g);
    check_dims(type_of(g, "heads").shape, {T, N, 4, 16});
    check_dims(type_of(g, "y").shape, {N, T, 4, 16});
  }
}

TEST_CASE("batch split: a Reshape of data batched on axis 2 keeping dims 0 to 2 is separable",
          "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 2, 3, 8}));
  ValueId xt = add(g, OpKind::Transpose, "xt", {x}, {{"perm", std::vector<std::int64_t>{1, 2, 0, 3}}});
  ValueId r = add(g, OpKind::Reshape, "r", {xt, ints(g, "target", {2, 3, -1, 2, 4})});
  g.add_output(add(g, OpKind::Transpose, "y", {r}, {{"perm", std::vector<std::int64_t>{2, 0, 1, 3, 4}}}));
  expect_separable(g);
  check_dims(type_of(g, "r").shape, {2, 3, N, 2, 4});
}

TEST_CASE("batch split: a Reshape of data batched on axis 1 that moves or merges the batch is not separable",
          "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, T, 64}));
  ValueId xt = add(g, OpKind::Transpose, "xt", {x}, {{"perm", std::vector<std::int64_t>{1, 0, 2}}});
  std::vector<std::string> fragments;
  SECTION("[T, N, 64] to [T, 2, 32N]: each half of a row holds half of the samples") {
    ValueId split_n = add(g, OpKind::Reshape, "split_n", {xt, ints(g, "target", {0, 2, -1})});
    g.add_output(absorb(g, x, split_n));
    fragments = {"node 'split_n' (Reshape)", "does not keep each sample's elements together on one axis"};
    expect_inseparable(g, fragments);
  }
  SECTION("[T, N, 64] to [N, T, 64]: a reshape, not a transpose") {
    ValueId sizes = add(g, OpKind::Shape, "xt_shape", {xt});
    ValueId t = add(g, OpKind::Gather, "t", {sizes, ints(g, "at0", {0})});
    ValueId n = add(g, OpKind::Gather, "n", {sizes, ints(g, "at1", {1})});
    ValueId swapped =
        add(g, OpKind::Reshape, "swapped", {xt, shape_of(g, "target", {n, t, ints(g, "width", {64})})});
    g.add_output(swapped);
    fragments = {"node 'swapped' (Reshape)", "does not keep each sample's elements together on one axis"};
    expect_inseparable(g, fragments);
  }
  SECTION("[T, N, 64] to [T * N * 64], then a sum over it") {
    ValueId flat = add(g, OpKind::Reshape, "flat", {xt, ints(g, "target", {-1})});
    g.add_output(absorb(g, x, flat));
    fragments = {"node 'flat_total' (ReduceSum)", "reduces over the batch axis 0"};
    expect_inseparable(g, fragments);
  }
  SECTION("[T, N, 64] to [T, 64, N]: the batch moved within the sample") {
    ValueId target = shape_of(g, "target", {ints(g, "keep_t", {0}), ints(g, "width", {64}), batch_size(g, x, "n")});
    ValueId moved = add(g, OpKind::Reshape, "moved", {xt, target});
    g.add_output(absorb(g, x, moved));
    fragments = {"node 'moved' (Reshape)", "does not keep each sample's elements together on one axis"};
    expect_inseparable(g, fragments);
  }
}


TEST_CASE("batch split: CumSum, Trilu and Hardmax off the batch axis are separable", "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 3, 3}));
  g.add_output(add(g, OpKind::CumSum, "running", {x, scalar(g, "axis2", -1)}, {{"reverse", std::int64_t{1}}}));
  g.add_output(add(g, OpKind::Trilu, "upper", {x, scalar(g, "k", 1)}));
  g.add_output(add(g, OpKind::Trilu, "lower", {x}, {{"upper", std::int64_t{0}}}));
  g.add_output(add(g, OpKind::Hardmax, "onehot", {x}));
  expect_separable(g);
}

TEST_CASE("batch split: CumSum, Trilu, Hardmax over the batch and Size of per-sample data are not separable",
          "[unit][graph][batch_split]") {
  Graph g;
  ValueId x = g.add_input("x", f32({N, 4}));
  SECTION("CumSum along the batch") {
    g.add_output(add(g, OpKind::CumSum, "running0", {x, scalar(g, "axis0", 0)}));
    expect_inseparable(g, {"node 'running0' (CumSum)", "sums along the batch axis 0"});
  }
  SECTION("CumSum along an axis known only at run time") {
    // The largest of {1}: a constant, but computed, so its value is unknown to the analysis.
    ValueId axis = add(g, OpKind::ReduceMax, "axis", {ints(g, "one", {1})}, {{"keepdims", std::int64_t{0}}});
    g.add_output(add(g, OpKind::CumSum, "running", {x, axis}));
    expect_inseparable(g, {"node 'running' (CumSum)", "input 1 ('axis')", "unknown at build time"});
  }
  SECTION("Trilu of a matrix whose rows are the batch") {
    g.add_output(add(g, OpKind::Trilu, "masked", {x}));
    expect_inseparable(g, {"node 'masked' (Trilu)", "include the batch axis 0"});
  }
  SECTION("Hardmax over the batch") {
    g.add_output(add(g, OpKind::Hardmax, "onehot0", {x}, {{"axis", std::int64_t{0}}}));
    expect_inseparable(g, {"node 'onehot0' (Hardmax)", "batch axis 0"});
  }
  SECTION("Size of per-sample data") {
    ValueId count = add(g, OpKind::Size, "count", {x});
    g.add_output(absorb(g, x, add(g, OpKind::Cast, "countf", {count}, {{"to", std::string("f32")}})));
    expect_inseparable(g, {"node 'count' (Size)", "no batch-split rule"});
  }
}
