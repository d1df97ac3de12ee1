// FusedElementwiseSpec: the backend-neutral description of one fused
// elementwise group (an expression DAG over f32 inputs with NumPy
// broadcasting) and the calling convention of the kernels backends emit for
// it. The planner builds specs; jit/x86 and jit/cuda turn them into code.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace canary::jit {

// Exact: every transcendental within 4 ulp of libm over the whole float
// range, NaN/Inf/denormals as libm handles them. Fast: documented looser bound
// (see jit/x86/vector_math.h), same special-value behaviour for NaN and Inf.
enum class MathMode : std::uint8_t { Exact, Fast };

// One node of the expression DAG. Operands (a, b, c) index earlier nodes.
enum class EwOp : std::uint8_t {
  Input,        // value of input `input` at the current element
  Constant,     // imm0
  // binary (a, b)
  Add, Sub, Mul, Div, Max, Min,
  // unary (a)
  Neg, Abs, Exp, Log, Sqrt, Tanh, Sigmoid, Relu, Erf, Reciprocal, Floor, Ceil,
  Round,        // half to even
  Softplus,
  Gelu,         // imm0 == 0: x * (1 + erf(x / sqrt 2)) / 2; imm0 == 1: the tanh approximation
  LeakyRelu,    // alpha = imm0
  HardSigmoid,  // max(0, min(1, imm0 * a + imm1))
  HardSwish,    // a * HardSigmoid(a) with imm0, imm1 (1/6 and 1/2 for ONNX's HardSwish)
  Clip,         // min(max(a, imm0), imm1); NaN passes through
};

struct EwNode {
  EwOp op = EwOp::Input;
  std::uint16_t a = 0, b = 0;
  std::uint16_t input = 0;  // EwOp::Input: which kernel input
  float imm0 = 0.0f, imm1 = 0.0f;
};

// Number of operands an op reads (0 for Input/Constant, 1 unary, 2 binary).
int ew_arity(EwOp op);
// True for the ops computed by polynomial approximation (exp, log, tanh,
// sigmoid, erf, softplus, gelu): backends match them within a bound, not bit for bit.
bool ew_is_transcendental(EwOp op);
// "add", "exp", ... for listings and events.
const char* ew_op_name(EwOp op);

// The iteration space is at most 3 collapsed dims [d0, d1, d2], d2 innermost.
// Outputs are dense in that space. Each input is read at
//   i0 * stride0 + i1 * stride1 + i2 * (inner_broadcast ? 0 : 1)
// (element units), so an input either runs contiguously along d2 or holds
// one value per row. The driver collapses the real shapes into this form at
// run time; shapes that do not collapse are not fused.
// The interval a range canary holds an output to.
struct ValueRange {
  float lo = 0.0f;
  float hi = 0.0f;
};

struct FusedElementwiseSpec {
  std::vector<EwNode> nodes;             // topological order
  std::uint16_t num_inputs = 0;
  std::vector<bool> inner_broadcast;     // per input
  std::vector<std::uint16_t> outputs;    // node index stored to output k
  MathMode math = MathMode::Exact;
  // Report non-finite values appearing in the outputs (value canary).
  bool check_non_finite = false;
  // Range canaries: empty, or one entry per output; an output with a range
  // reports elements below lo or above hi (NaN is never outside a range).
  std::vector<std::optional<ValueRange>> output_ranges;
  // Exact-shape variant: loop bounds baked into the code (d0, d1, d2).
  // nullopt: the symbolic variant reads them from FusedArgs.
  std::optional<std::array<std::int64_t, 3>> exact_dims;

  // Stable text form: the cache key, and what listings print.
  std::string key() const;
};

// "[lo, hi]", each bound the shortest text that reads back exactly.
std::string describe_range(const ValueRange& range);

// Empty when the spec is well formed (known ops, operands index earlier
// nodes, input indices and outputs in range, one inner_broadcast flag per
// input, Gelu mode 0 or 1, exact dims not negative); otherwise what is wrong,
// naming the node.
std::string check_fused_spec(const FusedElementwiseSpec& spec);

// Arguments of an emitted elementwise kernel. Rows are the flattened (i0, i1)
// pairs; a call computes rows [row_begin, row_end) so a caller may split the
// work across threads.
struct FusedArgs {
  const float* const* inputs = nullptr;   // num_inputs base pointers
  float* const* outputs = nullptr;        // outputs.size() base pointers
  const std::int64_t* strides = nullptr;  // per input: stride0, stride1 (2 * num_inputs)
  std::int64_t dims[3] = {1, 1, 1};       // d0, d1, d2 (ignored by exact variants)
  std::int64_t row_begin = 0;
  std::int64_t row_end = 0;
};

// Bits of an emitted kernel's result: an output element was NaN or Inf
// (check_non_finite), or outside its output_ranges entry. The outputs are
// complete either way.
inline constexpr std::uint32_t kNonFiniteCanary = 1;
inline constexpr std::uint32_t kRangeCanary = 2;
using FusedFn = std::uint32_t (*)(const FusedArgs* args);

// Evaluates a spec on the CPU in plain C++ (float, libm). The oracle for
// backend tests, and the behaviour every backend must match within its
// MathMode's bound.
std::uint32_t evaluate_fused_reference(const FusedElementwiseSpec& spec, const FusedArgs& args);

}  // namespace canary::jit
