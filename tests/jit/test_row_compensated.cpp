// Tests of compensated accumulation in x86 row kernels (Accumulation::
// Compensated): on rows built to defeat float summation (large values that
// swallow small ones, long rows whose partial sums dwarf the result) the
// compensated Sum, Mean, Softmax and LayerNorm stay within a few ulp of the
// double-precision reference while plain kernels are off by hundreds or
// thousands of ulp, on every tier this CPU runs; compensated kernels follow
// the reference on special values and tails; the modes have their own keys.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
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
using canary::jit::Accumulation;
using canary::jit::EwNode;
using canary::jit::EwOp;
using canary::jit::FusedElementwiseSpec;
using canary::jit::FusedRowSpec;
using canary::jit::RowArgs;
using canary::jit::RowOp;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();
const double kUnit = std::ldexp(1.0, -24);

// The tiers this CPU can run.
std::vector<x86::Isa> host_tiers() {
  std::vector<x86::Isa> tiers;
  for (x86::Isa isa : {x86::Isa::Scalar, x86::Isa::Avx2, x86::Isa::Avx512})
    if (x86::host_supports(isa)) tiers.push_back(isa);
  return tiers;
}

// Distance in floats between a and b (0 when equal; both must be finite).
std::int64_t ulps(float a, float b) {
  auto ordered = [](float v) {
    std::int32_t i;
    std::memcpy(&i, &v, sizeof i);
    return i < 0 ? -static_cast<std::int64_t>(i & 0x7fffffff) : static_cast<std::int64_t>(i);
  };
  return std::llabs(ordered(a) - ordered(b));
}

// Largest ulp distance between two equally long outputs.
std::int64_t max_ulps(const std::vector<float>& got, const std::vector<float>& want) {
  std::int64_t worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, ulps(got[i], want[i]));
  return worst;
}

// A row op over rows of a dense [rows, d2] input (identity prologue), or of
// v = a * b + c with c broadcast along the row when `fused`.
struct Rows {
  FusedRowSpec spec;
  std::int64_t rows = 1, d2 = 0;
  std::vector<std::vector<float>> inputs;
  std::vector<std::int64_t> strides;
  std::vector<float> scale, bias;

  Rows(RowOp op, std::int64_t n_rows, std::int64_t n, std::vector<float> data) : rows(n_rows), d2(n) {
    spec.op = op;
    spec.prologue.nodes = {EwNode{EwOp::Input, 0, 0, 0, 0.0f, 0.0f}};
    spec.prologue.num_inputs = 1;
    spec.prologue.inner_broadcast = {false};
    spec.prologue.outputs = {0};
    inputs = {std::move(data)};
    strides = {d2, 0};
    scale.assign(static_cast<std::size_t>(d2), 1.0f);
    bias.assign(static_cast<std::size_t>(d2), 0.0f);
  }

  std::int64_t out_size() const {
    return spec.op == RowOp::Softmax || spec.op == RowOp::LayerNorm ? rows * d2 : rows;
  }

  // Runs the kernel (or the double-precision reference when fn is null) into out.
  std::uint32_t run(canary::jit::RowFn fn, std::vector<float>& out) const {
    out.assign(static_cast<std::size_t>(out_size()), -1.0f);
    std::vector<const float*> in;
    for (const auto& v : inputs) in.push_back(v.data());
    RowArgs args;
    args.inputs = in.data();
    args.strides = strides.data();
    args.output = out.data();
    args.scale = spec.has_scale ? scale.data() : nullptr;
    args.bias = spec.has_bias ? bias.data() : nullptr;
    args.dims[0] = rows;
    args.dims[2] = d2;
    args.row_end = rows;
    return fn ? fn(&args) : canary::jit::evaluate_row_reference(spec, args);
  }

  // Compiles for isa in the given mode and runs into out.
  std::uint32_t run(x86::Isa isa, Accumulation mode, std::vector<float>& out) const {
    FusedRowSpec s = spec;
    s.accumulation = mode;
    x86::CodeCache cache(1 << 20);
    std::string error;
    const x86::CompiledRow k = x86::compile_row(s, isa, cache, error);
    INFO(error);
    REQUIRE(k.fn != nullptr);
    Rows copy = *this;
    copy.spec = s;
    return copy.run(k.fn, out);
  }
};

// Plain and compensated results against the reference: compensated within
// `few` ulp everywhere, plain off by more than `many` ulp somewhere.
void check_compensation_wins(const Rows& r, std::int64_t few, std::int64_t many) {
  std::vector<float> want, plain, comp;
  r.run(nullptr, want);
  for (x86::Isa isa : host_tiers()) {
    INFO("isa " << x86::isa_name(isa) << " op " << canary::jit::row_op_name(r.spec.op) << " d2 " << r.d2);
    r.run(isa, Accumulation::Plain, plain);
    r.run(isa, Accumulation::Compensated, comp);
    const std::int64_t plain_ulps = max_ulps(plain, want), comp_ulps = max_ulps(comp, want);
    INFO("plain " << plain_ulps << " ulp, compensated " << comp_ulps << " ulp");
    CHECK(comp_ulps <= few);
    CHECK(plain_ulps > many);
  }
}

// [64 x big][n x small][64 x -big][tail x small]: the leading bigs reach every
// accumulator lane of every tier (at most 4 x 16), so plain sums lose each
// small value behind them.
std::vector<float> swallowed_row(float big, float small, std::int64_t n, std::int64_t tail) {
  std::vector<float> v(64, big);
  v.insert(v.end(), static_cast<std::size_t>(n), small);
  v.insert(v.end(), 64, -big);
  v.insert(v.end(), static_cast<std::size_t>(tail), small);
  return v;
}

// 10^5 values: the first half 1000 + U(0, 1), the second -1000 + U(0, 1). The
// partial sums grow to ~5e7 / lanes before they cancel to the result (~5e4).
std::vector<float> cancelling_row(unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> v(100000);
  for (std::size_t j = 0; j < v.size(); ++j) v[j] = (j < v.size() / 2 ? 1000.0f : -1000.0f) + u(rng);
  return v;
}

}  // namespace

TEST_CASE("compensated Sum and Mean keep the values plain float sums swallow", "[unit][jit][rows]") {
  // 1e8 + 1 rounds back to 1e8: plain sums give 7 (the tail), the exact sum is 4103.
  for (RowOp op : {RowOp::Sum, RowOp::Mean}) {
    const std::vector<float> v = swallowed_row(1e8f, 1.0f, 4096, 7);
    const Rows r(op, 1, static_cast<std::int64_t>(v.size()), v);
    check_compensation_wins(r, 0, 1000);
    std::vector<float> out;
    for (x86::Isa isa : host_tiers()) {
      r.run(isa, Accumulation::Compensated, out);
      CHECK(out[0] == (op == RowOp::Sum ? 4103.0f : static_cast<float>(4103.0 / 4231.0)));
    }
  }
  // 2^24 followed by small values: 2^24 + 0.75 rounds to 2^24 + 1 or 2^24.
  const std::vector<float> v = swallowed_row(16777216.0f, 0.75f, 3000, 0);
  check_compensation_wins(Rows(RowOp::Sum, 1, static_cast<std::int64_t>(v.size()), v), 0, 100);
}

TEST_CASE("compensated Sum and Mean of long cancelling random rows stay within Neumaier's bound",
          "[unit][jit][rows]") {
  // Neumaier's bound, |got - S| <= 2 u |S| + 4 m u^2 sum |v| with m values per
  // accumulator lane (all n on the scalar tier, n / 16 or fewer on the vector
  // tiers), plus the rounding of the result: about 1 ulp on the vector tiers,
  // 36 ulp on the scalar tier (the compensation is itself a float sum of n
  // terms). Plain sums are off by hundreds of ulp (vector tiers) to millions
  // (scalar: every fractional part is lost).
  for (unsigned seed : {1u, 2u}) {
    const std::vector<float> v = cancelling_row(seed);
    const auto n = static_cast<double>(v.size());
    double exact = 0, sum_abs = 0;
    for (float x : v) exact += x, sum_abs += std::fabs(x);
    for (RowOp op : {RowOp::Sum, RowOp::Mean}) {
      const Rows r(op, 1, static_cast<std::int64_t>(v.size()), v);
      const double scale = op == RowOp::Mean ? 1.0 / n : 1.0;
      const double want = exact * scale;
      std::vector<float> plain, comp;
      for (x86::Isa isa : host_tiers()) {
        const double m = isa == x86::Isa::Scalar ? n : n / 16;
        const double bound = (2 * kUnit * std::fabs(exact) + 4 * m * kUnit * kUnit * sum_abs) * scale +
                             kUnit * std::fabs(want);
        r.run(isa, Accumulation::Plain, plain);
        r.run(isa, Accumulation::Compensated, comp);
        INFO("isa " << x86::isa_name(isa) << " op " << canary::jit::row_op_name(op) << " seed " << seed
                    << ": plain " << ulps(plain[0], static_cast<float>(want)) << " ulp, compensated "
                    << ulps(comp[0], static_cast<float>(want)) << " ulp");
        CHECK(std::fabs(comp[0] - want) <= bound);
        if (isa != x86::Isa::Scalar) CHECK(ulps(comp[0], static_cast<float>(want)) <= 2);
        CHECK(ulps(plain[0], static_cast<float>(want)) > 100);
      }
    }
  }
}

TEST_CASE("compensated Softmax keeps the small exps plain denominators drop", "[unit][jit][rows]") {
  // 64 zeros (exp 1) then 10^5 values in [-18, -16] (exp < half an ulp of 1)
  // and a tail: plain denominators stop at 64, ~8e-5 below the true sum.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-18.0f, -16.0f);
  std::vector<float> v(64, 0.0f);
  for (int j = 0; j < 100005; ++j) v.push_back(u(rng));
  check_compensation_wins(Rows(RowOp::Softmax, 1, static_cast<std::int64_t>(v.size()), v), 4, 300);
}

TEST_CASE("compensated LayerNorm keeps the small squares plain variances drop", "[unit][jit][rows]") {
  // 32 x 1024 and 32 x -1024 (squares 2^20) first, then 10^5 values +-x in
  // pairs, x in [0.05, 0.24] (x^2 < half an ulp of 2^20): the mean is 0 and
  // plain sums of squares lose ~3e-5 of the variance.
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(0.05f, 0.24f);
  std::vector<float> v;
  for (int j = 0; j < 64; ++j) v.push_back(j % 2 ? -1024.0f : 1024.0f);
  for (int j = 0; j < 50003; ++j) {
    const float x = u(rng);
    v.insert(v.end(), {x, -x});
  }
  Rows r(RowOp::LayerNorm, 1, static_cast<std::int64_t>(v.size()), v);
  check_compensation_wins(r, 4, 50);
  r.spec.has_scale = r.spec.has_bias = true;
  for (std::size_t j = 0; j < r.scale.size(); ++j) r.scale[j] = j % 3 ? 2.0f : -0.5f;
  check_compensation_wins(r, 4, 50);
}

TEST_CASE("compensated kernels follow the reference on NaN, Inf, overflow and empty rows", "[unit][jit][rows]") {
  // Rows: a NaN; +Inf; +Inf and -Inf; all -Inf; sums that overflow float; values far apart.
  const std::int64_t d2 = 37;
  std::vector<float> data(6 * d2);
  for (std::int64_t j = 0; j < d2; ++j) {
    const auto f = static_cast<float>(j);
    data[j] = f;
    data[d2 + j] = -f;
    data[2 * d2 + j] = f * 0.5f;
    data[3 * d2 + j] = -kInf;
    data[4 * d2 + j] = 3e37f;
    data[5 * d2 + j] = f * 20.0f - 200.0f;
  }
  data[30] = kNaN;
  data[d2 + 35] = kInf;
  data[2 * d2 + 3] = kInf;
  data[2 * d2 + 36] = -kInf;
  for (RowOp op : {RowOp::Sum, RowOp::Mean, RowOp::Max, RowOp::Softmax, RowOp::LayerNorm}) {
    Rows r(op, 6, d2, data);
    r.spec.prologue.check_non_finite = true;
    std::vector<float> want, got;
    const std::uint32_t want_flag = r.run(nullptr, want);
    for (x86::Isa isa : host_tiers()) {
      INFO("isa " << x86::isa_name(isa) << " op " << canary::jit::row_op_name(op));
      CHECK(r.run(isa, Accumulation::Compensated, got) == want_flag);
      const std::size_t per_row = want.size() / 6;
      for (std::size_t i = 0; i < want.size(); ++i) {
        // Row 4's float sum overflows where the reference's double one does
        // not: only Sum (whose result overflows too), Max and Softmax agree.
        if (i / per_row == 4 && (op == RowOp::Mean || op == RowOp::LayerNorm)) continue;
        INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
        if (!std::isfinite(want[i]))
          CHECK((std::isnan(want[i]) ? std::isnan(got[i]) : got[i] == want[i]));
        else
          CHECK(std::fabs(got[i] - want[i]) <= 1e-5 * (1.0 + std::fabs(want[i])));
      }
    }
  }
  // Empty rows: Sum 0, Mean NaN.
  for (x86::Isa isa : host_tiers()) {
    std::vector<float> out;
    Rows(RowOp::Sum, 2, 0, {}).run(isa, Accumulation::Compensated, out);
    CHECK(out == std::vector<float>(2, 0.0f));
    Rows(RowOp::Mean, 2, 0, {}).run(isa, Accumulation::Compensated, out);
    CHECK((std::isnan(out[0]) && std::isnan(out[1])));
  }
}

namespace {

// v = a * b + c over [rows, d2] with c one value per row (inner broadcast):
// a, b in [-4, 4], c in [-100, 100], so rows carry large offsets.
Rows fused_rows(RowOp op, std::int64_t rows, std::int64_t d2, std::mt19937& rng) {
  std::uniform_real_distribution<float> ab(-4.0f, 4.0f), offset(-100.0f, 100.0f);
  Rows r(op, rows, d2, {});
  FusedElementwiseSpec& p = r.spec.prologue;
  p.nodes = {EwNode{EwOp::Input, 0, 0, 0, 0.0f, 0.0f}, EwNode{EwOp::Input, 0, 0, 1, 0.0f, 0.0f},
             EwNode{EwOp::Mul, 0, 1, 0, 0.0f, 0.0f}, EwNode{EwOp::Input, 0, 0, 2, 0.0f, 0.0f},
             EwNode{EwOp::Add, 2, 3, 0, 0.0f, 0.0f}};
  p.num_inputs = 3;
  p.inner_broadcast = {false, false, true};
  p.outputs = {4};
  r.inputs.assign(3, {});
  for (int k = 0; k < 2; ++k)
    for (std::int64_t i = 0; i < rows * d2; ++i) r.inputs[static_cast<std::size_t>(k)].push_back(ab(rng));
  for (std::int64_t i = 0; i < rows; ++i) r.inputs[2].push_back(offset(rng));
  r.strides = {d2, 0, d2, 0, 1, 0};
  for (float& s : r.scale) s = ab(rng);
  for (float& b : r.bias) b = ab(rng);
  return r;
}

// The bound on |got - want| for element j of a row of values v (see the test).
double compensated_bound(const Rows& r, const std::vector<double>& v, std::size_t j, float want) {
  const auto n = static_cast<double>(v.size());
  double sum = 0, sum_abs = 0, max = -INFINITY, sq = 0;
  for (double x : v) sum += x, sum_abs += std::fabs(x), max = std::max(max, x);
  const double w = std::fabs(static_cast<double>(want)), mean = sum / n;
  for (double x : v) sq += (x - mean) * (x - mean);
  const double r_std = 1.0 / std::sqrt(sq / n + static_cast<double>(r.spec.epsilon));
  switch (r.spec.op) {
    case RowOp::Sum: return 4 * kUnit * w + 8 * n * kUnit * kUnit * sum_abs;
    case RowOp::Mean: return 4 * kUnit * w + 8 * kUnit * kUnit * sum_abs;
    case RowOp::Max: return 0;
    case RowOp::Softmax: return (std::fabs(v[j] - max) + 10) * kUnit * w + 1e-44;
    case RowOp::LayerNorm: {
      const double s = r.spec.has_scale ? std::fabs(r.scale[j]) : 1.0;
      const double b = r.spec.has_bias ? std::fabs(r.bias[j]) : 0.0;
      return 10 * kUnit * (r_std * s * (std::fabs(v[j] - mean) + std::fabs(mean)) + b + w);
    }
  }
  return 0;
}

}  // namespace

TEST_CASE("compensated kernels over fused prologues and every tail stay within a few rounding errors",
          "[unit][jit][rows]") {
  // Bounds with u = 2^-24, n = d2, S the exact sum of the float row values:
  //   Sum        4 u |S| + 8 n u^2 sum |v|      (Neumaier: 2 u |S| + O(n u^2) sum |v|)
  //   Mean       the same / n
  //   Softmax    (|v_j - max| + 10) u |want|    (v - max rounded, exp 1 ulp, sum, 1/sum, product)
  //   LayerNorm  10 u (r |s_j| (|v_j - mean| + |mean|) + |b_j| + |want|)
  // (Plain kernels are allowed n u sum |v| and more: test_row_codegen.cpp.)
  std::mt19937 rng(314);
  for (x86::Isa isa : host_tiers()) {
    for (RowOp op : {RowOp::Sum, RowOp::Mean, RowOp::Max, RowOp::Softmax, RowOp::LayerNorm}) {
      for (std::int64_t d2 : {1, 2, 7, 8, 15, 16, 17, 31, 33, 64, 65, 127, 1000, 1027}) {
        Rows r = fused_rows(op, 3, d2, rng);
        r.spec.has_scale = r.spec.has_bias = op == RowOp::LayerNorm && d2 % 2 == 1;
        if (d2 % 3 == 0) r.spec.prologue.exact_dims = std::array<std::int64_t, 3>{3, 1, d2};
        std::vector<float> want, got;
        r.run(nullptr, want);
        r.run(isa, Accumulation::Compensated, got);
        INFO("isa " << x86::isa_name(isa) << " op " << canary::jit::row_op_name(op) << " d2 " << d2);
        const std::int64_t per_row = r.out_size() / r.rows;
        for (std::int64_t row = 0; row < r.rows; ++row) {
          std::vector<double> v;
          for (std::int64_t j = 0; j < d2; ++j) {
            const auto at = static_cast<std::size_t>(row * d2 + j);
            v.push_back(static_cast<double>(r.inputs[0][at] * r.inputs[1][at] + r.inputs[2][row]));
          }
          for (std::int64_t j = 0; j < per_row; ++j) {
            const std::size_t i = static_cast<std::size_t>(row * per_row + j);
            const double bound = compensated_bound(r, v, static_cast<std::size_t>(j), want[i]);
            if (std::fabs(static_cast<double>(got[i]) - want[i]) > bound)
              FAIL_CHECK("row " << row << " element " << j << ": got " << got[i] << ", want " << want[i]
                                << ", bound " << bound);
          }
        }
      }
    }
  }
}

TEST_CASE("plain and compensated row kernels have their own keys and cache entries", "[unit][jit][rows]") {
  Rows r(RowOp::Sum, 2, 40, std::vector<float>(80, 0.1f));
  FusedRowSpec comp = r.spec;
  comp.accumulation = Accumulation::Compensated;
  CHECK(r.spec.key().rfind("row sum : ", 0) == 0);  // plain keys are what they were
  CHECK(comp.key().rfind("row sum compensated : ", 0) == 0);
  CHECK(canary::jit::check_row_spec(comp).empty());
  FusedRowSpec bad = r.spec;
  bad.accumulation = static_cast<Accumulation>(7);
  CHECK(canary::jit::check_row_spec(bad) == "unknown accumulation 7");
  for (x86::Isa isa : host_tiers()) {
    x86::CodeCache cache(1 << 20);
    std::string error;
    const auto plain_k = x86::compile_row(r.spec, isa, cache, error);
    const auto comp_k = x86::compile_row(comp, isa, cache, error);
    REQUIRE(plain_k.fn != nullptr);
    REQUIRE(comp_k.fn != nullptr);
    CHECK(plain_k.fn != comp_k.fn);
    CHECK(comp_k.code_bytes > plain_k.code_bytes);
    CHECK(cache.stats().entries == 2);
    CHECK(x86::compile_row(comp, isa, cache, error).fn == comp_k.fn);
  }
}

TEST_CASE("Max is the same under both accumulations", "[unit][jit][rows]") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1e6f, 1e6f);
  std::vector<float> v(4 * 301);
  for (float& x : v) x = u(rng);
  v[17] = kNaN;
  const Rows r(RowOp::Max, 4, 301, v);
  for (x86::Isa isa : host_tiers()) {
    std::vector<float> plain, comp;
    r.run(isa, Accumulation::Plain, plain);
    r.run(isa, Accumulation::Compensated, comp);
    CHECK(std::memcmp(plain.data(), comp.data(), plain.size() * sizeof(float)) == 0);
  }
}
