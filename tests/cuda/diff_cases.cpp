// The differential catalog: spec construction, input data and the
// ulp/absolute comparison shared by the CUDA tests and the GPU check.
#include "tests/cuda/diff_cases.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>

namespace canary::jit::cuda_test {
namespace {

EwNode input_node(std::uint16_t k) {
  EwNode n;
  n.op = EwOp::Input;
  n.input = k;
  return n;
}

EwNode const_node(float v) {
  EwNode n;
  n.op = EwOp::Constant;
  n.imm0 = v;
  return n;
}

EwNode op_node(EwOp op, std::uint16_t a, std::uint16_t b = 0, float imm0 = 0.0f, float imm1 = 0.0f) {
  EwNode n;
  n.op = op;
  n.a = a;
  n.b = b;
  n.imm0 = imm0;
  n.imm1 = imm1;
  return n;
}

bool is_inner_broadcast(InputLayout l) { return l == InputLayout::RowValue || l == InputLayout::Scalar; }

// A case whose spec has the given nodes, layouts (one per input) and last node as output.
DiffCase make_case(std::string name, std::vector<EwNode> nodes, std::vector<InputLayout> layouts, MathMode mode,
                   ValueRange values, double max_ulp, double abs_tol) {
  DiffCase c;
  c.name = std::move(name);
  c.spec.nodes = std::move(nodes);
  c.spec.num_inputs = static_cast<std::uint16_t>(layouts.size());
  for (InputLayout l : layouts) c.spec.inner_broadcast.push_back(is_inner_broadcast(l));
  c.spec.outputs = {static_cast<std::uint16_t>(c.spec.nodes.size() - 1)};
  c.spec.math = mode;
  c.layouts = std::move(layouts);
  c.values = values;
  c.max_ulp = max_ulp;
  c.abs_tol = abs_tol;
  return c;
}

// One unary op on one dense input.
DiffCase unary_case(EwOp op, MathMode mode, ValueRange values, double max_ulp, double abs_tol, float imm0 = 0.0f,
                    float imm1 = 0.0f, const std::string& suffix = "") {
  std::string name = std::string(ew_op_name(op)) + suffix + (mode == MathMode::Fast ? "/fast" : "");
  return make_case(name, {input_node(0), op_node(op, 0, 0, imm0, imm1)}, {InputLayout::Dense}, mode, values, max_ulp,
                   abs_tol);
}

// One binary op on two inputs with the given layouts.
DiffCase binary_case(EwOp op, InputLayout a, InputLayout b, ValueRange values, const std::string& suffix = "") {
  return make_case(std::string(ew_op_name(op)) + suffix, {input_node(0), input_node(1), op_node(op, 0, 1)}, {a, b},
                   MathMode::Exact, values, 0.0, 0.0);
}

void add_unary_cases(std::vector<DiffCase>& cases) {
  const ValueRange wide{-1000.0f, 1000.0f};
  const ValueRange magnitudes{1e-40f, 3e38f, true, true};
  const ValueRange positive{1e-45f, 3e38f, true, false};
  for (EwOp op : {EwOp::Neg, EwOp::Abs, EwOp::Relu, EwOp::Floor, EwOp::Ceil, EwOp::Round})
    cases.push_back(unary_case(op, MathMode::Exact, wide, 0.0, 0.0));
  cases.push_back(unary_case(EwOp::Sqrt, MathMode::Exact, positive, 0.0, 0.0));
  cases.push_back(unary_case(EwOp::Reciprocal, MathMode::Exact, magnitudes, 0.0, 0.0));
  cases.push_back(unary_case(EwOp::LeakyRelu, MathMode::Exact, wide, 0.0, 0.0, 0.01f));
  cases.push_back(unary_case(EwOp::HardSigmoid, MathMode::Exact, ValueRange{-8.0f, 8.0f}, 0.0, 0.0, 0.2f, 0.5f));
  cases.push_back(unary_case(EwOp::HardSwish, MathMode::Exact, ValueRange{-8.0f, 8.0f}, 0.0, 0.0, 1.0f / 6.0f, 0.5f));
  cases.push_back(unary_case(EwOp::Clip, MathMode::Exact, ValueRange{-10.0f, 10.0f}, 0.0, 0.0, -1.0f, 6.0f));
  cases.push_back(unary_case(EwOp::Clip, MathMode::Exact, ValueRange{-10.0f, 10.0f}, 0.0, 0.0, 3.0f, 2.0f, "(low>high)"));
  for (MathMode mode : {MathMode::Exact, MathMode::Fast}) {
    const double ulp = mode == MathMode::Exact ? 4.0 : 8.0;
    cases.push_back(unary_case(EwOp::Exp, mode, ValueRange{-105.0f, 90.0f}, ulp, 0.0));
    cases.push_back(unary_case(EwOp::Log, mode, positive, ulp, mode == MathMode::Exact ? 0.0 : 5e-7));
    cases.push_back(unary_case(EwOp::Tanh, mode, ValueRange{-12.0f, 12.0f}, ulp, 0.0));
    cases.push_back(unary_case(EwOp::Erf, mode, ValueRange{-5.0f, 5.0f}, ulp, 0.0));
    cases.push_back(unary_case(EwOp::Sigmoid, mode, ValueRange{-100.0f, 100.0f}, ulp, 0.0));
    cases.push_back(unary_case(EwOp::Softplus, mode, ValueRange{-100.0f, 100.0f}, ulp, 0.0));
    cases.push_back(unary_case(EwOp::Gelu, mode, ValueRange{-10.0f, 10.0f}, ulp, 2e-6, 0.0f, 0.0f, "(erf)"));
    cases.push_back(unary_case(EwOp::Gelu, mode, ValueRange{-10.0f, 10.0f}, ulp, 2e-6, 1.0f, 0.0f, "(tanh)"));
  }
}

void add_binary_and_broadcast_cases(std::vector<DiffCase>& cases) {
  const ValueRange wide{-1000.0f, 1000.0f};
  const ValueRange magnitudes{1e-30f, 1e30f, true, true};
  const InputLayout dense = InputLayout::Dense;
  for (EwOp op : {EwOp::Add, EwOp::Sub, EwOp::Mul, EwOp::Max, EwOp::Min})
    cases.push_back(binary_case(op, dense, dense, wide));
  cases.push_back(binary_case(EwOp::Div, dense, dense, magnitudes));
  cases.push_back(binary_case(EwOp::Add, dense, InputLayout::RowValue, wide, " dense+row"));
  cases.push_back(binary_case(EwOp::Mul, InputLayout::SharedOverD0, dense, wide, " shared-d0*dense"));
  cases.push_back(binary_case(EwOp::Sub, dense, InputLayout::SharedOverD1, wide, " dense-shared-d1"));
  cases.push_back(binary_case(EwOp::Div, dense, InputLayout::Scalar, magnitudes, " dense/scalar"));
  cases.push_back(binary_case(EwOp::Max, InputLayout::RowValue, InputLayout::Scalar, wide, " row,scalar"));
  cases.push_back(make_case("a*b+c (dense,row,shared-d0)",
                            {input_node(0), input_node(1), input_node(2), op_node(EwOp::Mul, 0, 1),
                             op_node(EwOp::Add, 3, 2)},
                            {dense, InputLayout::RowValue, InputLayout::SharedOverD0}, MathMode::Exact, wide, 0.0, 0.0));
}

// The arithmetic chain the GPU check times: ten cheap ops on one input.
std::vector<EwNode> arithmetic_chain() {
  return {input_node(0),          const_node(1.5f),          const_node(0.25f),        op_node(EwOp::Mul, 0, 1),
          op_node(EwOp::Add, 3, 2), op_node(EwOp::Max, 4, 2), op_node(EwOp::Sub, 5, 0), op_node(EwOp::Abs, 6),
          op_node(EwOp::Mul, 7, 1), op_node(EwOp::Min, 8, 0), op_node(EwOp::Add, 9, 2), op_node(EwOp::Neg, 10),
          op_node(EwOp::Mul, 11, 11)};
}

// A transcendental chain: ten ops including tanh, exp, sigmoid and erf.
std::vector<EwNode> transcendental_chain() {
  return {input_node(0),            const_node(0.5f),          op_node(EwOp::Mul, 0, 1), op_node(EwOp::Tanh, 2),
          op_node(EwOp::Add, 3, 0),  op_node(EwOp::Exp, 1),     op_node(EwOp::Mul, 4, 5), op_node(EwOp::Sigmoid, 6),
          op_node(EwOp::Sub, 7, 1),  op_node(EwOp::Erf, 8),     op_node(EwOp::Relu, 9),   op_node(EwOp::Add, 10, 3),
          op_node(EwOp::Mul, 11, 1)};
}

void add_shape_and_canary_cases(std::vector<DiffCase>& cases) {
  const ValueRange moderate{-4.0f, 4.0f, false, false, false};
  const InputLayout dense = InputLayout::Dense;
  cases.push_back(make_case("chain10 arith", arithmetic_chain(), {dense}, MathMode::Exact, ValueRange{}, 0.0, 0.0));
  cases.push_back(make_case("chain10 transc", transcendental_chain(), {dense}, MathMode::Exact, moderate, 8.0, 1e-6));
  DiffCase exact = make_case("chain10 exact dims", arithmetic_chain(), {dense}, MathMode::Exact, ValueRange{}, 0.0, 0.0);
  exact.spec.exact_dims = exact.dims;
  cases.push_back(exact);
  DiffCase d1 = binary_case(EwOp::Add, dense, InputLayout::RowValue, ValueRange{}, " exact 4x1x777");
  d1.dims = {4, 1, 777};
  d1.spec.exact_dims = d1.dims;
  cases.push_back(d1);
  DiffCase d2 = binary_case(EwOp::Mul, dense, InputLayout::SharedOverD1, ValueRange{}, " exact 64x9x1");
  d2.dims = {64, 9, 1};
  d2.spec.exact_dims = d2.dims;
  cases.push_back(d2);
  DiffCase narrow = binary_case(EwOp::Sub, dense, InputLayout::RowValue, ValueRange{}, " symbolic 7x3x1");
  narrow.dims = {7, 3, 1};
  cases.push_back(narrow);
  DiffCase canary = unary_case(EwOp::Log, MathMode::Exact, ValueRange{-1.0f, 10.0f}, 4.0, 0.0, 0.0f, 0.0f, " canary");
  canary.spec.check_non_finite = true;
  cases.push_back(canary);
  DiffCase clean = unary_case(EwOp::Tanh, MathMode::Exact, moderate, 4.0, 0.0, 0.0f, 0.0f, " canary clean");
  clean.spec.check_non_finite = true;
  cases.push_back(clean);
  DiffCase multi = make_case("3 outputs", {input_node(0), op_node(EwOp::Exp, 0), op_node(EwOp::Tanh, 0)}, {dense},
                             MathMode::Exact, ValueRange{-20.0f, 20.0f}, 4.0, 0.0);
  multi.spec.outputs = {1, 2, 0};
  cases.push_back(multi);
  cases.push_back(make_case("constants only", {const_node(2.0f), op_node(EwOp::Exp, 0)}, {}, MathMode::Exact,
                            ValueRange{}, 4.0, 0.0));
}

// The special values sprinkled into inputs.
const std::vector<float>& special_values() {
  static const std::vector<float> v = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                                       -std::numeric_limits<float>::infinity(), 0.0f, -0.0f, 1e-45f, -1e-40f,
                                       1.17549435e-38f, 3.4028235e38f, -3.4028235e38f, 0.5f, -0.5f, 2.5f, -2.5f, 1.0f,
                                       -1.0f, 88.72f, 89.0f, -103.9f, -88.0f};
  return v;
}

// One input value from the case's range.
float draw(const ValueRange& r, std::mt19937_64& rng, std::size_t index) {
  if (r.specials && index % 7 == 3) return special_values()[(index / 7) % special_values().size()];
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  if (!r.log_uniform) return static_cast<float>(r.lo + (r.hi - r.lo) * unit(rng));
  const double l = std::log(static_cast<double>(r.lo)), h = std::log(static_cast<double>(r.hi));
  const float mag = static_cast<float>(std::exp(l + (h - l) * unit(rng)));
  return r.signed_values && unit(rng) < 0.5 ? -mag : mag;
}

}  // namespace

std::vector<DiffCase> differential_cases() {
  std::vector<DiffCase> cases;
  add_unary_cases(cases);
  add_binary_and_broadcast_cases(cases);
  add_shape_and_canary_cases(cases);
  return cases;
}

void make_case_data(const DiffCase& c, const std::array<std::int64_t, 3>& dims, std::uint64_t seed, CaseData* data,
                    float fill) {
  const std::int64_t d0 = dims[0], d1 = dims[1], d2 = dims[2];
  std::mt19937_64 rng(seed);
  *data = CaseData{};
  for (InputLayout l : c.layouts) {
    std::int64_t s0 = 0, s1 = 0, extent = 1;
    switch (l) {
      case InputLayout::Dense: s0 = d1 * d2, s1 = d2, extent = d0 * d1 * d2; break;
      case InputLayout::RowValue: s0 = d1, s1 = 1, extent = d0 * d1; break;
      case InputLayout::SharedOverD0: s0 = 0, s1 = d2, extent = d1 * d2; break;
      case InputLayout::SharedOverD1: s0 = d2, s1 = 0, extent = d0 * d2; break;
      case InputLayout::Scalar: break;
    }
    std::vector<float> v(static_cast<std::size_t>(std::max<std::int64_t>(extent, 1)));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = draw(c.values, rng, i);
    data->inputs.push_back(std::move(v));
    data->strides.push_back(s0);
    data->strides.push_back(s1);
  }
  for (std::size_t k = 0; k < c.spec.outputs.size(); ++k)
    data->outputs.emplace_back(static_cast<std::size_t>(d0 * d1 * d2), fill);
  for (auto& v : data->inputs) data->input_ptrs.push_back(v.data());
  for (auto& v : data->outputs) data->output_ptrs.push_back(v.data());
  data->args.inputs = data->input_ptrs.data();
  data->args.outputs = data->output_ptrs.data();
  data->args.strides = data->strides.data();
  data->args.dims[0] = d0, data->args.dims[1] = d1, data->args.dims[2] = d2;
  data->args.row_begin = 0;
  data->args.row_end = d0 * d1;
}

std::int64_t first_bit_difference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) return static_cast<std::int64_t>(i);
  }
  return -1;
}

double ulp_distance(float got, float want) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want) ? 0.0 : INFINITY;
  if (got == want) return 0.0;
  auto ordered = [](float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return (u & 0x80000000u) ? -static_cast<std::int64_t>(u & 0x7fffffffu) : static_cast<std::int64_t>(u);
  };
  return static_cast<double>(std::llabs(ordered(got) - ordered(want)));
}

DiffOutcome compare_outputs(const DiffCase& c, const CaseData& got, const CaseData& want) {
  DiffOutcome o;
  for (std::size_t k = 0; k < want.outputs.size(); ++k) {
    for (std::size_t i = 0; i < want.outputs[k].size(); ++i) {
      const float g = got.outputs[k][i], w = want.outputs[k][i];
      const double ulp = ulp_distance(g, w);
      const double abs_err = std::isfinite(g) && std::isfinite(w) ? std::fabs(static_cast<double>(g) - w) : 0.0;
      ++o.elements;
      o.max_ulp = std::max(o.max_ulp, ulp);
      o.max_abs = std::max(o.max_abs, abs_err);
      const bool ok = ulp <= c.max_ulp || (std::isfinite(g) && std::isfinite(w) && abs_err <= c.abs_tol);
      if (ok) continue;
      if (o.failures++ == 0) {
        char text[160];
        std::snprintf(text, sizeof text, "out%zu[%zu]: got %.9g want %.9g (%.0f ulp)", k, i, static_cast<double>(g),
                      static_cast<double>(w), ulp);
        o.first_failure = text;
      }
    }
  }
  return o;
}

}  // namespace canary::jit::cuda_test
