// FusedRowSpec: row op names, the well-formedness check, the stable text key,
// and the plain C++ reference evaluator row kernels are tested against. The
// row ops follow kernels/reference/reduce.cpp: sums, softmax denominators and
// layer-norm statistics accumulate in double; results are rounded to float
// when stored.
#include "jit/fused_row.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <vector>

#include "canary/error.h"

namespace canary::jit {
namespace {

// The highest RowOp and Accumulation values; checks reject anything above them.
constexpr auto kLastRowOp = RowOp::LayerNorm;
constexpr auto kLastAccumulation = Accumulation::Compensated;

// Shortest text that reads back as exactly `v`.
std::string float_text(float v) {
  char buf[32];
  auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  return std::string(buf, end);
}

// The extents (d1, d2) a call iterates: baked into exact variants, else from args.
std::pair<std::int64_t, std::int64_t> row_extents(const FusedRowSpec& spec, const RowArgs& args) {
  if (spec.prologue.exact_dims) return {(*spec.prologue.exact_dims)[1], (*spec.prologue.exact_dims)[2]};
  return {args.dims[1], args.dims[2]};
}

// Evaluates the prologue over one row (i0, i1) into v (d2 values).
void row_values(const FusedElementwiseSpec& one_row, const RowArgs& args, std::int64_t i0, std::int64_t i1,
                std::vector<float>& v) {
  std::vector<const float*> in(one_row.num_inputs, nullptr);
  for (std::size_t k = 0; k < in.size(); ++k) {
    const std::int64_t* s = args.strides + 2 * k;
    if (args.inputs[k]) in[k] = args.inputs[k] + i0 * s[0] + i1 * s[1];
  }
  const std::vector<std::int64_t> zero_strides(2 * in.size(), 0);
  float* out[] = {v.data()};
  FusedArgs row;
  row.inputs = in.data();
  row.outputs = out;
  row.strides = zero_strides.data();
  row.dims[2] = static_cast<std::int64_t>(v.size());
  row.row_end = 1;
  evaluate_fused_reference(one_row, row);
}

// Sum in double of the row values.
double row_sum(const std::vector<float>& v) {
  double sum = 0;
  for (float x : v) sum += static_cast<double>(x);
  return sum;
}

// Max as ReduceMax: a greater value or a NaN replaces the running max (NaN
// sticks); an empty row gives -inf.
float row_max(const std::vector<float>& v) {
  float m = -std::numeric_limits<float>::infinity();
  for (float x : v)
    if (x > m || x != x) m = x;
  return m;
}

// Softmax as the reference kernel: the max is taken with std::max in double
// (a NaN never becomes the max; it makes the denominator NaN instead).
void row_softmax(const std::vector<float>& v, float* out) {
  double max = -std::numeric_limits<double>::infinity();
  for (float x : v) max = std::max(max, static_cast<double>(x));
  double sum = 0;
  for (float x : v) sum += std::exp(static_cast<double>(x) - max);
  for (std::size_t j = 0; j < v.size(); ++j)
    out[j] = static_cast<float>(std::exp(static_cast<double>(v[j]) - max) / sum);
}

// LayerNormalization as the reference kernel (two-pass statistics in double).
void row_layer_norm(const FusedRowSpec& spec, const RowArgs& args, const std::vector<float>& v, float* out) {
  const auto n = static_cast<double>(v.size());
  const double mu = row_sum(v) / n;
  double sq = 0;
  for (float x : v) sq += (static_cast<double>(x) - mu) * (static_cast<double>(x) - mu);
  const double r = 1.0 / std::sqrt(sq / n + static_cast<double>(spec.epsilon));
  for (std::size_t j = 0; j < v.size(); ++j) {
    double y = (static_cast<double>(v[j]) - mu) * r;
    if (spec.has_scale) y *= static_cast<double>(args.scale[j]);
    if (spec.has_bias) y += static_cast<double>(args.bias[j]);
    out[j] = static_cast<float>(y);
  }
}

// Applies the row op to one row's values; true when a written value is NaN or Inf.
bool apply_row_op(const FusedRowSpec& spec, const RowArgs& args, std::int64_t row, const std::vector<float>& v) {
  const auto d2 = static_cast<std::int64_t>(v.size());
  float* out = args.output + row;
  std::int64_t written = 1;
  switch (spec.op) {
    case RowOp::Sum: *out = static_cast<float>(row_sum(v)); break;
    case RowOp::Mean: *out = static_cast<float>(row_sum(v) / static_cast<double>(d2)); break;  // 0/0: NaN
    case RowOp::Max: *out = row_max(v); break;
    case RowOp::Softmax:
      out = args.output + row * d2;
      written = d2;
      row_softmax(v, out);
      break;
    case RowOp::LayerNorm:
      out = args.output + row * d2;
      written = d2;
      if (d2 > 0) row_layer_norm(spec, args, v, out);
      break;
  }
  for (std::int64_t j = 0; j < written; ++j)
    if (!std::isfinite(out[j])) return true;
  return false;
}

}  // namespace

// Lower-case names for keys, listings and events.
const char* row_op_name(RowOp op) {
  switch (op) {
    case RowOp::Sum: return "sum";
    case RowOp::Mean: return "mean";
    case RowOp::Max: return "max";
    case RowOp::Softmax: return "softmax";
    case RowOp::LayerNorm: return "layer_norm";
  }
  return "?";
}

// "plain" or "compensated", for keys, plan listings and candidate names.
const char* accumulation_name(Accumulation a) {
  switch (a) {
    case Accumulation::Plain: return "plain";
    case Accumulation::Compensated: return "compensated";
  }
  return "?";
}

// "row sum : ew ...", "row sum compensated : ew ..." or
// "row layer_norm eps=1e-05 scale=1 bias=0 : ew ..." (plain keys name no accumulation).
std::string FusedRowSpec::key() const {
  std::string s = std::string("row ") + row_op_name(op);
  if (op == RowOp::LayerNorm)
    s += " eps=" + float_text(epsilon) + " scale=" + (has_scale ? "1" : "0") + " bias=" + (has_bias ? "1" : "0");
  if (accumulation != Accumulation::Plain) s += std::string(" ") + accumulation_name(accumulation);
  return s + " : " + prologue.key();
}

// The prologue's problem, or the first problem of the row fields, or empty.
std::string check_row_spec(const FusedRowSpec& spec) {
  if (std::string why = check_fused_spec(spec.prologue); !why.empty()) return "prologue: " + why;
  if (spec.prologue.outputs.size() != 1)
    return "the prologue must have exactly one output (the row value), got " +
           std::to_string(spec.prologue.outputs.size());
  if (spec.op > kLastRowOp) return "unknown row op " + std::to_string(static_cast<int>(spec.op));
  if (spec.accumulation > kLastAccumulation)
    return "unknown accumulation " + std::to_string(static_cast<int>(spec.accumulation));
  if (spec.op != RowOp::LayerNorm && (spec.has_scale || spec.has_bias))
    return std::string("scale and bias apply to layer_norm only, the op is ") + row_op_name(spec.op);
  return {};
}

// Rows [row_begin, row_end): prologue values in float as
// evaluate_fused_reference computes them, then the row op.
std::uint32_t evaluate_row_reference(const FusedRowSpec& spec, const RowArgs& args) {
  if (std::string why = check_row_spec(spec); !why.empty())
    throw Error(ErrorKind::Internal, "fused row spec: " + why);
  const auto [d1, d2] = row_extents(spec, args);
  if (d1 <= 0 || d2 < 0) return 0;
  FusedElementwiseSpec one_row = spec.prologue;
  one_row.exact_dims.reset();
  one_row.check_non_finite = false;
  std::vector<float> v(static_cast<std::size_t>(d2));
  bool non_finite = false;
  for (std::int64_t row = args.row_begin; row < args.row_end; ++row) {
    if (d2 > 0) row_values(one_row, args, row / d1, row % d1, v);
    non_finite = apply_row_op(spec, args, row, v) || non_finite;
  }
  return spec.prologue.check_non_finite && non_finite ? 1u : 0u;
}

}  // namespace canary::jit
