// The row-kernel catalog, its data, and the per-element error bounds of a
// kernel's f32 fold against the double-precision reference.
#include "tests/cuda/row_cases.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "jit/cuda/ptx_row.h"

namespace canary::jit::cuda_test {
namespace {

constexpr double kEps = 1.0 / (1 << 24);  // unit roundoff of f32
// Every bound below is a first-order error analysis times this margin.
constexpr double kMargin = 2.0;

EwNode node(EwOp op, std::uint16_t a = 0, std::uint16_t b = 0) {
  EwNode n;
  n.op = op;
  n.a = a;
  n.b = b;
  if (op == EwOp::Input) n.input = a;
  return n;
}

// A case whose prologue has `nodes` (the last is the row value) over inputs laid out as `layouts`.
RowCase make_row_case(std::string name, RowOp op, std::vector<EwNode> nodes, std::vector<InputLayout> layouts,
                      ValueRange values = ValueRange{-10.0f, 10.0f, false, false, false}) {
  RowCase c;
  c.name = std::move(name);
  c.spec.op = op;
  FusedElementwiseSpec& p = c.spec.prologue;
  p.nodes = std::move(nodes);
  p.num_inputs = static_cast<std::uint16_t>(layouts.size());
  for (InputLayout l : layouts) p.inner_broadcast.push_back(l == InputLayout::RowValue || l == InputLayout::Scalar);
  p.outputs = {static_cast<std::uint16_t>(p.nodes.size() - 1)};
  c.layouts = std::move(layouts);
  c.values = values;
  return c;
}

RowCase identity_case(std::string name, RowOp op, Accumulation acc = Accumulation::Plain) {
  RowCase c = make_row_case(std::move(name), op, {node(EwOp::Input, 0)}, {InputLayout::Dense});
  c.spec.accumulation = acc;
  if (op == RowOp::LayerNorm) c.spec.has_scale = c.spec.has_bias = true;
  return c;
}

void add_op_cases(std::vector<RowCase>& cases) {
  for (RowOp op : {RowOp::Sum, RowOp::Mean, RowOp::Max, RowOp::Softmax, RowOp::LayerNorm}) {
    cases.push_back(identity_case(row_op_name(op), op));
    if (op != RowOp::Max)
      cases.push_back(identity_case(std::string(row_op_name(op)) + " compensated", op, Accumulation::Compensated));
  }
  // Sums whose terms cancel: where the compensation matters.
  RowCase cancel = identity_case("sum compensated, wide magnitudes", RowOp::Sum, Accumulation::Compensated);
  cancel.values = ValueRange{1e-3f, 1e4f, true, true, false};
  cases.push_back(cancel);
}

void add_prologue_cases(std::vector<RowCase>& cases) {
  const InputLayout dense = InputLayout::Dense;
  cases.push_back(make_row_case("softmax of a*b+c (dense,row,shared-d0)", RowOp::Softmax,
                                {node(EwOp::Input, 0), node(EwOp::Input, 1), node(EwOp::Input, 2),
                                 node(EwOp::Mul, 0, 1), node(EwOp::Add, 3, 2)},
                                {dense, InputLayout::RowValue, InputLayout::SharedOverD0},
                                ValueRange{-3.0f, 3.0f, false, false, false}));
  cases.push_back(make_row_case("sum of exp(tanh x)", RowOp::Sum,
                                {node(EwOp::Input, 0), node(EwOp::Tanh, 0), node(EwOp::Exp, 1)}, {dense}));
  RowCase fast = make_row_case("softmax fast of x-scalar", RowOp::Softmax,
                               {node(EwOp::Input, 0), node(EwOp::Input, 1), node(EwOp::Sub, 0, 1)},
                               {dense, InputLayout::Scalar});
  fast.spec.prologue.math = MathMode::Fast;
  cases.push_back(fast);
  RowCase ln = make_row_case("layer_norm of x+shared-d1, scale only", RowOp::LayerNorm,
                             {node(EwOp::Input, 0), node(EwOp::Input, 1), node(EwOp::Add, 0, 1)},
                             {dense, InputLayout::SharedOverD1});
  ln.spec.has_scale = true;
  ln.spec.epsilon = 1e-3f;
  cases.push_back(ln);
  cases.push_back(make_row_case("max of relu(x)", RowOp::Max, {node(EwOp::Input, 0), node(EwOp::Relu, 0)}, {dense}));
}

void add_shape_cases(std::vector<RowCase>& cases) {
  RowCase exact = identity_case("layer_norm exact 2x3x777", RowOp::LayerNorm);
  exact.dims = {2, 3, 777};
  exact.spec.prologue.exact_dims = exact.dims;
  cases.push_back(exact);
  RowCase exact_sum = identity_case("sum exact 4x1x33", RowOp::Sum);
  exact_sum.dims = {4, 1, 33};
  exact_sum.spec.prologue.exact_dims = exact_sum.dims;
  cases.push_back(exact_sum);
  RowCase short_rows = identity_case("max 64x1x7", RowOp::Max);
  short_rows.dims = {64, 1, 7};
  cases.push_back(short_rows);
  RowCase long_rows = identity_case("mean 1x2x5000", RowOp::Mean);
  long_rows.dims = {1, 2, 5000};
  cases.push_back(long_rows);
  RowCase many_rows = identity_case("softmax 100x30x40", RowOp::Softmax);
  many_rows.dims = {100, 30, 40};
  cases.push_back(many_rows);
  for (RowOp op : {RowOp::Sum, RowOp::Mean, RowOp::Softmax}) {
    RowCase empty = identity_case(std::string(row_op_name(op)) + " of empty rows", op);
    empty.dims = {2, 3, 0};
    cases.push_back(empty);
  }
  for (RowOp op : {RowOp::Softmax, RowOp::LayerNorm}) {
    RowCase single = identity_case(std::string(row_op_name(op)) + " of 1-element rows", op);
    single.dims = {5, 2, 1};
    cases.push_back(single);
  }
  RowCase tiny_var = identity_case("layer_norm, variance below epsilon", RowOp::LayerNorm);
  tiny_var.values = ValueRange{0.999f, 1.001f, false, false, false};
  tiny_var.spec.has_scale = tiny_var.spec.has_bias = false;
  cases.push_back(tiny_var);
}

void add_canary_cases(std::vector<RowCase>& cases) {
  for (RowOp op : {RowOp::Sum, RowOp::Max, RowOp::Softmax, RowOp::LayerNorm}) {
    RowCase poisoned = identity_case(std::string(row_op_name(op)) + " NaN/Inf rows, canary", op);
    poisoned.poison_rows = true;
    poisoned.spec.prologue.check_non_finite = true;
    cases.push_back(poisoned);
  }
  RowCase clean = identity_case("softmax canary clean", RowOp::Softmax);
  clean.spec.prologue.check_non_finite = true;
  cases.push_back(clean);
}

// The reference's row values (the prologue over the whole space), for the bounds.
std::vector<float> prologue_values(const RowCase& c, const RowCaseData& data) {
  const std::int64_t n = c.dims[0] * c.dims[1] * c.dims[2];
  std::vector<float> v(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)));
  FusedElementwiseSpec p = c.spec.prologue;
  p.check_non_finite = false;
  float* outs[] = {v.data()};
  FusedArgs a = data.prologue.args;
  a.outputs = outs;
  if (n > 0) evaluate_fused_reference(p, a);
  return v;
}

// Statistics of one row's values in double.
struct RowStats {
  double sum_abs = 0, mean = 0, rstd = 0, max = -INFINITY, min = INFINITY;
};

RowStats row_stats(const float* v, std::int64_t n, float epsilon) {
  RowStats s;
  double sum = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    sum += v[j];
    s.sum_abs += std::fabs(static_cast<double>(v[j]));
    s.max = std::max(s.max, static_cast<double>(v[j]));
    s.min = std::min(s.min, static_cast<double>(v[j]));
  }
  s.mean = n > 0 ? sum / static_cast<double>(n) : 0.0;
  double sq = 0;
  for (std::int64_t j = 0; j < n; ++j) sq += (v[j] - s.mean) * (v[j] - s.mean);
  s.rstd = n > 0 ? 1.0 / std::sqrt(sq / static_cast<double>(n) + epsilon) : 0.0;
  return s;
}

// The error an f32 fold of n values (sum_abs their magnitudes) may make.
double sum_bound(const FusedRowSpec& spec, std::int64_t n, double sum_abs, double want) {
  if (spec.accumulation == Accumulation::Compensated)
    return 2 * kEps * std::fabs(want) + 4.0 * static_cast<double>(row_fold_depth(n)) * kEps * kEps * sum_abs;
  return (row_fold_depth(n) + 1) * kEps * sum_abs;
}

// The bound for element j of a row (one value per row: j = 0).
double element_bound(const RowCase& c, const float* v, std::int64_t n, const RowStats& s, std::int64_t j, double want,
                     const RowCaseData& data) {
  const FusedRowSpec& spec = c.spec;
  const double depth = row_fold_depth(n);
  switch (spec.op) {
    case RowOp::Sum: return sum_bound(spec, n, s.sum_abs, want);
    case RowOp::Mean: return sum_bound(spec, n, s.sum_abs, want) / static_cast<double>(n) + kEps * std::fabs(want);
    case RowOp::Max: return 0.0;
    case RowOp::Softmax: {
      // exp's own error (the routine's ulps, its argument's rounding), the
      // denominator's fold, the division.
      const double spread = s.max - s.min;
      const double exp_ulps = spec.prologue.math == MathMode::Fast ? 8.0 : 2.0;
      const double rel = 2 * (exp_ulps + spread) + depth + 3 + (spec.prologue.math == MathMode::Fast ? 4 : 0);
      return rel * kEps * std::fabs(want);
    }
    case RowOp::LayerNorm: {
      const double scale = spec.has_scale ? std::fabs(static_cast<double>(data.scale[j])) : 1.0;
      const double dev = std::fabs(static_cast<double>(v[j]) - s.mean);
      const double mean_error = (depth + 2) * kEps * s.sum_abs / static_cast<double>(n);
      const double rstd_rel = 0.5 * (depth + 3) * kEps + 4 * kEps;
      return (dev * rstd_rel + mean_error + kEps * dev) * s.rstd * scale + 2 * kEps * std::fabs(want);
    }
  }
  return 0.0;
}

}  // namespace

std::vector<RowCase> row_cases() {
  std::vector<RowCase> cases;
  add_op_cases(cases);
  add_prologue_cases(cases);
  add_shape_cases(cases);
  add_canary_cases(cases);
  return cases;
}

void make_row_case_data(const RowCase& c, std::uint64_t seed, RowCaseData* data, float fill) {
  DiffCase as_fused;
  as_fused.spec = c.spec.prologue;
  as_fused.layouts = c.layouts;
  as_fused.values = c.values;
  *data = RowCaseData{};
  make_case_data(as_fused, c.dims, seed, &data->prologue);
  const std::int64_t d2 = c.dims[2], rows = c.dims[0] * c.dims[1];
  if (c.poison_rows && rows > 2 && d2 > 0 && c.layouts.front() == InputLayout::Dense) {
    data->prologue.inputs.front()[static_cast<std::size_t>(1 * d2 + d2 / 2)] = std::numeric_limits<float>::quiet_NaN();
    data->prologue.inputs.front()[static_cast<std::size_t>(2 * d2)] = std::numeric_limits<float>::infinity();
  }
  for (std::int64_t j = 0; j < d2; ++j) {
    data->scale.push_back(0.5f + 0.01f * static_cast<float>(j % 97));
    data->bias.push_back(-1.0f + 0.02f * static_cast<float>(j % 53));
  }
  const bool full = c.spec.op == RowOp::Softmax || c.spec.op == RowOp::LayerNorm;
  data->output.assign(static_cast<std::size_t>(std::max<std::int64_t>(full ? rows * d2 : rows, 1)), fill);
  RowArgs& a = data->args;
  a.inputs = data->prologue.input_ptrs.data();
  a.strides = data->prologue.strides.data();
  a.output = data->output.data();
  a.scale = c.spec.has_scale ? data->scale.data() : nullptr;
  a.bias = c.spec.has_bias ? data->bias.data() : nullptr;
  for (int d = 0; d < 3; ++d) a.dims[d] = c.dims[d];
  a.row_begin = 0;
  a.row_end = rows;
}

int row_fold_depth(std::int64_t d2) {
  const std::int64_t threads = cuda::row_block_threads(d2);
  return static_cast<int>((d2 + threads - 1) / threads) + 5 + static_cast<int>(threads / 32);
}

RowOutcome compare_row_outputs(const RowCase& c, const RowCaseData& got, const RowCaseData& want) {
  RowOutcome o;
  const std::int64_t d2 = c.dims[2], rows = c.dims[0] * c.dims[1];
  const bool full = c.spec.op == RowOp::Softmax || c.spec.op == RowOp::LayerNorm;
  const std::int64_t per_row = full ? d2 : 1;
  const std::vector<float> values = prologue_values(c, want);
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* v = values.data() + r * d2;
    const RowStats s = row_stats(v, d2, c.spec.epsilon);
    for (std::int64_t j = 0; j < per_row; ++j) {
      const float g = got.output[static_cast<std::size_t>(r * per_row + j)];
      const float w = want.output[static_cast<std::size_t>(r * per_row + j)];
      ++o.elements;
      bool ok = false;
      double bound = 0.0, ratio = 0.0;
      if (std::isnan(w) || std::isnan(g) || std::isinf(w) || std::isinf(g)) {
        ok = (std::isnan(w) && std::isnan(g)) || g == w;
        ratio = ok ? 0.0 : INFINITY;
      } else {
        bound = kMargin * element_bound(c, v, d2, s, j, w, want) + std::numeric_limits<float>::denorm_min();
        const double err = std::fabs(static_cast<double>(g) - static_cast<double>(w));
        ratio = err / bound;
        ok = err <= bound;
      }
      o.max_error = std::max(o.max_error, ratio);
      if (ok || o.failures++ > 0) continue;
      char text[200];
      std::snprintf(text, sizeof text, "row %lld [%lld]: got %.9g want %.9g (bound %.3g)", static_cast<long long>(r),
                    static_cast<long long>(j), static_cast<double>(g), static_cast<double>(w), bound);
      o.first_failure = text;
    }
  }
  return o;
}

}  // namespace canary::jit::cuda_test
