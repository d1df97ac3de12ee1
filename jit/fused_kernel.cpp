// FusedElementwiseSpec: op names and arities, the well-formedness check, the
// stable text key, and the plain C++ reference evaluator every backend is
// tested against.
#include "jit/fused_kernel.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>

#include "canary/error.h"
#include "kernels/scalar_math.h"

namespace canary::jit {
namespace {

// The highest EwOp value; checks reject anything above it.
constexpr auto kLastOp = EwOp::Clip;

// Shortest text that reads back as exactly `v`; NaN keeps its bits.
std::string float_text(float v) {
  if (std::isnan(v)) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    char buf[16];
    auto end = std::to_chars(buf, buf + sizeof buf, bits, 16).ptr;
    return "nan:0x" + std::string(buf, end);
  }
  char buf[32];
  auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  return std::string(buf, end);
}

// "%3" for node 3.
std::string node_ref(std::uint16_t i) { return "%" + std::to_string(i); }

// One node as "add(%0,%1)" / "input(1)" / "clip(%2,0,6)".
std::string node_text(const EwNode& n) {
  std::string s = ew_op_name(n.op);
  switch (n.op) {
    case EwOp::Input: return s + "(" + std::to_string(n.input) + ")";
    case EwOp::Constant: return s + "(" + float_text(n.imm0) + ")";
    case EwOp::Gelu: return s + "(" + node_ref(n.a) + (n.imm0 == 1.0f ? ",tanh)" : ",erf)");
    case EwOp::LeakyRelu: return s + "(" + node_ref(n.a) + "," + float_text(n.imm0) + ")";
    case EwOp::HardSigmoid:
    case EwOp::HardSwish:
    case EwOp::Clip: return s + "(" + node_ref(n.a) + "," + float_text(n.imm0) + "," + float_text(n.imm1) + ")";
    default: break;
  }
  if (ew_arity(n.op) == 2) return s + "(" + node_ref(n.a) + "," + node_ref(n.b) + ")";
  return s + "(" + node_ref(n.a) + ")";
}

// Why node i is malformed, or empty.
std::string node_problem(const FusedElementwiseSpec& spec, std::size_t i) {
  const EwNode& n = spec.nodes[i];
  const std::string where = "node " + std::to_string(i);
  if (n.op > kLastOp) return where + ": unknown op " + std::to_string(static_cast<int>(n.op));
  const int arity = ew_arity(n.op);
  const std::string named = where + " (" + ew_op_name(n.op) + "): ";
  if (arity >= 1 && n.a >= i) return named + "operand a = " + node_ref(n.a) + " is not an earlier node";
  if (arity == 2 && n.b >= i) return named + "operand b = " + node_ref(n.b) + " is not an earlier node";
  if (n.op == EwOp::Input && n.input >= spec.num_inputs)
    return where + " (input): input " + std::to_string(n.input) + " out of range, the spec has " +
           std::to_string(spec.num_inputs) + " inputs";
  if (n.op == EwOp::Gelu && n.imm0 != 0.0f && n.imm0 != 1.0f)
    return where + " (gelu): mode imm0 must be 0 (erf) or 1 (tanh), got " + float_text(n.imm0);
  return {};
}

// Logistic function without overflow, as the reference Sigmoid kernel.
float sigmoid(float x) {
  if (x >= 0) return 1.0f / (1.0f + std::exp(-x));
  const float e = std::exp(x);
  return e / (1.0f + e);
}

// GELU in its erf form (imm0 == 0) or tanh form, as the reference Gelu kernels.
float gelu(float x, bool approximate_tanh) {
  return approximate_tanh ? kernels::gelu_tanh(x) : kernels::gelu_erf(x);
}

// Softplus without overflow, as the reference kernel.
float softplus(float x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

// Max as the reference kernels: a < b ? b : a, NaN when either is NaN.
float max_of(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
  return a < b ? b : a;
}

// Min as the reference kernels: b < a ? b : a, NaN when either is NaN.
float min_of(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
  return b < a ? b : a;
}

// HardSigmoid as fmax(0, fmin(1, alpha x + beta)): NaN gives 1 (fmin drops
// it). fmax(0, -0) is +0, as the optimised reference kernel computes it
// (libm's out-of-line fmax would return -0; the ISO standard leaves it open).
// The product is rounded on its own (no fused multiply-add), as emitted code does.
float hard_sigmoid(float x, float alpha, float beta) {
  const volatile float product = alpha * x;
  const float y = product + beta;
  const float t = std::isnan(y) ? 1.0f : (y < 1.0f ? y : 1.0f);
  return t > 0.0f ? t : 0.0f;
}

// Clip as the reference kernel: NaN stays NaN; low > high gives high.
float clip(float v, float low, float high) { return v < low ? (low > high ? high : low) : (v > high ? high : v); }

// One unary node applied to a.
float apply_unary(const EwNode& n, float a) {
  switch (n.op) {
    case EwOp::Neg: return -a;
    case EwOp::Abs: return std::abs(a);
    case EwOp::Exp: return std::exp(a);
    case EwOp::Log: return std::log(a);
    case EwOp::Sqrt: return std::sqrt(a);
    case EwOp::Tanh: return std::tanh(a);
    case EwOp::Sigmoid: return sigmoid(a);
    case EwOp::Relu: return a < 0 ? 0.0f : a;
    case EwOp::Erf: return std::erf(a);
    case EwOp::Reciprocal: return 1.0f / a;
    case EwOp::Floor: return std::floor(a);
    case EwOp::Ceil: return std::ceil(a);
    case EwOp::Round: return std::nearbyint(a);
    case EwOp::Softplus: return softplus(a);
    case EwOp::Gelu: return gelu(a, n.imm0 == 1.0f);
    case EwOp::LeakyRelu: return a < 0 ? n.imm0 * a : a;
    case EwOp::HardSigmoid: return hard_sigmoid(a, n.imm0, n.imm1);
    case EwOp::HardSwish: return a * hard_sigmoid(a, n.imm0, n.imm1);
    case EwOp::Clip: return clip(a, n.imm0, n.imm1);
    default: return std::numeric_limits<float>::quiet_NaN();
  }
}

// One binary node applied to (a, b).
float apply_binary(EwOp op, float a, float b) {
  switch (op) {
    case EwOp::Add: return a + b;
    case EwOp::Sub: return a - b;
    case EwOp::Mul: return a * b;
    case EwOp::Div: return a / b;
    case EwOp::Max: return max_of(a, b);
    case EwOp::Min: return min_of(a, b);
    default: return std::numeric_limits<float>::quiet_NaN();
  }
}

}  // namespace

// 0 for Input/Constant, 2 for the binary ops, 1 for the rest.
int ew_arity(EwOp op) {
  switch (op) {
    case EwOp::Input:
    case EwOp::Constant: return 0;
    case EwOp::Add:
    case EwOp::Sub:
    case EwOp::Mul:
    case EwOp::Div:
    case EwOp::Max:
    case EwOp::Min: return 2;
    default: return 1;
  }
}

// The ops jit/x86/vector_math approximates.
bool ew_is_transcendental(EwOp op) {
  switch (op) {
    case EwOp::Exp:
    case EwOp::Log:
    case EwOp::Tanh:
    case EwOp::Sigmoid:
    case EwOp::Erf:
    case EwOp::Softplus:
    case EwOp::Gelu: return true;
    default: return false;
  }
}

// Lower-case op names for keys, listings and events.
const char* ew_op_name(EwOp op) {
  switch (op) {
    case EwOp::Input: return "input";
    case EwOp::Constant: return "const";
    case EwOp::Add: return "add";
    case EwOp::Sub: return "sub";
    case EwOp::Mul: return "mul";
    case EwOp::Div: return "div";
    case EwOp::Max: return "max";
    case EwOp::Min: return "min";
    case EwOp::Neg: return "neg";
    case EwOp::Abs: return "abs";
    case EwOp::Exp: return "exp";
    case EwOp::Log: return "log";
    case EwOp::Sqrt: return "sqrt";
    case EwOp::Tanh: return "tanh";
    case EwOp::Sigmoid: return "sigmoid";
    case EwOp::Relu: return "relu";
    case EwOp::Erf: return "erf";
    case EwOp::Reciprocal: return "reciprocal";
    case EwOp::Floor: return "floor";
    case EwOp::Ceil: return "ceil";
    case EwOp::Round: return "round";
    case EwOp::Softplus: return "softplus";
    case EwOp::Gelu: return "gelu";
    case EwOp::LeakyRelu: return "leaky_relu";
    case EwOp::HardSigmoid: return "hard_sigmoid";
    case EwOp::HardSwish: return "hard_swish";
    case EwOp::Clip: return "clip";
  }
  return "?";
}

// "ew in=2 bc=01 math=exact nf=1 dims=4x3x16 out=%3 : %0=input(0) ..."
std::string FusedElementwiseSpec::key() const {
  std::string s = "ew in=" + std::to_string(num_inputs) + " bc=";
  for (bool b : inner_broadcast) s += b ? '1' : '0';
  s += math == MathMode::Exact ? " math=exact" : " math=fast";
  s += check_non_finite ? " nf=1" : " nf=0";
  for (std::size_t k = 0; k < output_ranges.size(); ++k)
    if (output_ranges[k]) s += " range" + std::to_string(k) + "=[" + float_text(output_ranges[k]->lo) + "," +
                             float_text(output_ranges[k]->hi) + "]";
  if (exact_dims) {
    const auto& d = *exact_dims;
    s += " dims=" + std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
  } else {
    s += " dims=sym";
  }
  s += " out=";
  for (std::size_t k = 0; k < outputs.size(); ++k) s += (k ? "," : "") + node_ref(outputs[k]);
  s += " :";
  for (std::size_t i = 0; i < nodes.size(); ++i) s += " %" + std::to_string(i) + "=" + node_text(nodes[i]);
  return s;
}

std::string describe_range(const ValueRange& range) {
  return "[" + float_text(range.lo) + ", " + float_text(range.hi) + "]";
}

// The first problem found walking the spec's fields in order, or empty.
std::string check_fused_spec(const FusedElementwiseSpec& spec) {
  if (spec.nodes.empty()) return "the spec has no nodes";
  if (spec.inner_broadcast.size() != spec.num_inputs)
    return "inner_broadcast has " + std::to_string(spec.inner_broadcast.size()) + " flags, expected one per input (" +
           std::to_string(spec.num_inputs) + ")";
  for (std::size_t i = 0; i < spec.nodes.size(); ++i)
    if (std::string why = node_problem(spec, i); !why.empty()) return why;
  if (spec.outputs.empty()) return "the spec has no outputs";
  for (std::size_t k = 0; k < spec.outputs.size(); ++k)
    if (spec.outputs[k] >= spec.nodes.size())
      return "output " + std::to_string(k) + " names " + node_ref(spec.outputs[k]) + ", past the last node";
  if (spec.exact_dims)
    for (std::int64_t d : *spec.exact_dims)
      if (d < 0) return "exact dims hold a negative extent " + std::to_string(d);
  if (!spec.output_ranges.empty() && spec.output_ranges.size() != spec.outputs.size())
    return "output_ranges has " + std::to_string(spec.output_ranges.size()) + " entries, expected one per output (" +
           std::to_string(spec.outputs.size()) + ")";
  for (std::size_t k = 0; k < spec.output_ranges.size(); ++k) {
    const std::optional<ValueRange>& r = spec.output_ranges[k];
    if (r && !(std::isfinite(r->lo) && std::isfinite(r->hi) && r->lo <= r->hi))
      return "output " + std::to_string(k) + " has the range [" + float_text(r->lo) + ", " + float_text(r->hi) +
             "], which is not a finite interval";
  }
  return {};
}

// Computes rows [row_begin, row_end) element by element, nodes in order.
std::uint32_t evaluate_fused_reference(const FusedElementwiseSpec& spec, const FusedArgs& args) {
  if (std::string why = check_fused_spec(spec); !why.empty())
    throw Error(ErrorKind::Internal, "fused elementwise spec: " + why);
  const std::int64_t d1 = spec.exact_dims ? (*spec.exact_dims)[1] : args.dims[1];
  const std::int64_t d2 = spec.exact_dims ? (*spec.exact_dims)[2] : args.dims[2];
  std::vector<float> values(spec.nodes.size());
  bool non_finite = false, outside = false;
  for (std::int64_t row = args.row_begin; row < args.row_end; ++row) {
    const std::int64_t i0 = row / d1, i1 = row % d1;
    for (std::int64_t i2 = 0; i2 < d2; ++i2) {
      for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
        const EwNode& n = spec.nodes[i];
        if (n.op == EwOp::Input) {
          const std::int64_t* s = args.strides + 2 * n.input;
          const std::int64_t at = i0 * s[0] + i1 * s[1] + (spec.inner_broadcast[n.input] ? 0 : i2);
          values[i] = args.inputs[n.input][at];
        } else if (n.op == EwOp::Constant) {
          values[i] = n.imm0;
        } else if (ew_arity(n.op) == 2) {
          values[i] = apply_binary(n.op, values[n.a], values[n.b]);
        } else {
          values[i] = apply_unary(n, values[n.a]);
        }
      }
      for (std::size_t k = 0; k < spec.outputs.size(); ++k) {
        const float v = values[spec.outputs[k]];
        args.outputs[k][row * d2 + i2] = v;
        non_finite = non_finite || !std::isfinite(v);
        if (k < spec.output_ranges.size() && spec.output_ranges[k])
          outside = outside || v < spec.output_ranges[k]->lo || v > spec.output_ranges[k]->hi;
      }
    }
  }
  return (spec.check_non_finite && non_finite ? kNonFiniteCanary : 0u) | (outside ? kRangeCanary : 0u);
}

}  // namespace canary::jit
