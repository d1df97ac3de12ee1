// A Loop implementing a one-layer LSTM cell over a symbolic number of steps
// agrees with the LSTM op on the same weights.
#include <catch2/catch.hpp>

#include <cmath>

#include "vm_graph_builders.h"

using namespace vmtest;
namespace vm = canary::vm;

namespace {

constexpr std::int64_t kB = 2, kI = 3, kH = 4;

// Deterministic pseudo-random weights in [-0.5, 0.5].
std::vector<float> weights(std::size_t n, unsigned seed) {
  std::vector<float> v(n);
  unsigned s = seed;
  for (auto& x : v) {
    s = s * 1103515245u + 12345u;
    x = static_cast<float>((s >> 8) % 1000) / 1000.0f - 0.5f;
  }
  return v;
}

// Transposes a [rows, cols] row-major block.
std::vector<float> transpose(const std::vector<float>& m, std::int64_t rows, std::int64_t cols) {
  std::vector<float> t(m.size());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) t[static_cast<std::size_t>(c * rows + r)] = m[static_cast<std::size_t>(r * cols + c)];
  return t;
}

// Slice of gates [B, 4H] columns [k*H, (k+1)*H) inside the body.
ValueId gate(Graph& body, ValueId gates, int k, const std::string& name) {
  ValueId starts = body.add_constant(name + "_s", i64s({k * kH}));
  ValueId ends = body.add_constant(name + "_e", i64s({(k + 1) * kH}));
  ValueId axes = body.add_constant(name + "_a", i64s({1}));
  return op(body, OpKind::Slice, name, {gates, starts, ends, axes});
}

// One graph computing the LSTM op and the same recurrence as a Loop.
Graph lstm_graphs() {
  Graph g;
  Dim t = g.symbols().declare("T");
  ValueId x = g.add_input("X", type_of(DType::F32, {t, kB, kI}));
  const auto w = weights(4 * kH * kI, 1), r = weights(4 * kH * kH, 2), bias = weights(8 * kH, 3);
  ValueId W = g.add_constant("W", f32(w, {1, 4 * kH, kI}));
  ValueId R = g.add_constant("R", f32(r, {1, 4 * kH, kH}));
  ValueId Bv = g.add_constant("B", f32(bias, {1, 8 * kH}));
  auto lstm = g.add_node(OpKind::LSTM, "lstm", {x, W, R, Bv}, {"Y", "Y_h", "Y_c"}, {{"hidden_size", std::int64_t{kH}}});
  for (ValueId v : g.node(lstm).outputs) g.add_output(v);

  std::vector<float> bsum(4 * kH);
  for (std::int64_t i = 0; i < 4 * kH; ++i) bsum[static_cast<std::size_t>(i)] = bias[static_cast<std::size_t>(i)] + bias[static_cast<std::size_t>(i + 4 * kH)];
  ValueId Wt = g.add_constant("Wt", f32(transpose(w, 4 * kH, kI), {kI, 4 * kH}));
  ValueId Rt = g.add_constant("Rt", f32(transpose(r, 4 * kH, kH), {kH, 4 * kH}));
  ValueId bs = g.add_constant("bsum", f32(bsum, {4 * kH}));
  ValueId h0 = g.add_constant("h0", f32(std::vector<float>(kB * kH, 0.0f), {kB, kH}));
  ValueId zero_idx = g.add_constant("zero_idx", i64(0));
  ValueId steps = op(g, OpKind::Gather, "steps", {op(g, OpKind::Shape, "xshape", {x}), zero_idx});

  auto body = subgraph(g, "cell");
  ValueId iter = body->add_input("iter", type_of(DType::I64, {}));
  ValueId cond = body->add_input("cond", type_of(DType::Bool, {}));
  ValueId h = body->add_input("h", type_of(DType::F32, {kB, kH}));
  ValueId c = body->add_input("c", type_of(DType::F32, {kB, kH}));
  ValueId bx = body->add_capture("X", type_of(DType::F32, {t, kB, kI}), x);
  ValueId bw = body->add_capture("Wt", type_of(DType::F32, {kI, 4 * kH}), Wt);
  ValueId br = body->add_capture("Rt", type_of(DType::F32, {kH, 4 * kH}), Rt);
  ValueId bb = body->add_capture("bsum", type_of(DType::F32, {4 * kH}), bs);
  ValueId xt = op(*body, OpKind::Gather, "xt", {bx, iter});
  ValueId gates = op(*body, OpKind::Add, "gates",
                     {op(*body, OpKind::Add, "gx_gh", {op(*body, OpKind::MatMul, "gx", {xt, bw}), op(*body, OpKind::MatMul, "gh", {h, br})}), bb});
  ValueId gi = op(*body, OpKind::Sigmoid, "i", {gate(*body, gates, 0, "gi")});
  ValueId go = op(*body, OpKind::Sigmoid, "o", {gate(*body, gates, 1, "go")});
  ValueId gf = op(*body, OpKind::Sigmoid, "f", {gate(*body, gates, 2, "gf")});
  ValueId gc = op(*body, OpKind::Tanh, "cc", {gate(*body, gates, 3, "gc")});
  ValueId c2 = op(*body, OpKind::Add, "c2", {op(*body, OpKind::Mul, "fc", {gf, c}), op(*body, OpKind::Mul, "ic", {gi, gc})});
  ValueId h2 = op(*body, OpKind::Mul, "h2", {go, op(*body, OpKind::Tanh, "tc", {c2})});
  body->add_output(cond);
  body->add_output(h2);
  body->add_output(c2);
  body->add_output(op(*body, OpKind::Identity, "hs", {h2}));
  auto loop = g.add_node(OpKind::Loop, "rnn", {steps, ValueId::none(), h0, h0}, {"h_last", "c_last", "h_all"}, {{"body", body}});
  for (ValueId v : g.node(loop).outputs) g.add_output(v);
  canary::graph::infer_shapes(g);
  return g;
}

// Largest absolute difference.
double max_diff(const Tensor& a, const Tensor& b) {
  auto av = values(a), bv = values(b);
  REQUIRE(av.size() == bv.size());
  double d = 0;
  for (std::size_t i = 0; i < av.size(); ++i) d = std::max(d, std::abs(av[i] - bv[i]));
  return d;
}

}  // namespace

TEST_CASE("Loop implementing an LSTM cell over symbolic steps agrees with the LSTM op", "[unit][vm]") {
  Graph g = lstm_graphs();
  vm::Interpreter interp(vm::compile(g));
  for (std::int64_t steps : {5, 3, 1}) {
    std::vector<Tensor> in{f32(weights(static_cast<std::size_t>(steps * kB * kI), 7 + static_cast<unsigned>(steps)), {steps, kB, kI})};
    auto out = interp.run(in);
    REQUIRE(out.size() == 6);
    // Y [T, 1, B, H] vs stacked h [T, B, H]; Y_h/Y_c [1, B, H] vs [B, H].
    CHECK(out[0].numel() == steps * kB * kH);
    CHECK(out[5].shape() == canary::Shape{steps, kB, kH});
    CHECK(max_diff(out[0], out[5]) < 1e-5);
    CHECK(max_diff(out[1], out[3]) < 1e-5);
    CHECK(max_diff(out[2], out[4]) < 1e-5);
    // The state is not trivially zero.
    CHECK(std::abs(values(out[3])[0]) > 1e-3);
  }
}
