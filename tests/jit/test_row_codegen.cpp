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
// Prologues with transcendentals add their error (p ulp of v): p u sum |v|
// to Sum, p u |want| to Max, p u (|v_j| + |max|) |want| to Softmax and p to
// LayerNorm's factor. Largest error measured over these tests, as a fraction
// of the bound: see the report test at the end of this file.
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

// Row statistics in double: sum |v|, max (NaN skipped), mean, 1 / sqrt(var + eps).
struct RowStats {
  double sum_abs = 0, max = -INFINITY, mean = 0, inv_std = 0;
};

RowStats row_stats(const float* v, std::int64_t n, float epsilon) {
  RowStats s;
  double sum = 0, sq = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    s.sum_abs += std::fabs(static_cast<double>(v[j]));
    s.max = std::max(s.max, static_cast<double>(v[j]));
    sum += v[j];
  }
  s.mean = sum / static_cast<double>(n);
  for (std::int64_t j = 0; j < n; ++j) sq += (v[j] - s.mean) * (v[j] - s.mean);
  s.inv_std = 1.0 / std::sqrt(sq / static_cast<double>(n) + epsilon);
  return s;
}

// The documented bound for element j of a row (see the file comment); p is
// the prologue's error in ulp.
double allowed_error(const RowCase& c, const float* v, const RowStats& s, std::int64_t j, float want, double p) {
  const auto n = static_cast<double>(c.d2);
  const double w = std::fabs(static_cast<double>(want));
  switch (c.spec.op) {
    case RowOp::Sum: return (n + 8 + p) * kUnit * s.sum_abs;
    case RowOp::Mean: return (n + 8 + p) * kUnit * s.sum_abs / n;
    case RowOp::Max: return p * kUnit * w;
    case RowOp::Softmax: {
      const double vj = v[j];
      return ((std::fabs(vj - s.max) + 2 * n + 16 + p * (std::fabs(vj) + std::fabs(s.max))) * kUnit) * w + 1e-44;
    }
    case RowOp::LayerNorm: {
      const double scale = c.spec.has_scale ? std::fabs(c.scale[j]) : 1.0;
      const double bias = c.spec.has_bias ? std::fabs(c.bias[j]) : 0.0;
      const double dev = std::fabs(v[j] - s.mean) + s.sum_abs / n;
      return (n + 16 + p) * kUnit * (s.inv_std * scale * dev + bias + w);
    }
  }
  return 0;
}

// Largest error seen as a fraction of its bound (reported by the last test).
double g_worst_fraction = 0;

// True when got matches want: both NaN, equal, or within `allowed` (finite).
bool matches(float got, float want, double allowed) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (got == want) return true;
  if (std::isinf(want) || std::isinf(got)) return false;
  const double diff = std::fabs(static_cast<double>(got) - want);
  if (allowed > 0) g_worst_fraction = std::max(g_worst_fraction, diff / allowed);
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
                                          EwOp::LeakyRelu, EwOp::HardSigmoid, EwOp::Clip, EwOp::Constant};

}  // namespace

TEST_CASE("row ops over random arithmetic prologues match the reference on every tier", "[unit][jit][rowcodegen]") {
  CaseMaker make(20240611);
  for (x86::Isa isa : host_tiers()) {
    for (RowOp o : kRowOps) {
      for (int n = 0; n < 40; ++n) {
        RowCase c = make.layout(make.prologue(kArithmeticOps), o, kD2Values[n % 10]);
        make.fill(c, -4.0f, 4.0f, n % 4 == 3);
        check_against_reference(c, isa, 0.0);
      }
    }
  }
}
