// Tests of the fused elementwise spec: op arities and names, the
// well-formedness check, the text key, and the reference evaluator (indexing,
// broadcasting, row ranges, per-op values and NaN behaviour, the value
// canary), including agreement with the reference kernels op by op.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "canary/error.h"
#include "canary/tensor.h"
#include "jit/fused_kernel.h"
#include "kernels/reference.h"

using canary::jit::EwNode;
using canary::jit::EwOp;
using canary::jit::FusedArgs;
using canary::jit::FusedElementwiseSpec;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

// The bits of a float, to tell -0 from +0.
std::uint32_t bits(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// A node reading kernel input k.
EwNode input(std::uint16_t k) { return EwNode{EwOp::Input, 0, 0, k, 0.0f, 0.0f}; }
// A node applying op to earlier nodes a (and b).
EwNode op(EwOp o, std::uint16_t a, std::uint16_t b = 0, float imm0 = 0.0f, float imm1 = 0.0f) {
  return EwNode{o, a, b, 0, imm0, imm1};
}

// A spec whose single output is node `unary` applied to input 0.
FusedElementwiseSpec unary_spec(EwOp o, float imm0 = 0.0f, float imm1 = 0.0f) {
  FusedElementwiseSpec s;
  s.nodes = {input(0), op(o, 0, 0, imm0, imm1)};
  s.num_inputs = 1;
  s.inner_broadcast = {false};
  s.outputs = {1};
  return s;
}

// Evaluates a one-input spec over a contiguous [1, 1, n] space.
std::vector<float> evaluate_unary(const FusedElementwiseSpec& s, const std::vector<float>& x) {
  std::vector<float> y(x.size());
  const float* in[] = {x.data()};
  float* out[] = {y.data()};
  const std::int64_t strides[] = {0, 0};
  FusedArgs args;
  args.inputs = in;
  args.outputs = out;
  args.strides = strides;
  args.dims[2] = static_cast<std::int64_t>(x.size());
  args.row_end = 1;
  canary::jit::evaluate_fused_reference(s, args);
  return y;
}

// True when a and b are the same float (NaN equals NaN, -0 differs from +0).
bool same_value(float a, float b) { return (std::isnan(a) && std::isnan(b)) || bits(a) == bits(b); }

}  // namespace

TEST_CASE("ew op arity and names", "[unit][jit]") {
  CHECK(canary::jit::ew_arity(EwOp::Input) == 0);
  CHECK(canary::jit::ew_arity(EwOp::Constant) == 0);
  CHECK(canary::jit::ew_arity(EwOp::Add) == 2);
  CHECK(canary::jit::ew_arity(EwOp::Min) == 2);
  CHECK(canary::jit::ew_arity(EwOp::Clip) == 1);
  CHECK(canary::jit::ew_arity(EwOp::Gelu) == 1);
  CHECK(std::string(canary::jit::ew_op_name(EwOp::HardSigmoid)) == "hard_sigmoid");
  CHECK(std::string(canary::jit::ew_op_name(EwOp::Exp)) == "exp");
  CHECK(canary::jit::ew_is_transcendental(EwOp::Softplus));
  CHECK_FALSE(canary::jit::ew_is_transcendental(EwOp::Sqrt));
}

TEST_CASE("fused spec key is stable text that tells specs apart", "[unit][jit]") {
  FusedElementwiseSpec s = unary_spec(EwOp::Clip, 0.0f, 6.0f);
  CHECK(s.key() == "ew in=1 bc=0 math=exact nf=0 dims=sym out=%1 : %0=input(0) %1=clip(%0,0,6)");
  FusedElementwiseSpec t = s;
  CHECK(t.key() == s.key());
  t.nodes[1].imm1 = 6.5f;
  CHECK(t.key() != s.key());
  t = s;
  t.exact_dims = std::array<std::int64_t, 3>{2, 3, 17};
  CHECK(t.key().find("dims=2x3x17") != std::string::npos);
  t = s;
  t.inner_broadcast = {true};
  CHECK(t.key().find("bc=1") != std::string::npos);
  t = s;
  t.check_non_finite = true;
  t.math = canary::jit::MathMode::Fast;
  CHECK(t.key().find("math=fast nf=1") != std::string::npos);
  // -0 and +0 constants are different kernels.
  FusedElementwiseSpec c = unary_spec(EwOp::Add);
  c.nodes = {input(0), EwNode{EwOp::Constant, 0, 0, 0, -0.0f, 0.0f}, op(EwOp::Add, 0, 1)};
  c.outputs = {2};
  FusedElementwiseSpec d = c;
  d.nodes[1].imm0 = 0.0f;
  CHECK(c.key() != d.key());
  CHECK(c.key().find("const(-0)") != std::string::npos);
}

TEST_CASE("malformed fused specs are reported, naming the node", "[unit][jit]") {
  FusedElementwiseSpec s = unary_spec(EwOp::Neg);
  CHECK(canary::jit::check_fused_spec(s).empty());
  FusedElementwiseSpec forward = s;
  forward.nodes[1].a = 1;
  CHECK(canary::jit::check_fused_spec(forward).find("node 1 (neg): operand a = %1") != std::string::npos);
  FusedElementwiseSpec bad_input = s;
  bad_input.nodes[0].input = 3;
  CHECK(canary::jit::check_fused_spec(bad_input).find("input 3 out of range") != std::string::npos);
  FusedElementwiseSpec flags = s;
  flags.inner_broadcast = {};
  CHECK(canary::jit::check_fused_spec(flags).find("inner_broadcast has 0 flags") != std::string::npos);
  FusedElementwiseSpec out = s;
  out.outputs = {2};
  CHECK(canary::jit::check_fused_spec(out).find("output 0 names %2") != std::string::npos);
  FusedElementwiseSpec gelu = unary_spec(EwOp::Gelu, 2.0f);
  CHECK(canary::jit::check_fused_spec(gelu).find("gelu") != std::string::npos);
  FusedElementwiseSpec unknown = s;
  unknown.nodes[1].op = static_cast<EwOp>(200);
  CHECK(canary::jit::check_fused_spec(unknown).find("unknown op 200") != std::string::npos);
  FusedArgs args;
  CHECK_THROWS_AS(canary::jit::evaluate_fused_reference(forward, args), canary::Error);
}

TEST_CASE("reference evaluator indexes strided, broadcast and inner-broadcast inputs", "[unit][jit]") {
  // out[i0, i1, i2] = a[i0, i1, i2] * b[i1] + c[i0], over [2, 2, 3].
  FusedElementwiseSpec s;
  s.nodes = {input(0), input(1), op(EwOp::Mul, 0, 1), input(2), op(EwOp::Add, 2, 3)};
  s.num_inputs = 3;
  s.inner_broadcast = {false, true, true};
  s.outputs = {4, 2};
  // a is padded: rows of 3 live 4 apart, and i0 steps 8.
  const std::vector<float> a = {1, 2, 3, -1, 4, 5, 6, -1, 7, 8, 9, -1, 10, 11, 12, -1};
  const std::vector<float> b = {10, 100};
  const std::vector<float> c = {0.5f, 0.25f};
  const std::int64_t strides[] = {8, 4, 0, 1, 1, 0};
  std::vector<float> y(12, -7.0f), z(12, -7.0f);
  const float* in[] = {a.data(), b.data(), c.data()};
  float* out[] = {y.data(), z.data()};
  FusedArgs args;
  args.inputs = in;
  args.outputs = out;
  args.strides = strides;
  args.dims[0] = 2;
  args.dims[1] = 2;
  args.dims[2] = 3;
  args.row_begin = 1;  // rows 1..2 only: (i0, i1) = (0, 1) and (1, 0)
  args.row_end = 3;
  CHECK(canary::jit::evaluate_fused_reference(s, args) == 0);
  const std::vector<float> want_y = {-7, -7, -7, 400.5f, 500.5f, 600.5f, 70.25f, 80.25f, 90.25f, -7, -7, -7};
  const std::vector<float> want_z = {-7, -7, -7, 400, 500, 600, 70, 80, 90, -7, -7, -7};
  CHECK(y == want_y);
  CHECK(z == want_z);
}

TEST_CASE("reference evaluator bakes exact dims over the argument dims", "[unit][jit]") {
  FusedElementwiseSpec s = unary_spec(EwOp::Neg);
  s.exact_dims = std::array<std::int64_t, 3>{1, 1, 2};
  const std::vector<float> x = {1, 2, 3};
  std::vector<float> y = {9, 9, 9};
  const float* in[] = {x.data()};
  float* out[] = {y.data()};
  const std::int64_t strides[] = {0, 0};
  FusedArgs args;
  args.inputs = in;
  args.outputs = out;
  args.strides = strides;
  args.dims[2] = 3;  // ignored: the exact variant computes 2 elements
  args.row_end = 1;
  canary::jit::evaluate_fused_reference(s, args);
  CHECK(y == std::vector<float>{-1, -2, 9});
}

TEST_CASE("reference evaluator NaN, signed zero and rounding behaviour per op", "[unit][jit]") {
  const std::vector<float> x = {kNaN, -0.0f, 0.0f, -2.5f, 2.5f, 0.5f, -3.0f, 7.0f, kInf, -kInf};
  SECTION("relu keeps NaN and -0") {
    auto y = evaluate_unary(unary_spec(EwOp::Relu), x);
    CHECK(std::isnan(y[0]));
    CHECK(bits(y[1]) == bits(-0.0f));
    CHECK(y[3] == 0.0f);
    CHECK(y[7] == 7.0f);
    CHECK(y[9] == 0.0f);
  }
  SECTION("round is half to even, floor and ceil") {
    auto r = evaluate_unary(unary_spec(EwOp::Round), x);
    CHECK(r[3] == -2.0f);
    CHECK(r[4] == 2.0f);
    CHECK(bits(r[5]) == bits(0.0f));
    auto f = evaluate_unary(unary_spec(EwOp::Floor), x);
    CHECK(f[3] == -3.0f);
    CHECK(f[5] == 0.0f);
    auto c = evaluate_unary(unary_spec(EwOp::Ceil), x);
    CHECK(c[3] == -2.0f);
    CHECK(c[5] == 1.0f);
  }
  SECTION("clip passes NaN and gives high when low > high") {
    auto y = evaluate_unary(unary_spec(EwOp::Clip, -1.0f, 1.0f), x);
    CHECK(std::isnan(y[0]));
    CHECK(y[3] == -1.0f);
    CHECK(y[5] == 0.5f);
    CHECK(y[8] == 1.0f);
    auto inverted = evaluate_unary(unary_spec(EwOp::Clip, 2.0f, 1.0f), x);
    CHECK(inverted[3] == 1.0f);
    CHECK(inverted[7] == 1.0f);
  }
  SECTION("hard sigmoid maps NaN to 1 and saturates") {
    auto y = evaluate_unary(unary_spec(EwOp::HardSigmoid, 0.2f, 0.5f), x);
    CHECK(y[0] == 1.0f);
    CHECK(y[2] == 0.5f);
    CHECK(y[7] == 1.0f);
    CHECK(y[9] == 0.0f);
    CHECK(y[4] == 0.2f * 2.5f + 0.5f);
  }
  SECTION("leaky relu scales negatives only") {
    auto y = evaluate_unary(unary_spec(EwOp::LeakyRelu, 0.1f), x);
    CHECK(std::isnan(y[0]));
    CHECK(bits(y[1]) == bits(-0.0f));
    CHECK(y[6] == 0.1f * -3.0f);
    CHECK(y[7] == 7.0f);
  }
  SECTION("neg, abs, sqrt and reciprocal") {
    auto n = evaluate_unary(unary_spec(EwOp::Neg), x);
    CHECK(bits(n[2]) == bits(-0.0f));
    auto a = evaluate_unary(unary_spec(EwOp::Abs), x);
    CHECK(bits(a[1]) == bits(0.0f));
    auto s = evaluate_unary(unary_spec(EwOp::Sqrt), x);
    CHECK(std::isnan(s[6]));
    CHECK(bits(s[1]) == bits(-0.0f));
    auto r = evaluate_unary(unary_spec(EwOp::Reciprocal), x);
    CHECK(r[1] == -kInf);
    CHECK(r[5] == 2.0f);
  }
  SECTION("transcendentals at known points") {
    CHECK(evaluate_unary(unary_spec(EwOp::Softplus), {100.0f, 0.0f})[0] == 100.0f);
    CHECK(evaluate_unary(unary_spec(EwOp::Softplus), {0.0f})[0] == Approx(std::log(2.0f)));
    CHECK(evaluate_unary(unary_spec(EwOp::Sigmoid), {-200.0f})[0] == 0.0f);
    CHECK(evaluate_unary(unary_spec(EwOp::Sigmoid), {0.0f})[0] == 0.5f);
    CHECK(evaluate_unary(unary_spec(EwOp::Gelu, 0.0f), {1.0f})[0] == Approx(0.8413447f).epsilon(1e-6));
    CHECK(evaluate_unary(unary_spec(EwOp::Gelu, 1.0f), {1.0f})[0] == Approx(0.8411920f).epsilon(1e-6));
    CHECK(evaluate_unary(unary_spec(EwOp::Log), {0.0f})[0] == -kInf);
    CHECK(evaluate_unary(unary_spec(EwOp::Exp), {-kInf})[0] == 0.0f);
  }
}

TEST_CASE("reference evaluator max and min propagate NaN from either side", "[unit][jit]") {
  for (EwOp o : {EwOp::Max, EwOp::Min}) {
    FusedElementwiseSpec s;
    s.nodes = {input(0), input(1), op(o, 0, 1)};
    s.num_inputs = 2;
    s.inner_broadcast = {false, false};
    s.outputs = {2};
    const std::vector<float> a = {kNaN, 1.0f, 2.0f, 0.0f, -0.0f};
    const std::vector<float> b = {1.0f, kNaN, 3.0f, -0.0f, 0.0f};
    std::vector<float> y(5);
    const float* in[] = {a.data(), b.data()};
    float* out[] = {y.data()};
    const std::int64_t strides[] = {0, 0, 0, 0};
    FusedArgs args;
    args.inputs = in;
    args.outputs = out;
    args.strides = strides;
    args.dims[2] = 5;
    args.row_end = 1;
    canary::jit::evaluate_fused_reference(s, args);
    CHECK(std::isnan(y[0]));
    CHECK(std::isnan(y[1]));
    CHECK(y[2] == (o == EwOp::Max ? 3.0f : 2.0f));
    // Equal operands give the first one, as the reference kernels do.
    CHECK(bits(y[3]) == bits(0.0f));
    CHECK(bits(y[4]) == bits(-0.0f));
  }
}

TEST_CASE("reference evaluator value canary reports non-finite outputs only when asked", "[unit][jit]") {
  FusedElementwiseSpec s = unary_spec(EwOp::Reciprocal);
  const std::vector<float> finite = {1.0f, 2.0f, 4.0f};
  const std::vector<float> has_zero = {1.0f, 0.0f, 4.0f};
  auto run = [&](const std::vector<float>& x) {
    std::vector<float> y(x.size());
    const float* in[] = {x.data()};
    float* out[] = {y.data()};
    const std::int64_t strides[] = {0, 0};
    FusedArgs args;
    args.inputs = in;
    args.outputs = out;
    args.strides = strides;
    args.dims[2] = 3;
    args.row_end = 1;
    return canary::jit::evaluate_fused_reference(s, args);
  };
  CHECK(run(has_zero) == 0);
  s.check_non_finite = true;
  CHECK(run(has_zero) == 1);
  CHECK(run(finite) == 0);
}

TEST_CASE("reference evaluator agrees with the reference kernels op by op", "[unit][jit]") {
  using canary::Tensor;
  namespace k = canary::kernels;
  const std::vector<float> xs = {kNaN, -kInf, kInf, -0.0f, 0.0f, 1e-40f, -1e-40f, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f,
                                 3.0f, -7.25f, 20.0f, -20.0f, 88.0f, -100.0f, 1e30f, -3e38f};
  const Tensor x = Tensor::from_vector(xs, {static_cast<std::int64_t>(xs.size())});
  struct Case {
    FusedElementwiseSpec spec;
    Tensor expected;
  };
  std::vector<Case> cases;
  auto add = [&](FusedElementwiseSpec s, auto&& kernel) {
    Tensor y;
    kernel(y);
    cases.push_back({std::move(s), std::move(y)});
  };
  const std::pair<EwOp, k::UnaryOp> unaries[] = {
      {EwOp::Neg, k::UnaryOp::Neg},   {EwOp::Abs, k::UnaryOp::Abs},         {EwOp::Exp, k::UnaryOp::Exp},
      {EwOp::Log, k::UnaryOp::Log},   {EwOp::Sqrt, k::UnaryOp::Sqrt},       {EwOp::Tanh, k::UnaryOp::Tanh},
      {EwOp::Relu, k::UnaryOp::Relu}, {EwOp::Sigmoid, k::UnaryOp::Sigmoid}, {EwOp::Erf, k::UnaryOp::Erf}};
  for (auto [e, u] : unaries) add(unary_spec(e), [&](Tensor& y) { k::unary(u, x, y); });
  add(unary_spec(EwOp::Gelu, 0.0f), [&](Tensor& y) { k::unary(k::UnaryOp::Gelu, x, y); });
  add(unary_spec(EwOp::Gelu, 1.0f), [&](Tensor& y) { k::unary(k::UnaryOp::GeluTanh, x, y); });
  const std::pair<EwOp, k::UnaryOp> maths[] = {{EwOp::Reciprocal, k::UnaryOp::Reciprocal},
                                               {EwOp::Floor, k::UnaryOp::Floor},
                                               {EwOp::Ceil, k::UnaryOp::Ceil},
                                               {EwOp::Round, k::UnaryOp::Round},
                                               {EwOp::Softplus, k::UnaryOp::Softplus}};
  for (auto [e, m] : maths) add(unary_spec(e), [&](Tensor& y) { k::unary(m, x, y); });
  add(unary_spec(EwOp::LeakyRelu, 0.01f), [&](Tensor& y) { k::unary(k::UnaryOp::LeakyRelu, x, y, {0.01f}); });
  add(unary_spec(EwOp::HardSigmoid, 0.2f, 0.5f),
      [&](Tensor& y) { k::unary(k::UnaryOp::HardSigmoid, x, y, {0.2f, 0.5f}); });
  add(unary_spec(EwOp::HardSwish, static_cast<float>(1.0 / 6.0), 0.5f),
      [&](Tensor& y) { k::unary(k::UnaryOp::HardSwish, x, y); });
  const Tensor lo = Tensor::scalar(-1.5f), hi = Tensor::scalar(2.0f);
  add(unary_spec(EwOp::Clip, -1.5f, 2.0f), [&](Tensor& y) { k::clip(x, &lo, &hi, y); });
  for (const Case& c : cases) {
    const std::vector<float> got = evaluate_unary(c.spec, xs);
    for (std::size_t i = 0; i < xs.size(); ++i) {
      INFO(c.spec.key() << " at x = " << xs[i]);
      CHECK(same_value(got[i], c.expected.data<float>()[i]));
    }
  }
}
