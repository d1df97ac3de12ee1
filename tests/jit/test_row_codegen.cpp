// Tests of the x86 row kernel generator (Sum, Mean, Max, Softmax and
// LayerNorm after a fused elementwise prologue) against the reference
// evaluator on every tier this CPU runs: random prologues, strides, broadcast
// inputs and row ranges, special values, hand-computed rows, the value
// canary, tails next to an unmapped page, and caching.
//
// Tolerances. Kernels accumulate in float, in several vector accumulators
// (a different order than the reference's double sums), and Softmax rounds
// v - max to float before exp. With u = 2^-24, n = d2, v the row values,
// max/mean/r = 1 / sqrt(var + eps) the row statistics and M = mean |v|:
//   Sum        |got - want| <= (n + 8) u sum |v|           (Mean: / n)
//   Max        exact (equal values; the sign of a zero max may differ)
//   Softmax    |got - want| <= (|v_j - max| + 2n + 16) u |want| + 1e-44
//   LayerNorm  |got - want| <= (n + 16) u (r |s_j| (|v_j - mean| + M) + |b_j| + |want|)
// Prologues with transcendentals add terms for their error, p u (|v| + 1/2)
// per value (see allowed_error). Largest errors measured over these tests
// (all tiers, both math modes): Sum 1.2e-5 sum |v| and Mean 1.1e-5 mean |v|
// (0.19 of the bound), Max exact (7.6e-6 relative after transcendentals), Softmax 5.6e-6
// relative (0.27 of the bound), LayerNorm 8.1e-6 absolute (0.05).
#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "canary/error.h"
#include "jit/fused_row.h"
#include "jit/x86/row_codegen.h"

namespace x86 = canary::jit::x86;
using canary::jit::EwNode;
using canary::jit::EwOp;
using canary::jit::FusedArgs;
using canary::jit::FusedElementwiseSpec;
using canary::jit::FusedRowSpec;
using canary::jit::MathMode;
using canary::jit::RowArgs;
using canary::jit::RowOp;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();
const double kUnit = std::ldexp(1.0, -24);
const std::int64_t kD2Values[] = {1, 3, 7, 8, 15, 16, 17, 33, 1000, 1027};
const RowOp kRowOps[] = {RowOp::Sum, RowOp::Mean, RowOp::Max, RowOp::Softmax, RowOp::LayerNorm};
// Written to every output element before a run: rows outside the range keep it.
const std::uint32_t kSentinelBits = 0x7fbadbadu;

std::uint32_t bits(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

float sentinel() {
  float v;
  std::memcpy(&v, &kSentinelBits, sizeof v);
  return v;
}

// The tiers this CPU can run.
std::vector<x86::Isa> host_tiers() {
  std::vector<x86::Isa> tiers;
  for (x86::Isa isa : {x86::Isa::Scalar, x86::Isa::Avx2, x86::Isa::Avx512})
    if (x86::host_supports(isa)) tiers.push_back(isa);
  return tiers;
}

EwNode input(std::uint16_t k) { return EwNode{EwOp::Input, 0, 0, k, 0.0f, 0.0f}; }
EwNode op(EwOp o, std::uint16_t a, std::uint16_t b = 0, float imm0 = 0.0f, float imm1 = 0.0f) {
  return EwNode{o, a, b, 0, imm0, imm1};
}

// True for the ops writing one value per row.
bool is_reduction(RowOp o) { return o == RowOp::Sum || o == RowOp::Mean || o == RowOp::Max; }

// A spec, its data and the rows one call computes.
struct RowCase {
  FusedRowSpec spec;
  std::int64_t d0 = 1, d1 = 1, d2 = 1;
  std::vector<std::int64_t> strides;  // stride0, stride1 per input
  std::int64_t row_begin = 0, row_end = 1;
  std::vector<std::vector<float>> inputs;
  std::vector<float> scale, bias;

  std::int64_t rows() const { return d0 * d1; }
  std::int64_t out_per_row() const { return is_reduction(spec.op) ? 1 : d2; }
  // Sizes the inputs so every read of the layout is in bounds, and scale/bias.
  void size_buffers() {
    const FusedElementwiseSpec& p = spec.prologue;
    inputs.resize(p.num_inputs);
    for (std::size_t k = 0; k < p.num_inputs; ++k) {
      const std::int64_t last = (d0 - 1) * strides[2 * k] + (d1 - 1) * strides[2 * k + 1];
      inputs[k].resize(static_cast<std::size_t>(last + (p.inner_broadcast[k] ? 1 : d2)));
    }
    scale.assign(static_cast<std::size_t>(d2), 1.0f);
    bias.assign(static_cast<std::size_t>(d2), 0.0f);
  }
};

// Runs fn (or the reference when fn is null) over the case's rows into a
// fresh output filled with the sentinel; returns the canary result.
std::uint32_t run(canary::jit::RowFn fn, const RowCase& c, std::vector<float>& out) {
  out.assign(static_cast<std::size_t>(c.rows() * c.out_per_row()), sentinel());
  std::vector<const float*> in;
  for (const auto& v : c.inputs) in.push_back(v.data());
  const bool exact = c.spec.prologue.exact_dims.has_value();
  RowArgs args;
  args.inputs = in.data();
  args.strides = c.strides.data();
  args.output = out.data();
  args.scale = c.spec.has_scale ? c.scale.data() : nullptr;
  args.bias = c.spec.has_bias ? c.bias.data() : nullptr;
  args.dims[0] = exact ? 999 : c.d0;  // exact variants must not read dims
  args.dims[1] = exact ? 999 : c.d1;
  args.dims[2] = exact ? 999 : c.d2;
  args.row_begin = c.row_begin;
  args.row_end = c.row_end;
  return fn ? fn(&args) : canary::jit::evaluate_row_reference(c.spec, args);
}

// The prologue's values for every row, dense [rows, d2].
std::vector<float> row_values(const RowCase& c) {
  FusedElementwiseSpec p = c.spec.prologue;
  p.exact_dims.reset();
  std::vector<float> values(static_cast<std::size_t>(c.rows() * c.d2));
  std::vector<const float*> in;
  for (const auto& v : c.inputs) in.push_back(v.data());
  float* out[] = {values.data()};
  FusedArgs args;
  args.inputs = in.data();
  args.outputs = out;
  args.strides = c.strides.data();
  args.dims[0] = c.d0;
  args.dims[1] = c.d1;
  args.dims[2] = c.d2;
  args.row_end = c.rows();
  canary::jit::evaluate_fused_reference(p, args);
  return values;
}

// Row statistics in double: sum |v|, max |v|, max (NaN skipped), mean, 1 / sqrt(var + eps).
struct RowStats {
  double sum_abs = 0, max_abs = 0, max = -INFINITY, mean = 0, inv_std = 0;
};

RowStats row_stats(const float* v, std::int64_t n, float epsilon) {
  RowStats s;
  double sum = 0, sq = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    s.sum_abs += std::fabs(static_cast<double>(v[j]));
    s.max_abs = std::max(s.max_abs, std::fabs(static_cast<double>(v[j])));
    s.max = std::max(s.max, static_cast<double>(v[j]));
    sum += v[j];
  }
  s.mean = sum / static_cast<double>(n);
  for (std::int64_t j = 0; j < n; ++j) sq += (v[j] - s.mean) * (v[j] - s.mean);
  s.inv_std = 1.0 / std::sqrt(sq / static_cast<double>(n) + epsilon);
  return s;
}

// The documented bound for element j of a row (see the file comment); p is
// the prologue's error in ulp (each value off by at most p u (|v| + 1/2)).
double allowed_error(const RowCase& c, const float* v, const RowStats& s, std::int64_t j, float want, double p) {
  const auto n = static_cast<double>(c.d2);
  const double w = std::fabs(static_cast<double>(want));
  const double vj = std::fabs(static_cast<double>(v[j]));
  switch (c.spec.op) {
    case RowOp::Sum: return ((n + 8) * s.sum_abs + p * (s.sum_abs + n / 2)) * kUnit;
    case RowOp::Mean: return ((n + 8) * s.sum_abs + p * (s.sum_abs + n / 2)) * kUnit / n;
    case RowOp::Max: return p * kUnit * (w + 0.5);
    case RowOp::Softmax: {
      const double m = std::fabs(s.max);
      const double argument = std::fabs(v[j] - s.max) + 2 * n + 16;
      return (argument + p * (vj + 3 * m + n / 2 + 2)) * kUnit * w + 1e-44;
    }
    case RowOp::LayerNorm: {
      const double scale = c.spec.has_scale ? std::fabs(c.scale[j]) : 1.0;
      const double bias = c.spec.has_bias ? std::fabs(c.bias[j]) : 0.0;
      const double dev = std::fabs(v[j] - s.mean);
      const double r = s.inv_std;
      const double rounding = (n + 16) * (r * scale * (dev + s.sum_abs / n) + bias + w);
      return (rounding + p * r * scale * (vj + s.max_abs + 1) * (1 + r * dev)) * kUnit;
    }
  }
  return 0;
}



// True when got matches want: both NaN, equal, or within `allowed` (finite).
bool matches(float got, float want, double allowed) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (got == want) return true;
  if (std::isinf(want) || std::isinf(got)) return false;
  const double diff = std::fabs(static_cast<double>(got) - want);
  return diff <= allowed;
}

// Compiles the case for isa, runs it and the reference, and checks every
// output element (rows outside the range keep the sentinel) and the result.
void check_against_reference(const RowCase& c, x86::Isa isa, double prologue_ulps) {
  x86::CodeCache cache(1 << 20);
  std::string error;
  const x86::CompiledRow k = x86::compile_row(c.spec, isa, cache, error);
  INFO("isa " << x86::isa_name(isa) << ", d = " << c.d0 << "x" << c.d1 << "x" << c.d2 << ", rows " << c.row_begin
              << ".." << c.row_end << ", spec: " << c.spec.key());
  REQUIRE(error.empty());
  REQUIRE(k.fn != nullptr);
  std::vector<float> want, got;
  const std::uint32_t want_flag = run(nullptr, c, want);
  const std::uint32_t got_flag = run(k.fn, c, got);
  CHECK(got_flag == want_flag);
  const std::vector<float> values = row_values(c);
  const std::int64_t per_row = c.out_per_row();
  for (std::int64_t row = 0; row < c.rows(); ++row) {
    const float* v = values.data() + row * c.d2;
    const RowStats s = row_stats(v, c.d2, c.spec.epsilon);
    const bool inside = row >= c.row_begin && row < c.row_end;
    for (std::int64_t j = 0; j < per_row; ++j) {
      const float g = got[row * per_row + j], w = want[row * per_row + j];
      const bool ok = inside ? matches(g, w, allowed_error(c, v, s, j, w, prologue_ulps)) : bits(g) == kSentinelBits;
      if (ok) continue;
      FAIL_CHECK("row " << row << " element " << j << ": got " << g << " (0x" << std::hex << bits(g) << "), want " << w
                        << " (0x" << bits(w) << ")");
      return;
    }
  }
}

// Random specs, layouts and data from one seeded generator.
class CaseMaker {
 public:
  explicit CaseMaker(unsigned seed) : rng_(seed) {}

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  // A prologue of 1..10 nodes over 1..4 inputs drawing from `ops`; its last node is the value.
  FusedElementwiseSpec prologue(const std::vector<EwOp>& ops) {
    FusedElementwiseSpec s;
    s.num_inputs = static_cast<std::uint16_t>(1 + pick(4));
    for (std::uint16_t k = 0; k < s.num_inputs; ++k) s.inner_broadcast.push_back(chance(0.3));
    const int total = 1 + pick(10);
    for (int i = 0; i < total; ++i) {
      if (i == 0 || chance(0.2)) s.nodes.push_back(input(static_cast<std::uint16_t>(pick(s.num_inputs))));
      else s.nodes.push_back(node(ops[static_cast<std::size_t>(pick(static_cast<int>(ops.size())))], i));
    }
    s.outputs = {static_cast<std::uint16_t>(total - 1)};
    s.check_non_finite = chance(0.5);
    return s;
  }

  // A case for the prologue and op: random d0/d1, strides (0 included), rows,
  // LayerNorm scale/bias, sometimes the exact-shape variant.
  RowCase layout(const FusedElementwiseSpec& p, RowOp o, std::int64_t d2) {
    RowCase c;
    c.spec.prologue = p;
    c.spec.op = o;
    c.spec.has_scale = o == RowOp::LayerNorm && chance(0.7);
    c.spec.has_bias = o == RowOp::LayerNorm && chance(0.7);
    c.d0 = 1 + pick(3);
    c.d1 = 1 + pick(3);
    c.d2 = d2;
    for (std::size_t k = 0; k < p.num_inputs; ++k) {
      const std::int64_t row = p.inner_broadcast[k] ? 1 : d2;
      const std::int64_t s1 = chance(0.25) ? 0 : row + pick(3);
      const std::int64_t s0 = chance(0.25) ? 0 : s1 * c.d1 + pick(5) + (s1 == 0 ? row : 0);
      c.strides.insert(c.strides.end(), {s0, s1});
    }
    c.row_begin = pick(static_cast<int>(c.rows()));
    c.row_end = c.row_begin + 1 + pick(static_cast<int>(c.rows() - c.row_begin));
    if (chance(0.3)) c.row_begin = 0, c.row_end = c.rows();
    if (chance(0.3)) c.spec.prologue.exact_dims = std::array<std::int64_t, 3>{c.d0, c.d1, c.d2};
    c.size_buffers();
    for (float& x : c.scale) x = uniform(-2.0f, 2.0f);
    for (float& x : c.bias) x = uniform(-1.0f, 1.0f);
    return c;
  }

  // Values in [lo, hi] with occasional NaN, Inf, zeros, denormals and ties
  // (no huge finite values: float partial sums would overflow where double's do not).
  float value(float lo, float hi, bool specials) {
    if (specials && chance(0.02)) {
      const float s[] = {kNaN, kInf, -kInf, 0.0f, -0.0f, 1e-40f, -1e-40f, 2.5f, -0.5f, 1.5f};
      return s[pick(10)];
    }
    return uniform(lo, hi);
  }

  void fill(RowCase& c, float lo, float hi, bool specials) {
    for (auto& v : c.inputs)
      for (float& x : v) x = value(lo, hi, specials);
  }

  float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng_); }

 private:
  // A random node with operands among nodes [0, at).
  EwNode node(EwOp o, int at) {
    const auto a = static_cast<std::uint16_t>(pick(at)), b = static_cast<std::uint16_t>(pick(at));
    const float imms[] = {0.0f, -0.0f, 0.5f, -1.5f, 2.0f, 0.2f, 1e-3f, 6.0f, -4.0f};
    return op(o, a, b, imms[pick(9)], imms[pick(9)]);
  }

  std::mt19937 rng_;
};

// Arithmetic ops whose values stay moderate (no division or reciprocal, which
// make huge values whose float partial sums overflow).
const std::vector<EwOp> kArithmeticOps = {EwOp::Add,  EwOp::Sub,   EwOp::Mul,       EwOp::Max,
                                          EwOp::Min,  EwOp::Neg,   EwOp::Abs,       EwOp::Sqrt,
                                          EwOp::Relu, EwOp::Floor, EwOp::Ceil,      EwOp::Round,
                                          EwOp::LeakyRelu, EwOp::HardSigmoid, EwOp::HardSwish, EwOp::Clip,
                                          EwOp::Constant};

}  // namespace

TEST_CASE("row ops over random arithmetic prologues match the reference on every tier", "[unit][jit][rowcodegen]") {
  CaseMaker make(20240611);
  for (x86::Isa isa : host_tiers()) {
    for (RowOp o : kRowOps) {
      for (int n = 0; n < 120; ++n) {
        RowCase c = make.layout(make.prologue(kArithmeticOps), o, kD2Values[n % 10]);
        make.fill(c, -4.0f, 4.0f, n % 4 == 3);
        check_against_reference(c, isa, 0.0);
      }
    }
  }
}

namespace {

// A prologue of transcendentals that keeps errors within a few ulp:
// transcendentals of inputs, then max/min/abs/neg/relu or a scaling by 2.
FusedElementwiseSpec transcendental_prologue(CaseMaker& make, MathMode math) {
  const EwOp any[] = {EwOp::Exp, EwOp::Log, EwOp::Tanh, EwOp::Sigmoid, EwOp::Erf, EwOp::Softplus, EwOp::Gelu};
  const EwOp combine[] = {EwOp::Max, EwOp::Min, EwOp::Abs, EwOp::Neg, EwOp::Relu, EwOp::Mul};
  FusedElementwiseSpec s;
  s.math = math;
  s.num_inputs = static_cast<std::uint16_t>(1 + make.pick(2));
  for (std::uint16_t k = 0; k < s.num_inputs; ++k) {
    s.inner_broadcast.push_back(make.chance(0.2));
    s.nodes.push_back(input(k));
  }
  s.nodes.push_back(EwNode{EwOp::Constant, 0, 0, 0, 2.0f, 0.0f});
  const auto first = static_cast<std::uint16_t>(s.nodes.size());
  for (int t = 1 + make.pick(2); t > 0; --t) {
    const EwOp o = any[make.pick(7)];
    const float mode = o == EwOp::Gelu ? static_cast<float>(make.pick(2)) : 0.0f;
    s.nodes.push_back(op(o, static_cast<std::uint16_t>(make.pick(s.num_inputs)), 0, mode));
  }
  const auto end = static_cast<std::uint16_t>(s.nodes.size());
  auto some = [&] { return static_cast<std::uint16_t>(first + make.pick(end - first)); };
  const EwOp c = combine[make.pick(6)];
  s.nodes.push_back(op(c, some(), c == EwOp::Mul ? s.num_inputs : some()));  // Mul scales by 2
  s.outputs = {end};
  s.check_non_finite = make.chance(0.5);
  return s;
}

}  // namespace

TEST_CASE("row ops over transcendental prologues match the reference within the bound", "[unit][jit][rowcodegen]") {
  CaseMaker make(99173);
  for (MathMode math : {MathMode::Exact, MathMode::Fast}) {
    // Prologue error in ulp: the elementwise tests' 1.5e-6 (Exact) and 1e-4 (Fast) relative.
    const double ulps = math == MathMode::Exact ? 26.0 : 1700.0;
    for (x86::Isa isa : host_tiers()) {
      for (RowOp o : kRowOps) {
        for (int n = 0; n < 40; ++n) {
          RowCase c = make.layout(transcendental_prologue(make, math), o, kD2Values[(n + 5) % 10]);
          make.fill(c, -3.0f, 3.0f, false);
          check_against_reference(c, isa, ulps);
        }
      }
    }
  }
}

TEST_CASE("integer-valued rows reduce bit for bit: order cannot matter", "[unit][jit][rowcodegen]") {
  // v = a * b + c on small integers: every partial sum is an exact float.
  FusedElementwiseSpec p;
  p.nodes = {input(0), input(1), op(EwOp::Mul, 0, 1), input(2), op(EwOp::Add, 2, 3)};
  p.num_inputs = 3;
  p.inner_broadcast = {false, false, true};
  p.outputs = {4};
  CaseMaker make(4242);
  for (x86::Isa isa : host_tiers()) {
    for (RowOp o : {RowOp::Sum, RowOp::Mean, RowOp::Max}) {
      for (std::int64_t d2 : kD2Values) {
        RowCase c = make.layout(p, o, d2);
        for (auto& v : c.inputs)
          for (float& x : v) x = static_cast<float>(make.pick(17) - 8);
        x86::CodeCache cache(1 << 20);
        std::string error;
        const auto k = x86::compile_row(c.spec, isa, cache, error);
        REQUIRE(k.fn != nullptr);
        std::vector<float> want, got;
        run(nullptr, c, want);
        run(k.fn, c, got);
        INFO("isa " << x86::isa_name(isa) << " op " << canary::jit::row_op_name(o) << " d2 " << d2);
        for (std::size_t i = 0; i < want.size(); ++i)
          if (!(got[i] == want[i] || bits(got[i]) == bits(want[i])))
            FAIL_CHECK("row " << i << ": " << got[i] << " vs " << want[i]);
      }
    }
  }
}

namespace {

// The identity prologue over one contiguous input.
FusedElementwiseSpec identity_prologue() {
  FusedElementwiseSpec p;
  p.nodes = {input(0)};
  p.num_inputs = 1;
  p.inner_broadcast = {false};
  p.outputs = {0};
  return p;
}

// A [rows, d2] contiguous case over `data` with the identity prologue.
RowCase contiguous(RowOp o, std::int64_t rows, std::int64_t d2, std::vector<float> data) {
  RowCase c;
  c.spec.prologue = identity_prologue();
  c.spec.op = o;
  c.d0 = rows;
  c.d2 = d2;
  c.strides = {d2, 0};
  c.row_end = rows;
  c.size_buffers();
  c.inputs[0] = std::move(data);
  return c;
}

// Runs the case's kernel for isa into out; returns the canary result.
std::uint32_t run_kernel(const RowCase& c, x86::Isa isa, std::vector<float>& out) {
  x86::CodeCache cache(1 << 20);
  std::string error;
  const auto k = x86::compile_row(c.spec, isa, cache, error);
  REQUIRE(error.empty());
  REQUIRE(k.fn != nullptr);
  return run(k.fn, c, out);
}

}  // namespace

TEST_CASE("hand-computed rows: sums, means, maxima, softmax and layer norm", "[unit][jit][rowcodegen]") {
  const std::vector<float> row = {1.0f, 2.0f, 3.0f, 4.0f};
  for (x86::Isa isa : host_tiers()) {
    INFO("isa " << x86::isa_name(isa));
    std::vector<float> out;
    for (bool jit : {false, true}) {
      auto go = [&](const RowCase& c) { return jit ? run_kernel(c, isa, out) : run(nullptr, c, out); };
      go(contiguous(RowOp::Sum, 1, 4, row));
      CHECK(out[0] == 10.0f);
      go(contiguous(RowOp::Mean, 1, 4, row));
      CHECK(out[0] == 2.5f);
      go(contiguous(RowOp::Max, 2, 2, {-3.0f, -1.0f, 7.0f, kNaN}));
      CHECK(out[0] == -1.0f);
      CHECK(std::isnan(out[1]));
      // exp(k - 3) / (e^-2 + e^-1 + 1) for k = 1, 2, 3.
      go(contiguous(RowOp::Softmax, 1, 3, {1.0f, 2.0f, 3.0f}));
      CHECK(out[0] == Approx(0.09003057).epsilon(1e-6));
      CHECK(out[1] == Approx(0.24472847).epsilon(1e-6));
      CHECK(out[2] == Approx(0.66524096).epsilon(1e-6));
      // mean 2.5, var 1.25: (k - 2.5) / sqrt(1.25 + 1e-5) * scale + bias.
      RowCase ln = contiguous(RowOp::LayerNorm, 1, 4, row);
      ln.spec.has_scale = ln.spec.has_bias = true;
      ln.scale = {1.0f, 2.0f, 1.0f, -1.0f};
      ln.bias = {0.0f, 0.0f, 1.0f, 0.5f};
      go(ln);
      const double r = 1.0 / std::sqrt(1.25 + 1e-5);
      CHECK(out[0] == Approx(-1.5 * r).epsilon(1e-6));
      CHECK(out[1] == Approx(-0.5 * r * 2).epsilon(1e-6));
      CHECK(out[2] == Approx(0.5 * r + 1).epsilon(1e-6));
      CHECK(out[3] == Approx(-1.5 * r + 0.5).epsilon(1e-6));
      // 19 copies of 100000008: the float sum rounds, so the first mean is off
      // by an ulp (8); the corrected mean is exact and every output is 0.
      go(contiguous(RowOp::LayerNorm, 1, 19, std::vector<float>(19, 100000008.0f)));
      CHECK(out == std::vector<float>(19, 0.0f));
    }
  }
}

TEST_CASE("empty rows: Sum 0, Mean NaN, Max -inf; Softmax and LayerNorm write nothing", "[unit][jit][rowcodegen]") {
  for (x86::Isa isa : host_tiers()) {
    INFO("isa " << x86::isa_name(isa));
    for (bool jit : {false, true}) {
      std::vector<float> out;
      auto go = [&](const RowCase& c) { return jit ? run_kernel(c, isa, out) : run(nullptr, c, out); };
      RowCase c = contiguous(RowOp::Sum, 3, 0, {});
      c.spec.prologue.check_non_finite = true;
      CHECK(go(c) == 0);
      CHECK(out == std::vector<float>(3, 0.0f));
      c.spec.op = RowOp::Mean;
      CHECK(go(c) == 1);  // 0 / 0 is NaN, as the reference ReduceMean of nothing
      CHECK(std::all_of(out.begin(), out.end(), [](float v) { return std::isnan(v); }));
      c.spec.op = RowOp::Max;
      CHECK(go(c) == 1);
      CHECK(out == std::vector<float>(3, -kInf));
      for (RowOp o : {RowOp::Softmax, RowOp::LayerNorm}) {
        c.spec.op = o;
        CHECK(go(c) == 0);
        CHECK(out.empty());
      }
    }
  }
}

TEST_CASE("rows with NaN, Inf and overflowing exps follow the reference", "[unit][jit][rowcodegen]") {
  // Row 0: a NaN; row 1: +Inf; row 2: all -Inf; row 3: -Inf among finite
  // values; row 4: values far apart (exp underflows); row 5: large equal
  // values (LayerNorm's squares stay finite: beyond |v - mean| ~ 1.8e19 they
  // overflow float, where the reference's double statistics do not).
  const std::int64_t d2 = 19;
  std::vector<float> data(6 * d2);
  for (std::int64_t j = 0; j < d2; ++j) {
    const auto f = static_cast<float>(j);
    data[j] = f;
    data[d2 + j] = -f;
    data[2 * d2 + j] = -kInf;
    data[3 * d2 + j] = j % 3 ? f * 0.25f : -kInf;
    data[4 * d2 + j] = f * 20.0f - 200.0f;
    data[5 * d2 + j] = 1e15f;
  }
  data[17] = kNaN;
  data[d2 + 16] = kInf;
  for (x86::Isa isa : host_tiers()) {
    for (RowOp o : kRowOps) {
      RowCase c = contiguous(o, 6, d2, data);
      c.spec.prologue.check_non_finite = true;
      check_against_reference(c, isa, 0.0);
    }
  }
}

TEST_CASE("value canary returns 1 exactly when a written value is non-finite", "[unit][jit][rowcodegen]") {
  for (x86::Isa isa : host_tiers()) {
    for (RowOp o : kRowOps) {
      for (std::int64_t d2 : {std::int64_t{7}, std::int64_t{16}, std::int64_t{33}}) {
        RowCase c = contiguous(o, 3, d2, std::vector<float>(static_cast<std::size_t>(3 * d2), 2.0f));
        c.spec.prologue.check_non_finite = true;
        c.row_begin = 1;
        c.row_end = 2;
        x86::CodeCache cache(1 << 20);
        std::string error;
        const auto k = x86::compile_row(c.spec, isa, cache, error);
        REQUIRE(k.fn != nullptr);
        INFO("isa " << x86::isa_name(isa) << " op " << canary::jit::row_op_name(o) << " d2 " << d2);
        std::vector<float> out;
        CHECK(run(k.fn, c, out) == 0);
        // A NaN in row 0 (outside the rows computed) is not seen.
        c.inputs[0][static_cast<std::size_t>(d2 - 1)] = kNaN;
        CHECK(run(k.fn, c, out) == 0);
        // An Inf at each position of row 1 makes the row's result non-finite
        // (Softmax and LayerNorm: NaN everywhere; Sum, Mean, Max: Inf).
        for (std::int64_t j = 0; j < d2; ++j) {
          c.inputs[0][static_cast<std::size_t>(d2 + j)] = kInf;
          CHECK(run(k.fn, c, out) == 1);
          c.inputs[0][static_cast<std::size_t>(d2 + j)] = 2.0f;
        }
      }
    }
  }
  // Without the flag the kernel returns 0 even with non-finite outputs.
  RowCase c = contiguous(RowOp::Sum, 1, 9, std::vector<float>(9, kInf));
  std::vector<float> out;
  CHECK(run_kernel(c, x86::Isa::Avx2, out) == 0);
  CHECK(out[0] == kInf);
}

namespace {

// Memory whose last element sits right before a PROT_NONE page.
class GuardedFloats {
 public:
  explicit GuardedFloats(std::size_t count) {
    page_ = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    data_bytes_ = (count * sizeof(float) + page_ - 1) / page_ * page_;
    base_ = mmap(nullptr, data_bytes_ + page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(base_ != MAP_FAILED);
    REQUIRE(mprotect(static_cast<char*>(base_) + data_bytes_, page_, PROT_NONE) == 0);
    data_ = reinterpret_cast<float*>(static_cast<char*>(base_) + data_bytes_) - count;
  }
  ~GuardedFloats() { munmap(base_, data_bytes_ + page_); }
  GuardedFloats(const GuardedFloats&) = delete;
  GuardedFloats& operator=(const GuardedFloats&) = delete;
  float* data() const { return data_; }

 private:
  std::size_t page_ = 0, data_bytes_ = 0;
  void* base_ = nullptr;
  float* data_ = nullptr;
};

}  // namespace

TEST_CASE("tails never touch memory past the end of inputs, scale, bias and outputs", "[unit][jit][rowcodegen]") {
  // v = a * c with c inner-broadcast; every buffer ends at a guard page.
  FusedElementwiseSpec p;
  p.nodes = {input(0), input(1), op(EwOp::Mul, 0, 1)};
  p.num_inputs = 2;
  p.inner_broadcast = {false, true};
  p.outputs = {2};
  p.check_non_finite = true;
  const std::int64_t rows = 3;
  for (x86::Isa isa : host_tiers()) {
    for (RowOp o : kRowOps) {
      for (std::int64_t d2 : {std::int64_t{1}, std::int64_t{7}, std::int64_t{17}, std::int64_t{1027}}) {
        for (bool exact : {false, true}) {
          FusedRowSpec s;
          s.prologue = p;
          s.op = o;
          s.has_scale = s.has_bias = o == RowOp::LayerNorm;
          if (exact) s.prologue.exact_dims = std::array<std::int64_t, 3>{rows, 1, d2};
          x86::CodeCache cache(1 << 20);
          std::string error;
          const auto k = x86::compile_row(s, isa, cache, error);
          REQUIRE(k.fn != nullptr);
          const std::int64_t out_n = is_reduction(o) ? rows : rows * d2;
          GuardedFloats a(rows * d2), c(rows), y(out_n), scale(d2), bias(d2);
          for (std::int64_t i = 0; i < rows * d2; ++i) a.data()[i] = static_cast<float>(i % 13 - 6);
          for (std::int64_t r = 0; r < rows; ++r) c.data()[r] = static_cast<float>(r + 1);
          for (std::int64_t j = 0; j < d2; ++j) scale.data()[j] = 2.0f, bias.data()[j] = 1.0f;
          const float* in[] = {a.data(), c.data()};
          const std::int64_t strides[] = {d2, 0, 1, 0};
          RowArgs args;
          args.inputs = in;
          args.strides = strides;
          args.output = y.data();
          args.scale = scale.data();
          args.bias = bias.data();
          args.dims[0] = rows;
          args.dims[2] = d2;
          args.row_end = rows;
          INFO("isa " << x86::isa_name(isa) << " op " << canary::jit::row_op_name(o) << " d2 " << d2);
          CHECK(k.fn(&args) == 0);
          // Row r holds (i % 13 - 6) * (r + 1): check the reductions exactly, the rest against the reference.
          for (std::int64_t r = 0; r < rows && is_reduction(o); ++r) {
            double sum = 0, max = -INFINITY;
            for (std::int64_t j = 0; j < d2; ++j) {
              const double v = static_cast<double>((r * d2 + j) % 13 - 6) * static_cast<double>(r + 1);
              sum += v;
              max = std::max(max, v);
            }
            const double want = o == RowOp::Sum ? sum : o == RowOp::Max ? max : sum / static_cast<double>(d2);
            CHECK(y.data()[r] == static_cast<float>(want));
          }
          if (is_reduction(o)) continue;
          std::vector<float> want(static_cast<std::size_t>(out_n));
          args.output = want.data();
          canary::jit::evaluate_row_reference(s, args);
          for (std::int64_t i = 0; i < out_n; ++i) {
            const float w = want[static_cast<std::size_t>(i)];
            if (std::fabs(y.data()[i] - w) > 1e-4f * (1.0f + std::fabs(w)))
              FAIL_CHECK("element " << i << ": " << y.data()[i] << " vs " << w);
          }
        }
      }
    }
  }
}

TEST_CASE("a row spec compiles once per tier and then comes from the cache", "[unit][jit][rowcodegen]") {
  FusedRowSpec s;
  s.prologue = identity_prologue();
  s.op = RowOp::Softmax;
  x86::CodeCache cache(1 << 20);
  std::string error;
  const auto first = x86::compile_row(s, x86::Isa::Avx2, cache, error);
  REQUIRE(first.fn != nullptr);
  CHECK(first.code_bytes > 0);
  const auto misses = cache.stats().misses;
  const auto second = x86::compile_row(s, x86::Isa::Avx2, cache, error);
  CHECK(second.fn == first.fn);
  CHECK(second.code == first.code);
  CHECK(cache.stats().hits == 1);
  CHECK(cache.stats().misses == misses);
  CHECK(cache.stats().entries == 1);
  // Epsilon only distinguishes LayerNorm kernels.
  s.epsilon = 1e-3f;
  CHECK(x86::compile_row(s, x86::Isa::Avx2, cache, error).fn == first.fn);
  // Another tier, op or epsilon is another kernel.
  const auto scalar = x86::compile_row(s, x86::Isa::Scalar, cache, error);
  REQUIRE(scalar.fn != nullptr);
  CHECK(scalar.fn != first.fn);
  s.op = RowOp::LayerNorm;
  const auto ln = x86::compile_row(s, x86::Isa::Avx2, cache, error);
  s.epsilon = 1e-5f;
  const auto ln2 = x86::compile_row(s, x86::Isa::Avx2, cache, error);
  REQUIRE(ln.fn != nullptr);
  CHECK(ln2.fn != ln.fn);
  CHECK(cache.stats().entries == 4);
}

TEST_CASE("row spec keys name the op and LayerNorm's parameters", "[unit][jit][rowcodegen]") {
  FusedRowSpec s;
  s.prologue = identity_prologue();
  CHECK(s.key() == "row sum : " + s.prologue.key());
  s.op = RowOp::LayerNorm;
  s.has_scale = true;
  CHECK(s.key() == "row layer_norm eps=1e-05 scale=1 bias=0 : " + s.prologue.key());
  CHECK(std::string(canary::jit::row_op_name(RowOp::Softmax)) == "softmax");
  CHECK(std::string(canary::jit::row_op_name(RowOp::Max)) == "max");
  CHECK(std::string(canary::jit::row_op_name(RowOp::Mean)) == "mean");
}

TEST_CASE("compile_row and the reference reject malformed row specs", "[unit][jit][rowcodegen]") {
  x86::CodeCache cache(1 << 20);
  std::string error;
  FusedRowSpec two_outputs;
  two_outputs.prologue = identity_prologue();
  two_outputs.prologue.outputs = {0, 0};
  CHECK(x86::compile_row(two_outputs, x86::Isa::Avx2, cache, error).fn == nullptr);
  CHECK(error.find("exactly one output") != std::string::npos);
  CHECK(error.find("got 2") != std::string::npos);
  FusedRowSpec scaled_sum;
  scaled_sum.prologue = identity_prologue();
  scaled_sum.has_scale = true;
  error.clear();
  CHECK(x86::compile_row(scaled_sum, x86::Isa::Avx2, cache, error).fn == nullptr);
  CHECK(error.find("layer_norm only") != std::string::npos);
  FusedRowSpec unknown;
  unknown.prologue = identity_prologue();
  unknown.op = static_cast<RowOp>(9);
  error.clear();
  CHECK(x86::compile_row(unknown, x86::Isa::Avx2, cache, error).fn == nullptr);
  CHECK(error.find("unknown row op 9") != std::string::npos);
  FusedRowSpec bad_node;
  bad_node.prologue = identity_prologue();
  bad_node.prologue.nodes.push_back(op(EwOp::Neg, 3));
  error.clear();
  CHECK(x86::compile_row(bad_node, x86::Isa::Avx2, cache, error).fn == nullptr);
  CHECK(error.find("prologue: node 1 (neg)") != std::string::npos);
  RowArgs args;
  CHECK_THROWS_AS(canary::jit::evaluate_row_reference(two_outputs, args), canary::Error);
  CHECK(cache.stats().entries == 0);
}
