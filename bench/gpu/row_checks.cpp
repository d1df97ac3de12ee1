// The GPU check's row-kernel row: every case of the row catalog on the GPU
// against evaluate_row_reference under the catalog's bounds, the canary
// flag against the reference's, and each exact-mode case bit for bit
// (NaN payloads aside) against the host model of the kernel
// (tests/cuda/row_model.h), which shows the model, and so the bounds
// measured with it on the CPU, are the GPU's.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "bench/gpu/check_table.h"
#include "jit/cuda/fused_runner.h"
#include "tests/cuda/row_cases.h"
#include "tests/cuda/row_model.h"

namespace canary::gpu_check {

void check_row_kernels(std::vector<Row>& rows) {
  namespace ct = jit::cuda_test;
  int total = 0, passed = 0, exact = 0, bitwise = 0;
  double worst = 0.0, micros = 0.0;
  std::string failures;
  for (const ct::RowCase& c : ct::row_cases()) {
    ++total;
    ct::RowCaseData want, got, model;
    ct::make_row_case_data(c, 11, &want);
    ct::make_row_case_data(c, 11, &got, -777.0f);
    ct::make_row_case_data(c, 11, &model, -777.0f);
    const std::uint32_t want_flag = jit::evaluate_row_reference(c.spec, want.args);
    const auto start = std::chrono::steady_clock::now();
    const jit::cuda::GpuRunResult r = jit::cuda::run_row_on_gpu(c.spec, got.args);
    micros += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (!r.ok) {
      if (failures.size() < 200) failures += "; " + c.name + ": " + r.error;
      continue;
    }
    const ct::RowOutcome o = ct::compare_row_outputs(c, got, want);
    worst = std::max(worst, o.max_error);
    const bool ok = o.passed() && r.flag == want_flag;
    passed += ok;
    if (!ok && failures.size() < 200) failures += "; " + c.name + ": " + (o.passed() ? "canary flag" : o.first_failure);
    if (c.spec.prologue.math != jit::MathMode::Exact) continue;
    ++exact;
    ct::evaluate_row_model(c.spec, model.args);
    bitwise += ct::first_bit_difference(model.output, got.output) == -1;
  }
  char text[200];
  std::snprintf(text, sizeof text, "%d/%d within bound (worst %.2f of it); exact cases bitwise = model: %d/%d; %.0f us/call with transfers",
                passed, total, worst, bitwise, exact, micros / total);
  rows.push_back({"row kernels", text + failures, passed == total && bitwise == exact});
}

}  // namespace canary::gpu_check
