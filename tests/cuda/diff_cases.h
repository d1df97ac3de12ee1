// The differential catalog shared by the CUDA tests and bench/gpu/gpu_check:
// fused specs covering every EwOp (exact and fast), broadcast layouts, exact
// dims, multiple outputs and the value canary, each with its input data and
// the error bound a backend must meet against evaluate_fused_reference.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "jit/fused_kernel.h"

namespace canary::jit::cuda_test {

// How one input is laid out over the [d0, d1, d2] space.
enum class InputLayout {
  Dense,          // stride0 = d1 d2, stride1 = d2, runs along d2
  RowValue,       // one value per (i0, i1): inner_broadcast, stride0 = d1, stride1 = 1
  SharedOverD0,   // stride0 = 0, stride1 = d2 (broadcast along dim 0)
  SharedOverD1,   // stride0 = d2, stride1 = 0 (broadcast along dim 1)
  Scalar,         // one value: inner_broadcast, both strides 0
};

// How input values are drawn.
struct ValueRange {
  float lo = -10.0f;
  float hi = 10.0f;
  bool log_uniform = false;   // |x| log-uniform in [lo, hi] (lo > 0), random sign if signed
  bool signed_values = false; // with log_uniform: both signs
  bool specials = true;       // sprinkle NaN, +-inf, +-0, subnormals, extremes
};

struct DiffCase {
  std::string name;
  FusedElementwiseSpec spec;
  std::array<std::int64_t, 3> dims{3, 5, 1031};
  std::vector<InputLayout> layouts;  // per input
  ValueRange values;
  double max_ulp = 0.0;  // an element passes within max_ulp ulps ...
  double abs_tol = 0.0;  // ... or within abs_tol absolutely
};

// The catalog.
std::vector<DiffCase> differential_cases();

// Host data for one case: inputs drawn from the case's range (seeded), the
// strides, and output buffers.
struct CaseData {
  std::vector<std::vector<float>> inputs;
  std::vector<std::int64_t> strides;
  std::vector<std::vector<float>> outputs;
  std::vector<const float*> input_ptrs;
  std::vector<float*> output_ptrs;
  FusedArgs args;  // full row range
};
// dims override the case's dims (symbolic specs only); fill is the value outputs start with.
void make_case_data(const DiffCase& c, const std::array<std::int64_t, 3>& dims, std::uint64_t seed, CaseData* data,
                    float fill = 0.0f);

// The first index where a and b differ in their bits, any NaN matching any
// NaN (the GPU's arithmetic returns the canonical 0x7fffffff where x86 keeps
// or makes other payloads); -1 when none does, 0 when the sizes differ.
std::int64_t first_bit_difference(const std::vector<float>& a, const std::vector<float>& b);

// Distance in representable floats (0 for equal values, +-0, two NaNs;
// infinity when exactly one is NaN).
double ulp_distance(float got, float want);

struct DiffOutcome {
  double max_ulp = 0.0;
  double max_abs = 0.0;  // over finite pairs
  std::int64_t elements = 0;
  std::int64_t failures = 0;
  std::string first_failure;  // "out0[17]: got 1.5 want 1.25 (x = ...)"
  bool passed() const { return failures == 0; }
};
// Compares got against want for every output element under the case's bound.
DiffOutcome compare_outputs(const DiffCase& c, const CaseData& got, const CaseData& want);

}  // namespace canary::jit::cuda_test
