// The graph optimizer's passes on graphs written in the text format: what each
// rewrites and what it must leave alone, levels, the pass report, names of
// graph outputs, subgraph captures and a second run finding nothing to do.
// (tests/runtime/test_graph_optimizer.cpp runs optimized models against the
// fp64 reference.)
#include <catch2/catch.hpp>

#include <cmath>

#include "graph/op_registry.h"
#include "graph/passes/optimizer.h"
#include "graph/text_format.h"

using namespace canary;
using namespace canary::graph;

namespace {

OptimizeResult optimize(const std::string& text, OptimizationLevel level = OptimizationLevel::All,
                        ConstantEvaluator evaluate = {}) {
  std::shared_ptr<Graph> g = parse_graph(text, "<test>");
  OptimizerOptions options;
  options.level = level;
  options.evaluate = std::move(evaluate);
  return optimize_graph(*g, options);
}

// How many nodes of `op` the graph has.
int count(const Graph& g, OpKind op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op == op;
  return n;
}

const PassRecord& record(const OptimizeResult& r, const std::string& pass) {
  for (const PassRecord& p : r.passes)
    if (p.pass == pass) return p;
  FAIL("no record of pass " << pass);
  return r.passes.front();
}

const Tensor& constant_input(const Graph& g, const Node& node, int i) {
  const ValueInfo& v = g.value(node.inputs.at(i));
  REQUIRE(v.constant);
  return *v.constant;
}

const Node& only_node(const Graph& g, OpKind op) {
  for (const Node& node : g.nodes())
    if (node.op == op) return node;
  FAIL("no " << op_name(op) << " node");
  return g.nodes().front();
}

const char* kConvBn = R"(canary v1
graph main(x: f32[N, 2, 8]) -> (y) {
  const w: f32[3, 2, 1] = [1, 2, 3, 4, 5, 6]
  const b: f32[3] = [0.5, -1, 2]
  const scale: f32[3] = [2, 0.5, -1]
  const shift: f32[3] = [1, 0, 3]
  const mean: f32[3] = [0.25, 1, -2]
  const var: f32[3] = [3, 0.25, 1]
  c = Conv(x, w, b) "conv1"
  n = BatchNormalization(c, scale, shift, mean, var) {epsilon = 0.001} "bn1"
  y = Relu(n)
}
)";

}  // namespace

TEST_CASE("graph passes: BatchNormalization folds into the Conv before it", "[unit][graph_passes]") {
  OptimizeResult r = optimize(kConvBn);
  const Graph& g = *r.graph;
  CHECK(count(g, OpKind::BatchNormalization) == 0);
  CHECK(count(g, OpKind::Conv) == 1);
  const Node& conv = only_node(g, OpKind::Conv);
  const Tensor& w = constant_input(g, conv, 1);
  const Tensor& b = constant_input(g, conv, 2);
  // Channel 1: s = 0.5 / sqrt(0.25 + 0.001), t = 0 - 1 * s.
  const double s1 = 0.5 / std::sqrt(0.251);
  CHECK(w.data<float>()[2] == static_cast<float>(3 * s1));
  CHECK(w.data<float>()[3] == static_cast<float>(4 * s1));
  CHECK(b.data<float>()[1] == static_cast<float>(-1 * s1 + (0 - 1 * s1)));
  // The original weights are no longer read, so they are gone.
  CHECK(!g.find_value("w"));
  CHECK(record(r, "fold_batch_norm").changes == 1);
  CHECK(record(r, "fold_batch_norm").details.at(0) == "'bn1' folded into 'conv1'");
  CHECK(g.value(g.outputs()[0]).name == "y");
}

TEST_CASE("graph passes: level basic leaves BatchNormalization; off is not a pass level", "[unit][graph_passes]") {
  OptimizeResult basic = optimize(kConvBn, OptimizationLevel::Basic);
  CHECK(count(*basic.graph, OpKind::BatchNormalization) == 1);
  for (const PassRecord& p : basic.passes) CHECK(p.pass != "fold_batch_norm");
  OptimizeResult off = optimize(kConvBn, OptimizationLevel::Off);
  CHECK(off.passes.empty());
  CHECK(count(*off.graph, OpKind::BatchNormalization) == 1);
}

TEST_CASE("graph passes: a BatchNormalization whose Conv result has another reader becomes a multiply-add",
          "[unit][graph_passes]") {
  const char* text = R"(canary v1
graph main(x: f32[N, 2, 8]) -> (y, c) {
  const w: f32[3, 2, 1] = [1, 2, 3, 4, 5, 6]
  const s: f32[3] = [2, 0.5, -1]
  const t: f32[3] = [1, 0, 3]
  const m: f32[3] = [0.25, 1, -2]
  const v: f32[3] = [3, 0.25, 1]
  c = Conv(x, w)
  y = BatchNormalization(c, s, t, m, v) "bn"
}
)";
  OptimizeResult r = optimize(text);
  const Graph& g = *r.graph;
  CHECK(count(g, OpKind::BatchNormalization) == 0);
  CHECK(count(g, OpKind::Mul) == 1);
  CHECK(count(g, OpKind::Add) == 1);
  // The graph output keeps its name and type.
  REQUIRE(g.find_value("y"));
  CHECK(g.value(*g.find_value("y")).type.to_string() == "f32[N, 3, 8]");
  // The per-channel constants broadcast over the length: [3, 1], which
  // channels_last then carries into [N, T, C] as [3] vectors.
  CHECK(constant_input(g, only_node(g, OpKind::Mul), 1).shape() == Shape{3});
  CHECK(record(r, "channels_last").changes == 3);
  CHECK(record(r, "fold_batch_norm").details.at(0) == "'bn' as a per-channel multiply-add");
}

TEST_CASE("graph passes: BatchNormalization after a Gemm scales its columns", "[unit][graph_passes]") {
  const char* text = R"(canary v1
graph main(x: f32[N, 2]) -> (y) {
  const w: f32[3, 2] = [1, 2, 3, 4, 5, 6]
  const s: f32[3] = [2, 0.5, -1]
  const t: f32[3] = [1, 0, 3]
  const m: f32[3] = [0.25, 1, -2]
  const v: f32[3] = [3, 0.25, 1]
  h = Gemm(x, w) {transB = 1, alpha = 2.0} "fc"
  y = BatchNormalization(h, s, t, m, v)
}
)";
  OptimizeResult r = optimize(text);
  const Graph& g = *r.graph;
  CHECK(count(g, OpKind::BatchNormalization) == 0);
  const Node& gemm = only_node(g, OpKind::Gemm);
  const Tensor& w = constant_input(g, gemm, 1);
  const double s2 = -1 / std::sqrt(1 + 1e-5);
  CHECK(w.data<float>()[4] == static_cast<float>(5 * s2));  // row 2 of w (transB) is column 2 of the product
  CHECK(constant_input(g, gemm, 2).data<float>()[2] == static_cast<float>(3 - (-2) * s2));
}

TEST_CASE("graph passes: no-ops go, and a graph output keeps its name", "[unit][graph_passes]") {
  const char* text = R"(canary v1
graph main(x: f32[N, 4]) -> (out) {
  a = Relu(x)
  b = Identity(a)
  c = Dropout(b)
  d = Cast(c) {to = "f32"}
  const shape: i64[2] = [-1, 4]
  e = Reshape(d, shape)
  out = Identity(e)
}
)";
  OptimizeResult r = optimize(text, OptimizationLevel::Basic);
  const Graph& g = *r.graph;
  REQUIRE(g.nodes().size() == 1);
  CHECK(g.nodes()[0].op == OpKind::Relu);
  CHECK(g.value(g.outputs()[0]).name == "out");
  CHECK(record(r, "remove_no_ops").changes == 5);
}

TEST_CASE("graph passes: a Pad of zeros goes; a Pad that moves data stays, even when it keeps the shape",
          "[unit][graph_passes]") {
  const char* text = R"(canary v1
graph main(x: f32[N, 4, 6, 6]) -> (pooled, shifted, grown) {
  const zeros: i64[8] = [0, 0, 0, 0, 0, 0, 0, 0]
  const shift: i64[8] = [0, 0, 1, 0, 0, 0, -1, 0]
  const one: i64[8] = [0, 0, 1, 1, 0, 0, 1, 1]
  r = Relu(x)
  p = Pad(r, zeros)
  pooled = AveragePool(p) {kernel_shape = [2, 2], strides = [2, 2]}
  shifted = Pad(r, shift)
  grown = Pad(r, one)
}
)";
  OptimizeResult r = optimize(text, OptimizationLevel::Basic);
  const Graph& g = *r.graph;
  CHECK(record(r, "remove_no_ops").changes == 1);
  CHECK(count(g, OpKind::Pad) == 2);
  CHECK(g.value(*g.find_value("shifted")).type.to_string() == "f32[N, 4, 6, 6]");
  CHECK(only_node(g, OpKind::AveragePool).inputs[0] == *g.find_value("r"));
}

TEST_CASE("graph passes: an Identity from a graph input to a graph output stays", "[unit][graph_passes]") {
  OptimizeResult r = optimize("canary v1\ngraph main(x: f32[4]) -> (y) {\n  y = Identity(x)\n}\n");
  CHECK(r.graph->nodes().size() == 1);
  CHECK(record(r, "remove_no_ops").changes == 0);
}

TEST_CASE("graph passes: dead nodes and unread constants are dropped", "[unit][graph_passes]") {
  const char* text = R"(canary v1
graph main(x: f32[4]) -> (y) {
  const unused: f32[4] = [1, 2, 3, 4]
  dead = Add(x, unused) "dead_add"
  dead2 = Exp(dead)
  y = Relu(x)
}
)";
  OptimizeResult r = optimize(text, OptimizationLevel::Basic);
  CHECK(r.graph->nodes().size() == 1);
  CHECK(!r.graph->find_value("unused"));
  const PassRecord& dead = record(r, "eliminate_dead_nodes");
  CHECK(dead.changes == 2);
  CHECK(dead.nodes_before == 3);
  CHECK(dead.nodes_after == 1);
  CHECK(dead.details.at(0) == "'dead_add' (Add) is unused");
}

TEST_CASE("graph passes: common subexpressions merge; different attributes do not", "[unit][graph_passes]") {
  const char* text = R"(canary v1
graph main(x: f32[4, 6]) -> (y) {
  a = Softmax(x) {axis = 1}
  b = Softmax(x) {axis = 1}
  c = Softmax(x) {axis = 0}
  s = Add(a, b)
  y = Add(s, c)
}
)";
  OptimizeResult r = optimize(text, OptimizationLevel::Basic);
  CHECK(count(*r.graph, OpKind::Softmax) == 2);
  CHECK(record(r, "eliminate_common_subexpressions").changes == 1);
}

TEST_CASE("graph passes: values known from static shapes fold without an evaluator", "[unit][graph_passes]") {
  const char* text = R"(canary v1
graph main(x: f32[2, 3, 4]) -> (y) {
  s = Shape(x)
  const idx: i64[] = [0]
  n = Gather(s, idx)
  const minus1: i64[1] = [-1]
  const axes: i64[1] = [0]
  n1 = Unsqueeze(n, axes)
  shp = Concat(n1, minus1) {axis = 0}
  y = Reshape(x, shp)
}
)";
  OptimizeResult r = optimize(text, OptimizationLevel::Basic);
  const Graph& g = *r.graph;
  REQUIRE(g.nodes().size() == 1);
  const Node& reshape = g.nodes()[0];
  CHECK(reshape.op == OpKind::Reshape);
  const Tensor& shape = constant_input(g, reshape, 1);
  CHECK(std::vector<std::int64_t>(shape.data<std::int64_t>(), shape.data<std::int64_t>() + 2) ==
        std::vector<std::int64_t>{2, -1});
  CHECK(g.value(g.outputs()[0]).type.to_string() == "f32[2, 12]");
}

TEST_CASE("graph passes: constant folding runs nodes of constants through the evaluator", "[unit][graph_passes]") {
  const char* text = R"(canary v1
graph main(x: f32[N, 2]) -> (y) {
  const w: f32[3, 2] = [1, 2, 3, 4, 5, 6]
  wt = Transpose(w) {perm = [1, 0]} "transpose_w"
  y = MatMul(x, wt)
}
)";
  int calls = 0;
  // A stand-in evaluator for Transpose of a 2-D f32 constant.
  ConstantEvaluator transpose = [&](const Node& node, const std::vector<const Tensor*>& in)
      -> std::optional<std::vector<Tensor>> {
    ++calls;
    if (node.op != OpKind::Transpose) return std::nullopt;
    const Tensor& t = *in.at(0);
    Tensor out = Tensor::empty(DType::F32, {t.dim(1), t.dim(0)});
    for (std::int64_t i = 0; i < t.dim(0); ++i)
      for (std::int64_t j = 0; j < t.dim(1); ++j) out.data<float>()[j * t.dim(0) + i] = t.data<float>()[i * t.dim(1) + j];
    return std::vector<Tensor>{out};
  };
  OptimizeResult r = optimize(text, OptimizationLevel::Basic, transpose);
  const Graph& g = *r.graph;
  REQUIRE(g.nodes().size() == 1);
  CHECK(calls == 1);  // MatMul reads an input, so it is never offered
  const Tensor& wt = constant_input(g, g.nodes()[0], 1);
  CHECK(wt.shape() == Shape{2, 3});
  CHECK(wt.data<float>()[1] == 3.0f);
  CHECK(record(r, "fold_constants").details.at(0) == "'transpose_w' (Transpose) computed at load");

  // An evaluator that declines leaves the node in place.
  OptimizeResult kept = optimize(text, OptimizationLevel::Basic, [](const Node&, const std::vector<const Tensor*>&) {
    return std::optional<std::vector<Tensor>>();
  });
  CHECK(kept.graph->nodes().size() == 2);
}

TEST_CASE("graph passes: MatMul by a constant matrix then a bias Add is one Gemm", "[unit][graph_passes]") {
  const char* text = R"(canary v1
graph main(x: f32[N, 2], z: f32[N, 2, 2]) -> (y, y3) {
  const w: f32[2, 3] = [1, 2, 3, 4, 5, 6]
  const b: f32[3] = [1, 2, 3]
  h = MatMul(x, w) "mm"
  y = Add(b, h) "bias"
  h3 = MatMul(z, w)
  y3 = Add(h3, b)
}
)";
  OptimizeResult r = optimize(text);
  const Graph& g = *r.graph;
  CHECK(count(g, OpKind::Gemm) == 1);
  CHECK(count(g, OpKind::MatMul) == 1);  // the 3-D one stays
  CHECK(g.value(g.outputs()[0]).name == "y");
  CHECK(g.value(g.outputs()[0]).type.to_string() == "f32[N, 3]");
  CHECK(record(r, "fuse_matmul_add").details.at(0) == "'mm' and 'bias' as one Gemm");
}

TEST_CASE("graph passes: subgraph captures follow the values they read", "[unit][graph_passes]") {
  const char* text = R"(canary v1
graph main(x: f32[4], n: i64[]) -> (last) {
  const bias: f32[4] = [1, 2, 3, 4]
  dead = Exp(x)
  b2 = Identity(bias)
  last = Loop(n, _, x) {
    body = graph step(i: i64[], c: bool[], h: f32[4]) -> (c, h2) captures (b = b2) {
      h2 = Add(h, b)
    }
  }
}
)";
  OptimizeResult r = optimize(text, OptimizationLevel::Basic);
  const Graph& g = *r.graph;
  REQUIRE(g.nodes().size() == 1);
  const Graph& body = *std::get<std::shared_ptr<Graph>>(g.nodes()[0].attrs.at("body"));
  REQUIRE(body.captures().size() == 1);
  CHECK(g.value(body.captures()[0].outer).name == "bias");
}

TEST_CASE("graph passes: a second run finds nothing to change", "[unit][graph_passes]") {
  OptimizeResult first = optimize(kConvBn);
  OptimizerOptions options;
  OptimizeResult second = optimize_graph(*first.graph, options);
  for (const PassRecord& p : second.passes) CHECK(p.changes == 0);
  CHECK(print_graph(*second.graph) == print_graph(*first.graph));
}

TEST_CASE("graph passes: level names parse", "[unit][graph_passes]") {
  CHECK(parse_optimization_level("basic") == OptimizationLevel::Basic);
  CHECK(parse_optimization_level("all") == OptimizationLevel::All);
  CHECK(parse_optimization_level("off") == OptimizationLevel::Off);
  CHECK(!parse_optimization_level("max"));
  CHECK(std::string(optimization_level_name(OptimizationLevel::Basic)) == "basic");
}

TEST_CASE("graph passes: a convolution chain runs channels-last with transposes only at its edges",
          "[unit][graph_passes]") {
  const char* text = R"(canary v1
graph main(x: f32[N, 3, 8, 8]) -> (y, side) {
  const w1: f32[4, 3, 1, 1] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
  const w2: f32[4, 4, 1, 1] = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
  const bias: f32[4, 1, 1] = [1, 2, 3, 4]
  const half: f32[] = [0.5]
  c1 = Conv(x, w1) "conv1"
  r1 = Relu(c1)
  p1 = MaxPool(r1) {kernel_shape = [2, 2], strides = [2, 2]}
  c2 = Conv(p1, w2) "conv2"
  s = Add(c2, p1)
  b = Add(s, bias)
  m = Mul(b, half)
  g = GlobalAveragePool(m)
  y = Flatten(g)
  side = Sigmoid(p1)
}
)";
  OptimizeResult r = optimize(text);
  const Graph& g = *r.graph;
  // 2 Conv, Relu, MaxPool, 2 Add, Mul, GlobalAveragePool, Sigmoid.
  CHECK(record(r, "channels_last").changes == 9);
  // One transpose in, one out after the mean, one out for the Sigmoid's graph output.
  CHECK(count(g, OpKind::Transpose) == 3);
  CHECK(count(g, OpKind::GlobalAveragePool) == 0);
  CHECK(count(g, OpKind::ReduceMean) == 1);
  for (const Node& n : g.nodes())
    if (n.op == OpKind::Conv || n.op == OpKind::MaxPool) CHECK(std::get<std::int64_t>(n.attrs.at("channels_last")) == 1);
  CHECK(g.value(*g.find_value("y")).type.to_string() == "f32[N, 4]");
  CHECK(g.value(*g.find_value("side")).type.to_string() == "f32[N, 4, 4, 4]");
  // The per-channel bias became a [C] vector that broadcasts over [N, H, W, C].
  CHECK(g.value(*g.find_value("bias_channels_last")).type.to_string() == "f32[4]");
}

TEST_CASE("graph passes: a squeeze-excitation scale broadcasts channels-last, with no transpose inside the block",
          "[unit][graph_passes]") {
  const char* block = R"(canary v1
graph main(x: f32[N, 3, 8, 8]) -> (y) {
  const w1: f32[4, 3, 1, 1] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
  const wr: f32[2, 4, 1, 1] = [1, 0, 0, 1, 0, 1, 1, 0]
  const we: f32[4, 2, 1, 1] = [1, 0, 0, 1, 1, 1, 0, 1]
  const wo: f32[4, 4, 1, 1] = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
  c1 = Conv(x, w1)
  g = Sigmoid(c1)
  act = Mul(c1, g)
  pool = GlobalAveragePool(act)
  red = Conv(pool, wr)
  r = Relu(red)
  exc = Conv(r, we)
  scale = Sigmoid(exc)
  scaled = Mul(scale, act)
  y = Conv(scaled, wo)
}
)";
  OptimizeResult r = optimize(block);
  const Graph& g = *r.graph;
  // 4 Conv, 2 Sigmoid, Relu, 2 Mul, the pool.
  CHECK(record(r, "channels_last").changes == 10);
  // x in, y out: the [N, 4, 1, 1] scale meets the map as [N, 1, 1, 4].
  CHECK(count(g, OpKind::Transpose) == 2);
  CHECK(g.value(*g.find_value("y")).type.to_string() == "f32[N, 4, 8, 8]");
}

TEST_CASE("graph passes: Pow by a constant 2 becomes Mul(x, x); other exponents stay", "[unit][graph_passes]") {
  const char* text = R"(canary v1
graph main(x: f32[N, 4]) -> (sq, sq_row, cube, grown) {
  const two: f32[] = [2]
  const two_row: f32[1, 1] = [2]
  const three: f32[] = [3]
  const two_up: f32[1, 1, 1] = [2]
  sq = Pow(x, two)
  sq_row = Pow(x, two_row)
  cube = Pow(x, three)
  grown = Pow(x, two_up)
}
)";
  OptimizeResult r = optimize(text, OptimizationLevel::Basic);
  const Graph& g = *r.graph;
  // The exponent 3 stays, and so does a 2 whose rank would grow x's.
  CHECK(record(r, "reduce_strength").changes == 2);
  CHECK(count(g, OpKind::Pow) == 2);
  CHECK(count(g, OpKind::Mul) == 2);
  for (const Node& n : g.nodes())
    if (n.op == OpKind::Mul) CHECK(n.inputs[0] == n.inputs[1]);
  CHECK(g.value(*g.find_value("grown")).type.to_string() == "f32[1, N, 4]");
  CHECK(g.value(*g.find_value("sq")).type.to_string() == "f32[N, 4]");
}

TEST_CASE("graph passes: a mean over H and W reads the channels-last result, with no transpose for [N, C]",
          "[unit][graph_passes]") {
  const char* text = R"(canary v1
graph main(x: f32[N, 3, 8, 8]) -> (flat, kept, rows) {
  const w: f32[4, 3, 1, 1] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
  c = Conv(x, w)
  r = Relu(c)
  flat = ReduceMean(r) {axes = [-1, -2], keepdims = 0}
  kept = ReduceMax(r) {axes = [2, 3]}
  rows = ReduceMean(r) {axes = [3], keepdims = 0}
}
)";
  OptimizeResult r = optimize(text);
  const Graph& g = *r.graph;
  // Conv, Relu, the mean and the max; the mean over W alone keeps the channels-first layout.
  CHECK(record(r, "channels_last").changes == 4);
  // x in; Relu's result back for the mean over W; the max's [N, 1, 1, C] back to [N, C, 1, 1].
  CHECK(count(g, OpKind::Transpose) == 3);
  CHECK(std::get<std::vector<std::int64_t>>(only_node(g, OpKind::ReduceMax).attrs.at("axes")) ==
        std::vector<std::int64_t>{1, 2});
  CHECK(g.value(*g.find_value("flat")).type.to_string() == "f32[N, 4]");
  CHECK(g.value(*g.find_value("kept")).type.to_string() == "f32[N, 4, 1, 1]");
  CHECK(g.value(*g.find_value("rows")).type.to_string() == "f32[N, 4, 8]");
}

TEST_CASE("graph passes: a 1-D convolution chain runs channels-last up to its last time step",
          "[unit][graph_passes]") {
  // A TCN's residual blocks: a causal dilated Conv, Relu, a per-channel
  // shift, the residual Add; then the last time step and a pooled mean.
  const char* text = R"(canary v1
graph main(x: f32[N, 2, T]) -> (last, mean, window) {
  const w0: f32[3, 2, 1] = [1, 2, 3, 4, 5, 6]
  const w1: f32[3, 3, 2] = [1, 0, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 0, 0, 1, 1, 1, 0]
  const shift: f32[3, 1] = [1, 2, 3]
  const step: i64[] = [-1]
  const steps: i64[2] = [0, 2]
  h = Conv(x, w0)
  c = Conv(h, w1) {dilations = [2], pads = [2, 0]}
  r = Relu(c)
  s = Add(r, shift)
  res = Add(h, s)
  p = MaxPool(res) {kernel_shape = [2], strides = [2]}
  last = Gather(res, step) {axis = 2}
  mean = ReduceMean(p) {axes = [2]}
  window = Gather(p, steps) {axis = -1}
}
)";
  OptimizeResult r = optimize(text);
  const Graph& g = *r.graph;
  // 2 Conv, Relu, 2 Add, MaxPool, 2 Gather, the mean.
  CHECK(record(r, "channels_last").changes == 9);
  // x in; the mean's [N, 1, 3] and the window's [N, 2, 3] back; the last step is [N, C] in both layouts.
  CHECK(count(g, OpKind::Transpose) == 3);
  for (const Node& n : g.nodes()) {
    if (n.op == OpKind::Conv || n.op == OpKind::MaxPool) CHECK(std::get<std::int64_t>(n.attrs.at("channels_last")) == 1);
    if (n.op == OpKind::Gather) CHECK(std::get<std::int64_t>(n.attrs.at("axis")) == 1);
  }
  CHECK(g.value(*g.find_value("shift_channels_last")).type.to_string() == "f32[3]");
  CHECK(g.value(*g.find_value("last")).type.to_string() == "f32[N, 3]");
  CHECK(g.value(*g.find_value("mean")).type.to_string() == "f32[N, 3, 1]");
  CHECK(g.value(*g.find_value("window")).type.to_string() == "f32[N, 3, 2]");
}

TEST_CASE("graph passes: Conv's channels_last attribute is refused from ONNX files' point of view, kept in text",
          "[unit][graph_passes]") {
  const char* text = R"(canary v1
graph main(x: f32[2, 5, 5, 3]) -> (y) {
  const w: f32[4, 3, 3, 3] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108]
  y = Conv(x, w) {channels_last = 1, pads = [1, 1, 1, 1], strides = [2, 2]}
}
)";
  std::shared_ptr<Graph> g = parse_graph(text, "<test>");
  CHECK(g->value(*g->find_value("y")).type.to_string() == "f32[2, 3, 3, 4]");
  CHECK(op_schema(OpKind::Conv).attrs.back().internal);
}

TEST_CASE("graph passes: a zero Pad of spatial dims folds into the pads of the Convs that read it",
          "[unit][graph_passes]") {
  const char* text = R"(canary v1
graph main(x: f32[N, 2, T]) -> (y, z) {
  const w: f32[3, 2, 3] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18]
  const causal: i64[6] = [0, 0, 4, 0, 0, 0]
  const zero: f32[] = [0]
  p = Pad(x, causal, zero) "left_pad"
  y = Conv(p, w) {dilations = [2], pads = [0, 1]} "conv1"
  z = Conv(p, w) "conv2"
}
)";
  OptimizeResult r = optimize(text);
  const Graph& g = *r.graph;
  CHECK(count(g, OpKind::Pad) == 0);
  REQUIRE(count(g, OpKind::Conv) == 2);
  for (const Node& conv : g.nodes()) {
    if (conv.op != OpKind::Conv) continue;
    const auto& pads = std::get<std::vector<std::int64_t>>(conv.attrs.at("pads"));
    CHECK(pads == (conv.name == "conv1" ? std::vector<std::int64_t>{4, 1} : std::vector<std::int64_t>{4, 0}));
    CHECK(g.value(conv.inputs[0]).name == "x_to_channels_last");  // x itself, channels-last for both Convs
  }
  CHECK(g.value(g.outputs()[0]).type.to_string() == "f32[N, 3, T + 1]");  // 4 + 1 pads, span 5
  CHECK(record(r, "fold_pad_into_conv").changes == 1);
  CHECK(record(r, "fold_pad_into_conv").details.at(0) == "'left_pad' into the pads of 'conv1'");
  // Level basic keeps the Pad.
  CHECK(count(*optimize(text, OptimizationLevel::Basic).graph, OpKind::Pad) == 1);
}

TEST_CASE("graph passes: a Pad that is not a zero spatial widening read only by Convs stays", "[unit][graph_passes]") {
  // Pads left after optimizing a Pad line and its readers.
  const auto pads_left = [](const std::string& pad, const std::string& readers) {
    const std::string text =
        "canary v1\ngraph main(x: f32[N, 2, 8]) -> (y) {\n  const w: f32[1, 2, 1] = [1, 2]\n"
        "  const pads: i64[6] = [0, 0, 1, 0, 0, 2]\n  const batch_pads: i64[6] = [1, 0, 1, 0, 0, 2]\n"
        "  const crop: i64[6] = [0, 0, -1, 0, 0, 0]\n  const one: f32[] = [1]\n  " + pad + "\n" + readers + "}\n";
    return count(*optimize(text).graph, OpKind::Pad);
  };
  const std::string conv = "  y = Conv(p, w)\n";
  CHECK(pads_left("p = Pad(x, pads)", conv) == 0);  // the foldable case, for contrast
  CHECK(pads_left("p = Pad(x, batch_pads)", conv) == 1);
  CHECK(pads_left("p = Pad(x, crop)", conv) == 1);
  CHECK(pads_left("p = Pad(x, pads, one)", conv) == 1);
  CHECK(pads_left("p = Pad(x, pads) {mode = \"reflect\"}", conv) == 1);
  CHECK(pads_left("p = Pad(x, pads)", "  c = Conv(p, w)\n  q = Relu(p)\n  y = Add(c, q)\n") == 1);
  CHECK(pads_left("p = Pad(x, pads)", "  y = Conv(p, w) {auto_pad = \"SAME_UPPER\"}\n") == 1);
}

namespace {

// torch's LayerNorm as exported before opset 17: statistics over the last
// axis as primitives, then a per-feature scale and shift.
const char* kDecomposedLayerNorm = R"(canary v1
graph main(x: f32[N, T, 4]) -> (y) {
  const two: f32[] = [2]
  const eps: f32[] = [0.00001]
  const gamma: f32[4] = [1, 2, 0.5, -1]
  const beta: f32[4] = [0, 0.25, -1, 3]
  mean = ReduceMean(x) {axes = [-1]} "ln_mean"
  d = Sub(x, mean)
  sq = Pow(d, two)
  var = ReduceMean(sq) {axes = [-1]}
  ve = Add(var, eps)
  s = Sqrt(ve)
  n = Div(d, s)
  m = Mul(n, gamma)
  y = Add(m, beta) "ln_shift"
}
)";

}  // namespace

TEST_CASE("graph passes: a layer norm written as primitives is one LayerNormalization", "[unit][graph_passes]") {
  OptimizeResult r = optimize(kDecomposedLayerNorm);
  const Graph& g = *r.graph;
  CHECK(g.nodes().size() == 1);
  const Node& ln = only_node(g, OpKind::LayerNormalization);
  CHECK(ln.inputs.size() == 3);
  CHECK(std::get<double>(ln.attrs.at("epsilon")) == Approx(1e-5));
  CHECK(std::get<std::int64_t>(ln.attrs.at("axis")) == -1);
  CHECK(constant_input(g, ln, 1).element_as_double(1) == 2.0);
  CHECK(constant_input(g, ln, 2).element_as_double(3) == 3.0);
  CHECK(g.value(g.outputs()[0]).name == "y");
  CHECK(g.value(g.outputs()[0]).type.to_string() == "f32[N, T, 4]");
  // reduce_strength has made the square Mul(d, d) by then.
  CHECK(record(r, "fuse_layer_norm").details.at(0) == "'ln_mean' .. 'ln_shift' as one LayerNormalization");
  CHECK(record(optimize(kDecomposedLayerNorm, OptimizationLevel::Basic), "reduce_strength").changes == 1);
}

TEST_CASE("graph passes: a layer norm without scale gets ones, and one whose parts are read elsewhere stays",
          "[unit][graph_passes]") {
  const char* bare = R"(canary v1
graph main(x: f32[N, 3]) -> (y) {
  const eps: f32[] = [0.001]
  mean = ReduceMean(x) {axes = [1]}
  d = Sub(x, mean)
  sq = Mul(d, d)
  var = ReduceMean(sq) {axes = [1]}
  ve = Add(eps, var)
  s = Sqrt(ve)
  y = Div(d, s)
}
)";
  OptimizeResult r = optimize(bare);
  const Node& ln = only_node(*r.graph, OpKind::LayerNormalization);
  CHECK(ln.inputs.size() == 2);
  for (std::int64_t i = 0; i < 3; ++i) CHECK(constant_input(*r.graph, ln, 1).element_as_double(i) == 1.0);
  CHECK(std::get<double>(ln.attrs.at("epsilon")) == Approx(1e-3));
  // The centred value is also an output, the mean is over two axes, or the
  // statistics are not over the last axis: nothing changes.
  for (const std::string& change : {std::string("-> (y, d)"), std::string("{axes = [1]}|{axes = [0, 1]}"),
                                    std::string("{axes = [1]}|{axes = [0]}")}) {
    std::string text = bare;
    if (change[0] == '-') text.replace(text.find("-> (y)"), 6, change);
    else {
      const std::string from = change.substr(0, change.find('|')), to = change.substr(change.find('|') + 1);
      text.replace(text.find(from), from.size(), to);
    }
    INFO(text);
    OptimizeResult kept = optimize(text);
    CHECK(count(*kept.graph, OpKind::LayerNormalization) == 0);
    CHECK(record(kept, "fuse_layer_norm").changes == 0);
  }
}
