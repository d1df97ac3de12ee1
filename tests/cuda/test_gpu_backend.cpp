// The CUDA backend on a GPU: run_fused_on_gpu against the reference
// evaluator over the differential catalog, symbolic specs serving new shapes
// without recompiling, partial row ranges, and every injected fault
// (load, launch, oom) failing cleanly with the outputs untouched. Each test
// skips with the driver's reason when no GPU is usable.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "jit/cuda/driver.h"
#include "tests/cuda/gpu_or_skip.h"
#include "jit/cuda/fused_runner.h"
#include "tests/cuda/diff_cases.h"

namespace cuda = canary::jit::cuda;
namespace ct = canary::jit::cuda_test;
using ct::gpu_or_skip;

namespace {


const ct::DiffCase& find_case(const std::vector<ct::DiffCase>& cases, const std::string& name) {
  for (const auto& c : cases)
    if (c.name == name) return c;
  throw std::runtime_error("no differential case " + name);
}

// Sets CANARY_CUDA_FAULT for one scope.
struct FaultScope {
  explicit FaultScope(const char* value) { setenv("CANARY_CUDA_FAULT", value, 1); }
  ~FaultScope() { unsetenv("CANARY_CUDA_FAULT"); }
};

}  // namespace

TEST_CASE("GPU results match the reference evaluator on the differential catalog", "[unit][cuda][gpu]") {
  if (!gpu_or_skip()) return;
  for (const ct::DiffCase& c : ct::differential_cases()) {
    ct::CaseData want, got;
    ct::make_case_data(c, c.dims, 11, &want);
    ct::make_case_data(c, c.dims, 11, &got, -777.0f);
    const std::uint32_t want_flag = canary::jit::evaluate_fused_reference(c.spec, want.args);
    const cuda::GpuRunResult r = cuda::run_fused_on_gpu(c.spec, got.args);
    INFO(c.name << ": " << r.error);
    REQUIRE(r.ok);
    const ct::DiffOutcome o = ct::compare_outputs(c, got, want);
    INFO("max " << o.max_ulp << " ulp, max abs " << o.max_abs << "; " << o.first_failure);
    CHECK(o.passed());
    CHECK(r.flag == want_flag);
  }
}

TEST_CASE("a symbolic spec compiles once and serves every shape", "[unit][cuda][gpu]") {
  if (!gpu_or_skip()) return;
  const auto cases = ct::differential_cases();
  ct::DiffCase c = find_case(cases, "a*b+c (dense,row,shared-d0)");
  c.spec.nodes.back().op = canary::jit::EwOp::Sub;  // a key no other test compiles
  const int before = cuda::gpu_fused_stats().modules_compiled;
  const std::array<std::int64_t, 3> shapes[] = {{1, 1, 1}, {2, 3, 4}, {17, 1, 333}, {5, 40, 7}, {1, 2, 100003}};
  for (const auto& dims : shapes) {
    ct::CaseData want, got;
    ct::make_case_data(c, dims, 2, &want);
    ct::make_case_data(c, dims, 2, &got, -777.0f);
    canary::jit::evaluate_fused_reference(c.spec, want.args);
    const cuda::GpuRunResult r = cuda::run_fused_on_gpu(c.spec, got.args);
    INFO(dims[0] << "x" << dims[1] << "x" << dims[2] << ": " << r.error);
    REQUIRE(r.ok);
    CHECK(ct::compare_outputs(c, got, want).passed());
  }
  CHECK(cuda::gpu_fused_stats().modules_compiled == before + 1);
}

TEST_CASE("the GPU computes a partial row range and leaves other rows alone", "[unit][cuda][gpu]") {
  if (!gpu_or_skip()) return;
  const auto cases = ct::differential_cases();
  const ct::DiffCase& c = find_case(cases, "add dense+row");
  ct::CaseData data;
  ct::make_case_data(c, c.dims, 5, &data, -1.0f);
  data.args.row_begin = 4;
  data.args.row_end = 9;
  const cuda::GpuRunResult r = cuda::run_fused_on_gpu(c.spec, data.args);
  REQUIRE(r.ok);
  const std::int64_t d2 = c.dims[2];
  CHECK(data.outputs[0][4 * d2 - 1] == -1.0f);
  CHECK(data.outputs[0][9 * d2] == -1.0f);
  CHECK(data.outputs[0][6 * d2 + 3] == data.inputs[0][6 * d2 + 3] + data.inputs[1][6]);
}

TEST_CASE("injected load, launch and oom faults fail cleanly and leave the outputs untouched", "[unit][cuda][gpu]") {
  if (!gpu_or_skip()) return;
  const auto cases = ct::differential_cases();
  ct::DiffCase c = find_case(cases, "chain10 arith");
  c.spec.nodes[1].imm0 = 1.75f;  // a key no other test compiled
  for (const char* fault : {"load", "launch", "oom"}) {
    ct::CaseData data;
    ct::make_case_data(c, c.dims, 9, &data, -5.0f);
    cuda::GpuRunResult r;
    {
      FaultScope scope(fault);
      r = cuda::run_fused_on_gpu(c.spec, data.args);
    }
    INFO(fault << ": " << r.error);
    CHECK_FALSE(r.ok);
    CHECK(r.error.find(std::string("CANARY_CUDA_FAULT=") + fault) != std::string::npos);
    CHECK(data.outputs[0].front() == -5.0f);
    CHECK(data.outputs[0].back() == -5.0f);
    // Without the fault the same call succeeds: an injected load failure is not cached.
    ct::CaseData want;
    ct::make_case_data(c, c.dims, 9, &want);
    canary::jit::evaluate_fused_reference(c.spec, want.args);
    const cuda::GpuRunResult again = cuda::run_fused_on_gpu(c.spec, data.args);
    INFO(again.error);
    REQUIRE(again.ok);
    CHECK(ct::compare_outputs(c, data, want).passed());
  }
}
