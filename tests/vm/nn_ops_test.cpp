// End-to-end runs of the conv- and recurrent-net ops through the compiler and
// interpreter (f32 and the fp64 reference mode): attribute decoding in the
// kernel table and hand-computed results.
#include <catch2/catch.hpp>

#include <cmath>

#include "canary/error.h"
#include "tests/vm/vm_graph_builders.h"

using namespace vmtest;
using canary::Error;
using canary::ErrorKind;
using Ints = std::vector<std::int64_t>;

namespace {

// Checks values within tol.
void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-6) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    CHECK(std::abs(got[i] - want[i]) <= tol);
  }
}

}  // namespace

TEST_CASE("vm: MaxPool → BatchNormalization → AveragePool → GlobalAveragePool", "[unit][vm][pool]") {
  const bool fp64 = GENERATE(false, true);
  Graph g;
  ValueId x = g.add_input("x", type_of(DType::F32, {1, 1, Dim::symbol("T")}));
  ValueId mp = op(g, OpKind::MaxPool, "mp", {x},
                  {{"kernel_shape", Ints{2}}, {"strides", Ints{2}}, {"ceil_mode", std::int64_t{1}}});
  ValueId scale = g.add_constant("scale", f32({2}, {1}));
  ValueId bias = g.add_constant("bias", f32({1}, {1}));
  ValueId mean = g.add_constant("mean", f32({3}, {1}));
  ValueId var = g.add_constant("var", f32({4}, {1}));
  ValueId bn = op(g, OpKind::BatchNormalization, "bn", {mp, scale, bias, mean, var}, {{"epsilon", 0.0}});
  ValueId ap = op(g, OpKind::AveragePool, "ap", {bn},
                  {{"kernel_shape", Ints{2}}, {"pads", Ints{1, 0}}, {"count_include_pad", std::int64_t{1}}});
  ValueId gap = op(g, OpKind::GlobalAveragePool, "gap", {ap});
  g.add_output(mp);
  g.add_output(bn);
  g.add_output(ap);
  g.add_output(gap);
  canary::vm::CompileOptions opts;
  opts.promote_f32_to_f64 = fp64;
  auto out = run_once(g, {f32({1, 3, 2, 5, 4}, {1, 1, 5})}, opts);
  // Windows {0,1} {2,3} {4}: 3 5 4; BN: 2 (x - 3) / 2 + 1 = x - 2.
  check_close(values(out[0]), {3, 5, 4});
  check_close(values(out[1]), {1, 3, 2});
  // Pad 1 at the start, k 2: {pad, 1} {1, 3} {3, 2} counting the pad: 0.5 2 2.5.
  check_close(values(out[2]), {0.5, 2, 2.5});
  check_close(values(out[3]), {5.0 / 3});
  CHECK(out[3].shape() == canary::Shape{1, 1, 1});
  CHECK(out[3].dtype() == (fp64 ? DType::F64 : DType::F32));  // the fp64 mode returns f64
}

TEST_CASE("vm: GRU with sequence_lens runs through the kernel table", "[unit][vm][gru]") {
  Graph g;
  ValueId x = g.add_input("x", type_of(DType::F32, {Dim::symbol("T"), 1, 1}));
  // Wz = Rz = 0 (z = 0.5), Wr = Rr = 0, Wh = 1, Rh = 0: h' = 0.5 tanh(x) + 0.5 h.
  ValueId w = g.add_constant("w", f32({0, 0, 1}, {1, 3, 1}));
  ValueId r = g.add_constant("r", f32({0, 0, 0}, {1, 3, 1}));
  g.add_node(OpKind::GRU, "gru", {x, w, r}, {"y", "yh"},
             {{"hidden_size", std::int64_t{1}}, {"activations", std::string("Sigmoid,Tanh")}});
  g.add_output(*g.find_value("y"));
  g.add_output(*g.find_value("yh"));
  auto out = run_once(g, {f32({1, -2}, {2, 1, 1})});
  const double h1 = 0.5 * std::tanh(1.0), h2 = 0.5 * std::tanh(-2.0) + 0.5 * h1;
  CHECK(out[0].shape() == canary::Shape{2, 1, 1, 1});
  check_close(values(out[0]), {h1, h2});
  check_close(values(out[1]), {h2});
}

TEST_CASE("vm: unsupported GRU activations are a model error at compile time", "[unit][vm][gru]") {
  Graph g;
  ValueId x = g.add_input("x", type_of(DType::F32, {2, 1, 1}));
  ValueId w = g.add_constant("w", f32({0, 0, 1}, {1, 3, 1}));
  ValueId r = g.add_constant("r", f32({0, 0, 0}, {1, 3, 1}));
  g.add_node(OpKind::GRU, "gru", {x, w, r}, {"y"},
             {{"hidden_size", std::int64_t{1}}, {"activations", std::string("Tanh,Tanh")}});
  g.add_output(*g.find_value("y"));
  try {
    run_once(g, {f32({1, -2}, {2, 1, 1})});
    FAIL("expected a canary::Error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Model);
    CHECK_THAT(std::string(e.what()), Catch::Contains("activation"));
  }
}
