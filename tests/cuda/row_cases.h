// The row-kernel catalog shared by the CUDA tests and bench/gpu/gpu_check:
// FusedRowSpecs covering every RowOp, both accumulations, both math modes,
// broadcast prologue inputs, exact and symbolic dims, short, long and empty
// rows, NaN/Inf rows and the value canary; their data; and the comparison
// of a backend's outputs against evaluate_row_reference under an error bound
// derived per row from the values (the reference sums in double, a kernel in
// f32 along a known fold).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "jit/fused_row.h"
#include "tests/cuda/diff_cases.h"

namespace canary::jit::cuda_test {

struct RowCase {
  std::string name;
  FusedRowSpec spec;
  std::array<std::int64_t, 3> dims{3, 5, 1031};
  std::vector<InputLayout> layouts;  // per prologue input
  ValueRange values;
  // Rows whose first prologue input gets a NaN (row 1) and a +Inf (row 2)
  // at one element (a dense first input only).
  bool poison_rows = false;
};

std::vector<RowCase> row_cases();

// Host data for one case: the prologue's inputs (as make_case_data draws
// them), scale and bias vectors, and the output buffer.
struct RowCaseData {
  CaseData prologue;  // inputs and strides; its outputs are unused
  std::vector<float> scale, bias;
  std::vector<float> output;
  RowArgs args;  // full row range
};
void make_row_case_data(const RowCase& c, std::uint64_t seed, RowCaseData* data, float fill = 0.0f);

// The most f32 additions along any path of the kernel's fold for rows of d2
// elements: a thread's own elements, the 5 butterfly steps, the warp partials.
int row_fold_depth(std::int64_t d2);

struct RowOutcome {
  double max_error = 0.0;   // the largest |got - want| over the bound, over all elements (1 = at the bound)
  std::int64_t elements = 0;
  std::int64_t failures = 0;
  std::string first_failure;  // "row 3 [17]: got ... want ... (bound ...)"
  bool passed() const { return failures == 0; }
};
// Compares got's output against want's (the reference) element by element:
// a NaN must meet a NaN, an infinity the same infinity, and a finite value
// must lie within the case's bound (see row_cases.cpp).
RowOutcome compare_row_outputs(const RowCase& c, const RowCaseData& got, const RowCaseData& want);

}  // namespace canary::jit::cuda_test
