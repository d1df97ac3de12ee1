// The row kernel's host model (same thread ownership, warp butterfly and
// partial fold as the PTX, CpuMath arithmetic) against the double-precision
// reference over the row catalog, under bounds derived from each row's
// values; the compensated fold against the plain one; the block size rule.
#include <catch2/catch.hpp>

#include <cmath>

#include "jit/cuda/ptx_row.h"
#include "jit/cuda/row_launch.h"
#include "tests/cuda/row_cases.h"
#include "tests/cuda/row_model.h"

namespace cuda = canary::jit::cuda;
namespace ct = canary::jit::cuda_test;
using canary::jit::Accumulation;
using canary::jit::RowOp;

TEST_CASE("row blocks are whole warps, one per 32 elements up to 256 threads", "[unit][cuda]") {
  CHECK(cuda::row_block_threads(0) == 32);
  CHECK(cuda::row_block_threads(1) == 32);
  CHECK(cuda::row_block_threads(32) == 32);
  CHECK(cuda::row_block_threads(33) == 64);
  CHECK(cuda::row_block_threads(255) == 256);
  CHECK(cuda::row_block_threads(1 << 20) == 256);
}

TEST_CASE("the row kernel model matches the reference on the row catalog", "[unit][cuda]") {
  for (const ct::RowCase& c : ct::row_cases()) {
    ct::RowCaseData want, got;
    ct::make_row_case_data(c, 11, &want);
    ct::make_row_case_data(c, 11, &got, -777.0f);
    const std::uint32_t want_flag = canary::jit::evaluate_row_reference(c.spec, want.args);
    const std::uint32_t got_flag = ct::evaluate_row_model(c.spec, got.args);
    const ct::RowOutcome o = ct::compare_row_outputs(c, got, want);
    INFO(c.name << ": " << o.elements << " elements, worst at " << o.max_error << " of the bound; " << o.first_failure);
    CHECK(o.passed());
    CHECK(got_flag == want_flag);
    if (c.poison_rows) CHECK(want_flag == 1u);
    // Softmax and LayerNorm write nothing for empty rows.
    const bool full_rows = c.spec.op == RowOp::Softmax || c.spec.op == RowOp::LayerNorm;
    if (full_rows && c.dims[2] == 0) CHECK(got.output == std::vector<float>(got.output.size(), -777.0f));
  }
}

TEST_CASE("row launches refuse rows beyond 32-bit indices, empty rows included", "[unit][cuda]") {
  canary::jit::FusedRowSpec sum;
  sum.prologue.nodes.resize(1);
  sum.prologue.nodes[0].op = canary::jit::EwOp::Input;
  sum.prologue.num_inputs = 1;
  sum.prologue.inner_broadcast = {false};
  sum.prologue.outputs = {0};
  const std::int64_t strides[] = {0, 0};
  const std::int64_t fits[3] = {1 << 30, 1, 0}, too_many[3] = {1 << 16, 1 << 16, 0};  // each dim fits, the rows do not
  CHECK(cuda::check_gpu_row_launch(sum, fits, 0, fits[0], strides).empty());
  const std::string why = cuda::check_gpu_row_launch(sum, too_many, 0, too_many[0] * too_many[1], strides);
  CHECK(why.find("rows exceed the GPU launch limit") != std::string::npos);
}

TEST_CASE("the comparison fails a row op computed the wrong way", "[unit][cuda]") {
  int checked = 0;
  for (const ct::RowCase& c : ct::row_cases()) {
    canary::jit::FusedRowSpec wrong = c.spec;
    if (c.name == "layer_norm, variance below epsilon") wrong.epsilon = 0.0f;  // epsilon left out
    else if (c.name == "mean") wrong.op = RowOp::Sum;                          // no division
    else if (c.name == "max") wrong.op = RowOp::Sum;
    else continue;
    ct::RowCaseData want, got;
    ct::make_row_case_data(c, 11, &want);
    ct::make_row_case_data(c, 11, &got);
    canary::jit::evaluate_row_reference(c.spec, want.args);
    ct::evaluate_row_model(wrong, got.args);
    INFO(c.name);
    CHECK_FALSE(ct::compare_row_outputs(c, got, want).passed());
    ++checked;
  }
  CHECK(checked == 3);
}

TEST_CASE("compensated folds are closer to the reference than plain ones on cancelling sums", "[unit][cuda]") {
  ct::RowCase plain;
  for (const ct::RowCase& c : ct::row_cases())
    if (c.name == "sum compensated, wide magnitudes") plain = c;
  REQUIRE(plain.spec.accumulation == Accumulation::Compensated);
  ct::RowCase compensated = plain;
  plain.spec.accumulation = Accumulation::Plain;
  plain.dims = compensated.dims = {4, 8, 4000};
  double plain_error = 0, compensated_error = 0;
  for (const ct::RowCase* c : {&plain, &compensated}) {
    ct::RowCaseData want, got;
    ct::make_row_case_data(*c, 5, &want);
    ct::make_row_case_data(*c, 5, &got);
    canary::jit::evaluate_row_reference(c->spec, want.args);
    ct::evaluate_row_model(c->spec, got.args);
    double worst = 0;
    for (std::size_t i = 0; i < want.output.size(); ++i)
      worst = std::max(worst, std::fabs(static_cast<double>(got.output[i]) - want.output[i]) /
                                  std::max(1.0, std::fabs(static_cast<double>(want.output[i]))));
    (c == &plain ? plain_error : compensated_error) = worst;
  }
  INFO("plain " << plain_error << ", compensated " << compensated_error);
  CHECK(compensated_error < plain_error);
  CHECK(compensated_error <= 2.0 / (1 << 24));
}
