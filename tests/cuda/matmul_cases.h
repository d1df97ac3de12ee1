// The matrix-product catalog shared by the CUDA tests and bench/gpu/gpu_check:
// MatmulSpecs and dims covering plain, transposed, scaled and biased
// products, batches with and without a broadcast operand, dims that are not
// multiples of the 64-wide tile, K = 0, one-element products and NaN/Inf
// operands; their data; the fp64 reference; the host model of the kernel's
// arithmetic (ptx_matmul.h: one fma per k in increasing k, then alpha, then
// the bias); and the comparison against the reference under a bound derived
// per element from the operands.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jit/cuda/fused_runner.h"
#include "jit/cuda/ptx_matmul.h"

namespace canary::jit::cuda_test {

struct MatmulCase {
  std::string name;
  cuda::MatmulSpec spec;
  cuda::MatmulDims dims;   // stride_a / stride_b: m k or k n, or 0 to broadcast
  bool poison = false;     // A gets a NaN in row 1 and a +Inf in row 2 (batch entry 0)
};

std::vector<MatmulCase> matmul_cases();

// Host data for one case: A, B, the bias (n floats) and C filled with `fill`.
struct MatmulCaseData {
  std::vector<float> a, b, bias, c;
  cuda::MatmulArgs args;
};
void make_matmul_case_data(const MatmulCase& c, std::uint64_t seed, MatmulCaseData* data, float fill = 0.0f);

// C in double precision from the same operands, and, per element, the bound
// a float evaluation in any order meets: (K + 2) * 2^-24 * (|alpha| sum_k |a b| + |bias|),
// plus the rounding of the result itself.
struct MatmulReference {
  std::vector<double> c;
  std::vector<double> bound;
};
MatmulReference evaluate_matmul_reference(const MatmulCase& c, const MatmulCaseData& data);

// C as the GPU kernel computes it, bit for bit (NaN payloads aside).
void evaluate_matmul_model(const MatmulCase& c, MatmulCaseData* data);

struct MatmulOutcome {
  std::int64_t elements = 0;
  std::int64_t failures = 0;
  double max_error = 0.0;  // the largest |got - want| / bound over finite elements
  std::string first_failure;
  bool passed() const { return failures == 0; }
};
// got's C against the reference: NaN where the reference is NaN, the same
// infinity, and finite values within the bound.
MatmulOutcome compare_matmul(const MatmulCase& c, const MatmulCaseData& got, const MatmulReference& want);

}  // namespace canary::jit::cuda_test
