// The graph optimizer through the API: a Conv/BatchNorm/pool block, a Gemm
// head and a residual BatchNorm run at every level, interpreted and compiled,
// against the fp64 reference of the graph as imported. A pass may move an
// output by rounding only: at most 1e-6 of the output's scale more than the
// same tier moves without passes.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "canary/canary.h"
#include "jit_test_models.h"

using namespace canary;
using namespace canary::test;

namespace {

// Conv(3->8, 3x3) + BN + Relu, MaxPool, Conv(8->8, 3x3) + BN, a residual Add
// with a BN of the pooled map (lone: its input has two readers), Flatten,
// Gemm + BN: every fold and the multiply-add split; means and maxima over H
// and W that read the channels-last maps.
Model conv_bn_block(const Runtime& rt) {
  std::uint32_t seed = 100;
  const auto next = [&] { return seed++; };
  const auto bn_params = [&](ModelBuilder& b, const std::string& p, std::int64_t c) {
    b.constant(p + "_s", random_tensor({c}, next(), 0.5f, 1.5f));
    b.constant(p + "_b", random_tensor({c}, next(), -0.5f, 0.5f));
    b.constant(p + "_m", random_tensor({c}, next(), -0.5f, 0.5f));
    b.constant(p + "_v", random_tensor({c}, next(), 0.2f, 2.0f));
  };
  ModelBuilder b("block");
  b.input("x", DType::F32, {"N", 3, 12, 12});
  b.constant("w1", random_tensor({8, 3, 3, 3}, next(), -0.4f, 0.4f));
  b.constant("b1", random_tensor({8}, next(), -0.1f, 0.1f));
  b.constant("w2", random_tensor({8, 8, 3, 3}, next(), -0.2f, 0.2f));
  b.constant("wf", random_tensor({4, 8 * 4 * 4}, next(), -0.1f, 0.1f))
      .constant("starts", Tensor::from_vector<std::int64_t>({1, 1}, {2}))
      .constant("ends", Tensor::from_vector<std::int64_t>({5, 5}, {2}))
      .constant("axes", Tensor::from_vector<std::int64_t>({2, 3}, {2}));
  for (const char* p : {"bn1", "bn2", "bn3", "bnf"}) bn_params(b, p, std::string(p) == "bnf" ? 4 : 8);
  b.node("Conv", {"x", "w1", "b1"}, {"c1"}, {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}}, "conv1")
      .node("BatchNormalization", {"c1", "bn1_s", "bn1_b", "bn1_m", "bn1_v"}, {"n1"}, {}, "bn1")
      .node("Relu", {"n1"}, {"r1"})
      .node("MaxPool", {"r1"}, {"p1"}, {{"kernel_shape", std::vector<std::int64_t>{2, 2}},
                                         {"strides", std::vector<std::int64_t>{2, 2}}})
      .node("Conv", {"p1", "w2"}, {"c2"}, {}, "conv2")
      .node("BatchNormalization", {"c2", "bn2_s", "bn2_b", "bn2_m", "bn2_v"}, {"n2"}, {}, "bn2")
      .node("Slice", {"p1", "starts", "ends", "axes"}, {"p1c"})
      .node("BatchNormalization", {"p1c", "bn3_s", "bn3_b", "bn3_m", "bn3_v"}, {"n3"}, {}, "bn3")
      .node("Add", {"n2", "n3"}, {"res"})
      .node("Flatten", {"res"}, {"flat"})
      .node("Gemm", {"flat", "wf"}, {"logits"}, {{"transB", std::int64_t{1}}}, "fc")
      .node("BatchNormalization", {"logits", "bnf_s", "bnf_b", "bnf_m", "bnf_v"}, {"y"}, {}, "bnf")
      .node("Relu", {"p1"}, {"side"})
      .node("ReduceMean", {"c2"}, {"pooled"},
            {{"axes", std::vector<std::int64_t>{2, 3}}, {"keepdims", std::int64_t{0}}})
      .node("ReduceMax", {"r1"}, {"peak"}, {{"axes", std::vector<std::int64_t>{-2, -1}}})
      .output("y")
      .output("side")
      .output("pooled")
      .output("peak");
  return rt.build(b);
}

Options options_at(GraphOptimization level, bool jit) {
  Options o = jit ? jit_options(2) : interpreter_options();
  o.graph_optimization = level;
  return o;
}

// Largest |got - want| over the largest |want|: error relative to the output's scale.
double scaled_error(const Tensor& got, const Tensor& want) {
  double worst = 0, scale = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    worst = std::max(worst, std::abs(got.element_as_double(i) - want.element_as_double(i)));
    scale = std::max(scale, std::abs(want.element_as_double(i)));
  }
  return worst / std::max(scale, 1e-30);
}

int changes_of(const Model& m, const std::string& pass) {
  for (const GraphPassReport& p : m.graph_passes())
    if (p.pass == pass) return p.changes;
  return -1;
}

// Runs each call through the fp64 reference and the sessions without and
// with passes: on every named output the passes may add at most 1e-6 of the
// output's scale to the error the same tier has without them, and the shape
// stays the reference's. Repeated calls reach the compiled tier when the JIT
// is on.
void check_passes_move_no_output(Session& off, Session& all, Session& reference,
                                 const std::vector<NamedTensors>& calls, const std::vector<std::string>& outputs) {
  for (std::size_t c = 0; c < calls.size(); ++c) {
    INFO("call " << c);
    const NamedTensors want = reference.run(calls[c]), got_off = off.run(calls[c]), got_all = all.run(calls[c]);
    for (const std::string& out : outputs) {
      const double e_off = scaled_error(got_off.at(out), want.at(out));
      const double e_all = scaled_error(got_all.at(out), want.at(out));
      INFO(out << ": error without passes " << e_off << ", with passes " << e_all);
      CHECK(got_all.at(out).shape() == want.at(out).shape());
      CHECK(e_all <= e_off + 1e-6);
      CHECK(e_all < 1e-5);
    }
  }
}

}  // namespace

TEST_CASE("graph optimizer: folded BatchNorms move no output by more than 1e-6 of its scale against fp64",
          "[differential][graph_passes][api]") {
  for (bool jit : {false, true}) {
    Runtime off_rt(options_at(GraphOptimization::Off, jit));
    Runtime all_rt(options_at(GraphOptimization::All, jit));
    const Model off = conv_bn_block(off_rt);
    const Model all = conv_bn_block(all_rt);
    CHECK(off.graph_passes().empty());
    CHECK(changes_of(all, "fold_batch_norm") == 4);
    CHECK(all.to_text().find("BatchNormalization") == std::string::npos);
    Session s_off = off.session(), s_all = all.session(), reference = off.reference_session();
    std::vector<NamedTensors> calls;
    for (std::int64_t n : {2, 2, 2, 5, 1})
      calls.push_back({{"x", random_tensor({n, 3, 12, 12}, static_cast<std::uint32_t>(n) * 7 + 1)}});
    INFO("jit " << jit);
    check_passes_move_no_output(s_off, s_all, reference, calls, {"y", "side", "pooled", "peak"});
    if (jit) CHECK(s_all.stats().jit.compiled_entries >= 1);
  }
}

TEST_CASE("graph optimizer: basic folds constants through the interpreter and keeps every output bit",
          "[unit][graph_passes][api]") {
  ModelBuilder b("folding");
  b.input("x", DType::F32, {"N", 6})
      .constant("w", random_tensor({4, 6}, 3))
      .constant("two", Tensor::scalar<float>(2.0f))
      .node("Transpose", {"w"}, {"wt"}, {{"perm", std::vector<std::int64_t>{1, 0}}}, "transpose_w")
      .node("Mul", {"wt", "two"}, {"w2"}, {}, "double_w")
      .node("MatMul", {"x", "w2"}, {"h"})
      .node("Identity", {"h"}, {"y"})
      .output("y");
  Runtime off_rt(options_at(GraphOptimization::Off, false)), basic_rt(options_at(GraphOptimization::Basic, false));
  const Model off = off_rt.build(b), basic = basic_rt.build(b);
  CHECK(changes_of(basic, "fold_constants") == 2);
  CHECK(basic.to_text().find("Transpose") == std::string::npos);
  CHECK(basic.outputs().at(0).name == "y");
  const NamedTensors in{{"x", random_tensor({3, 6}, 4)}};
  CHECK(bit_identical(off.session().run(in).at("y"), basic.session().run(in).at("y")));
}

TEST_CASE("graph optimizer: an invalid level is an input error", "[unit][graph_passes][api]") {
  Options o;
  o.graph_optimization = static_cast<GraphOptimization>(7);
  CHECK_THROWS_AS(Runtime(o), Error);
}

TEST_CASE("graph optimizer: Pads folded into Convs (causal 1-D, same 2-D) give the outputs of the explicit Pads",
          "[differential][graph_passes][api]") {
  ModelBuilder b("padded");
  b.input("x", DType::F32, {"N", 3, "T"})
      .input("image", DType::F32, {"N", 2, 9, 9})
      .constant("w1", random_tensor({4, 3, 3}, 11, -0.5f, 0.5f))
      .constant("b1", random_tensor({4}, 12, -0.1f, 0.1f))
      .constant("w2", random_tensor({5, 2, 3, 3}, 13, -0.5f, 0.5f))
      .constant("causal", Tensor::from_vector<std::int64_t>({0, 0, 4, 0, 0, 0}, {6}))
      .constant("same", Tensor::from_vector<std::int64_t>({0, 0, 1, 1, 0, 0, 1, 1}, {8}))
      .node("Pad", {"x", "causal"}, {"xp"}, {}, "causal_pad")
      .node("Conv", {"xp", "w1", "b1"}, {"c1"}, {{"dilations", std::vector<std::int64_t>{2}}}, "dilated")
      .node("Relu", {"c1"}, {"y"})
      .node("Pad", {"image", "same"}, {"ip"}, {}, "same_pad")
      .node("Conv", {"ip", "w2"}, {"z"}, {}, "conv2d")
      .output("y")
      .output("z");
  for (bool jit : {false, true}) {
    Runtime off_rt(options_at(GraphOptimization::Off, jit)), all_rt(options_at(GraphOptimization::All, jit));
    const Model off = off_rt.build(b), all = all_rt.build(b);
    CHECK(changes_of(all, "fold_pad_into_conv") == 2);
    CHECK(all.to_text().find("Pad(") == std::string::npos);
    Session s_off = off.session(), s_all = all.session(), reference = off.reference_session();
    std::vector<NamedTensors> calls;
    for (std::int64_t t : {40, 40, 40, 97, 5})
      calls.push_back({{"x", random_tensor({3, 3, t}, static_cast<std::uint32_t>(t))},
                       {"image", random_tensor({3, 2, 9, 9}, static_cast<std::uint32_t>(t) + 1)}});
    INFO("jit " << jit);
    check_passes_move_no_output(s_off, s_all, reference, calls, {"y", "z"});
  }
}

TEST_CASE("graph optimizer: a layer norm written as primitives, fused, moves no output by more than 1e-6 of its scale",
          "[differential][graph_passes][api]") {
  // A projection, then torch's pre-opset-17 LayerNorm over 24 features.
  const std::int64_t features = 24;
  ModelBuilder b("layer_norm");
  b.input("x", DType::F32, {"N", "T", 16})
      .constant("w", random_tensor({16, features}, 11, -0.5f, 0.5f))
      .constant("two", Tensor::scalar<float>(2.0f))
      .constant("eps", Tensor::scalar<float>(1e-5f))
      .constant("gamma", random_tensor({features}, 12, 0.5f, 1.5f))
      .constant("beta", random_tensor({features}, 13, -0.5f, 0.5f))
      .node("MatMul", {"x", "w"}, {"h"})
      .node("ReduceMean", {"h"}, {"mean"}, {{"axes", std::vector<std::int64_t>{-1}}})
      .node("Sub", {"h", "mean"}, {"d"})
      .node("Pow", {"d", "two"}, {"sq"})
      .node("ReduceMean", {"sq"}, {"var"}, {{"axes", std::vector<std::int64_t>{-1}}})
      .node("Add", {"var", "eps"}, {"ve"})
      .node("Sqrt", {"ve"}, {"s"})
      .node("Div", {"d", "s"}, {"n"})
      .node("Mul", {"n", "gamma"}, {"m"})
      .node("Add", {"m", "beta"}, {"y"})
      .output("y");
  for (bool jit : {false, true}) {
    Runtime off_rt(options_at(GraphOptimization::Off, jit)), all_rt(options_at(GraphOptimization::All, jit));
    const Model off = off_rt.build(b), all = all_rt.build(b);
    CHECK(changes_of(all, "fuse_layer_norm") == 1);
    CHECK(all.to_text().find("ReduceMean") == std::string::npos);
    Session s_off = off.session(), s_all = all.session(), reference = off.reference_session();
    std::vector<NamedTensors> calls;
    for (std::int64_t t : {7, 7, 7, 3, 12})
      calls.push_back({{"x", random_tensor({2, t, 16}, static_cast<std::uint32_t>(t) + 40, -2.0f, 2.0f)}});
    INFO("jit " << jit);
    check_passes_move_no_output(s_off, s_all, reference, calls, {"y"});
    if (jit) CHECK(s_all.stats().jit.compiled_entries >= 1);
  }
}

TEST_CASE("graph optimizer: a squeeze-excitation block run channels-last moves no output by more than 1e-6 of its scale",
          "[differential][graph_passes][api]") {
  // Conv + SiLU, then EfficientNet's squeeze-excitation: a mean over H and W,
  // two 1x1 Convs and a Sigmoid whose [N, C, 1, 1] scale multiplies the map
  // (on either side of the Mul), then a 1x1 projection.
  ModelBuilder b("squeeze_excitation");
  b.input("x", DType::F32, {"N", 3, 10, 10})
      .constant("w1", random_tensor({8, 3, 3, 3}, 21, -0.4f, 0.4f))
      .constant("wr", random_tensor({2, 8, 1, 1}, 22, -0.5f, 0.5f))
      .constant("br", random_tensor({2}, 23, -0.1f, 0.1f))
      .constant("we", random_tensor({8, 2, 1, 1}, 24, -0.5f, 0.5f))
      .constant("be", random_tensor({8}, 25, -0.1f, 0.1f))
      .constant("wo", random_tensor({4, 8, 1, 1}, 26, -0.3f, 0.3f))
      .node("Conv", {"x", "w1"}, {"c1"}, {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}})
      .node("Sigmoid", {"c1"}, {"gate"})
      .node("Mul", {"c1", "gate"}, {"act"})
      .node("GlobalAveragePool", {"act"}, {"pool"})
      .node("Conv", {"pool", "wr", "br"}, {"red"})
      .node("Relu", {"red"}, {"r"})
      .node("Conv", {"r", "we", "be"}, {"exc"})
      .node("Sigmoid", {"exc"}, {"scale"})
      .node("Mul", {"scale", "act"}, {"scaled"})
      .node("Mul", {"scaled", "scale"}, {"twice"})
      .node("Conv", {"twice", "wo"}, {"y"})
      .output("y");
  for (bool jit : {false, true}) {
    Runtime off_rt(options_at(GraphOptimization::Off, jit)), all_rt(options_at(GraphOptimization::All, jit));
    const Model off = off_rt.build(b), all = all_rt.build(b);
    // Only the edges transpose: x in and y out.
    std::size_t transposes = 0;
    for (std::size_t at = all.to_text().find("Transpose("); at != std::string::npos;
         at = all.to_text().find("Transpose(", at + 1))
      ++transposes;
    CHECK(transposes == 2);
    Session s_off = off.session(), s_all = all.session(), reference = off.reference_session();
    std::vector<NamedTensors> calls;
    for (std::int64_t n : {2, 2, 2, 3, 1})
      calls.push_back({{"x", random_tensor({n, 3, 10, 10}, static_cast<std::uint32_t>(n) + 60, -2.0f, 2.0f)}});
    INFO("jit " << jit);
    check_passes_move_no_output(s_off, s_all, reference, calls, {"y"});
    if (jit) CHECK(s_all.stats().jit.compiled_entries >= 1);
  }
}

TEST_CASE("graph optimizer: a dilated TCN run channels-last moves no output by more than 1e-6 of its scale",
          "[differential][graph_passes][api]") {
  // Two residual blocks of causal dilated Conv1d + Relu over [N, C, T], then
  // the last time step through a Gemm head: the convs take the tiled path on
  // [N, T, C] activations, whole tiles written in place (T = 64, 128) or
  // scattered (T = 37, 100).
  ModelBuilder b("tcn");
  b.input("x", DType::F32, {"N", 4, "T"})
      .constant("w0", random_tensor({16, 4, 1}, 31, -0.5f, 0.5f))
      .constant("b0", random_tensor({16}, 32, -0.1f, 0.1f))
      .constant("w1", random_tensor({16, 16, 3}, 33, -0.3f, 0.3f))
      .constant("w2", random_tensor({16, 16, 3}, 34, -0.3f, 0.3f))
      .constant("b2", random_tensor({16}, 35, -0.1f, 0.1f))
      .constant("last", Tensor::from_vector<std::int64_t>({-1}, {}))
      .constant("wh", random_tensor({2, 16}, 36, -0.5f, 0.5f))
      .node("Conv", {"x", "w0", "b0"}, {"h0"})
      .node("Conv", {"h0", "w1"}, {"c1"}, {{"pads", std::vector<std::int64_t>{2, 0}}})
      .node("Relu", {"c1"}, {"r1"})
      .node("Add", {"h0", "r1"}, {"h1"})
      .node("Conv", {"h1", "w2", "b2"}, {"c2"},
            {{"pads", std::vector<std::int64_t>{4, 0}}, {"dilations", std::vector<std::int64_t>{2}}})
      .node("Relu", {"c2"}, {"r2"})
      .node("Add", {"h1", "r2"}, {"h2"})
      .node("Gather", {"h2", "last"}, {"step"}, {{"axis", std::int64_t{2}}})
      .node("Gemm", {"step", "wh"}, {"y"}, {{"transB", std::int64_t{1}}})
      .output("y");
  for (bool jit : {false, true}) {
    Runtime off_rt(options_at(GraphOptimization::Off, jit)), all_rt(options_at(GraphOptimization::All, jit));
    const Model off = off_rt.build(b), all = all_rt.build(b);
    CHECK(changes_of(all, "channels_last") == 8);
    Session s_off = off.session(), s_all = all.session(), reference = off.reference_session();
    std::vector<NamedTensors> calls;
    for (std::int64_t t : {64, 64, 64, 128, 37, 100})
      calls.push_back({{"x", random_tensor({3, 4, t}, static_cast<std::uint32_t>(t) + 70, -2.0f, 2.0f)}});
    INFO("jit " << jit);
    check_passes_move_no_output(s_off, s_all, reference, calls, {"y"});
    if (jit) CHECK(s_all.stats().jit.compiled_entries >= 1);
  }
}
