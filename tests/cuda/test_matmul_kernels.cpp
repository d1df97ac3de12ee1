// The CUDA backend's tiled matrix product (jit/cuda/ptx_matmul.h): the host
// model of its arithmetic against the fp64 reference (no GPU needed), the
// launch checks, and on a GPU (or the PTX emulator) every catalog case
// against the reference and bit for bit against the model, the shape
// independence of one module, and the injected faults.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "jit/cuda/driver.h"
#include "tests/cuda/gpu_or_skip.h"
#include "jit/cuda/fused_runner.h"
#include "jit/cuda/matmul_launch.h"
#include "tests/cuda/diff_cases.h"
#include "tests/cuda/matmul_cases.h"

namespace cuda = canary::jit::cuda;
namespace ct = canary::jit::cuda_test;
using ct::gpu_or_skip;

namespace {


struct FaultScope {
  explicit FaultScope(const char* value) { setenv("CANARY_CUDA_FAULT", value, 1); }
  ~FaultScope() { unsetenv("CANARY_CUDA_FAULT"); }
};

}  // namespace

TEST_CASE("the matmul model meets the fp64 reference's bound on the catalog", "[unit][cuda]") {
  for (const ct::MatmulCase& c : ct::matmul_cases()) {
    ct::MatmulCaseData data;
    ct::make_matmul_case_data(c, 7, &data, -777.0f);
    const ct::MatmulReference want = ct::evaluate_matmul_reference(c, data);
    ct::evaluate_matmul_model(c, &data);
    const ct::MatmulOutcome o = ct::compare_matmul(c, data, want);
    INFO(c.name << ": max error " << o.max_error << " of the bound; " << o.first_failure);
    CHECK(o.passed());
  }
}

TEST_CASE("the matmul comparison fails a product computed the wrong way", "[unit][cuda]") {
  const auto cases = ct::matmul_cases();
  for (const ct::MatmulCase& c : cases) {
    if (c.dims.k < 2 || c.poison) continue;
    ct::MatmulCaseData data;
    ct::make_matmul_case_data(c, 7, &data);
    const ct::MatmulReference want = ct::evaluate_matmul_reference(c, data);
    ct::MatmulCase wrong = c;
    wrong.spec.trans_b = !c.spec.trans_b;  // reads B the other way round
    if (c.dims.n != c.dims.k) {
      wrong = c;
      wrong.dims.k -= 1;  // drops the last k
    }
    ct::evaluate_matmul_model(wrong, &data);
    INFO(c.name);
    CHECK_FALSE(ct::compare_matmul(c, data, want).passed());
  }
}

TEST_CASE("matmul launch checks name what the GPU cannot run", "[unit][cuda]") {
  cuda::MatmulDims d;
  d.m = 4;
  d.n = 4;
  d.k = -1;
  CHECK(cuda::check_gpu_matmul_launch(d).find("negative matmul dims") != std::string::npos);
  d.k = 4;
  d.stride_a = -4;
  CHECK(cuda::check_gpu_matmul_launch(d).find("negative batch stride") != std::string::npos);
  d.stride_a = 16;
  d.m = std::int64_t{1} << 31;
  CHECK(cuda::check_gpu_matmul_launch(d).find("2^31 - 1") != std::string::npos);
  d.m = 1 << 30;
  d.n = 1 << 30;
  CHECK(cuda::check_gpu_matmul_launch(d).find("too many matmul tiles") != std::string::npos);
  d.m = 64;
  d.n = 64;
  d.batch = std::int64_t{1} << 31;
  CHECK(cuda::check_gpu_matmul_launch(d).find("blocks") != std::string::npos);
  d.batch = 3;
  CHECK(cuda::check_gpu_matmul_launch(d).empty());
  CHECK(cuda::matmul_a_extent(d) == 2 * 16 + 64 * 4);
}

TEST_CASE("GPU matmul matches the reference and the model's bits on the catalog", "[unit][cuda][gpu]") {
  if (!gpu_or_skip()) return;
  for (const ct::MatmulCase& c : ct::matmul_cases()) {
    ct::MatmulCaseData got, model;
    ct::make_matmul_case_data(c, 13, &got, -777.0f);
    ct::make_matmul_case_data(c, 13, &model, -777.0f);
    const ct::MatmulReference want = ct::evaluate_matmul_reference(c, got);
    ct::evaluate_matmul_model(c, &model);
    const cuda::GpuRunResult r = cuda::run_matmul_on_gpu(c.spec, got.args);
    INFO(c.name << ": " << r.error);
    REQUIRE(r.ok);
    const ct::MatmulOutcome o = ct::compare_matmul(c, got, want);
    INFO("max error " << o.max_error << " of the bound; " << o.first_failure);
    CHECK(o.passed());
    INFO("first element with other bits than the model's: " << ct::first_bit_difference(got.c, model.c));
    CHECK(ct::first_bit_difference(got.c, model.c) == -1);
  }
}

TEST_CASE("one matmul module serves every shape and empty products launch nothing", "[unit][cuda][gpu]") {
  if (!gpu_or_skip()) return;
  ct::MatmulCase c = ct::matmul_cases().front();
  c.spec.alpha = 3.0f;  // a key no other test compiles
  const int before = cuda::gpu_fused_stats().modules_compiled;
  const std::int64_t shapes[][4] = {{1, 1, 1, 1}, {2, 65, 3, 129}, {1, 0, 5, 5}, {3, 7, 0, 2}, {1, 128, 64, 16}};
  for (const auto& s : shapes) {
    c.dims = cuda::MatmulDims{s[0], s[1], s[2], s[3], s[1] * s[3], s[3] * s[2]};
    ct::MatmulCaseData got;
    ct::make_matmul_case_data(c, 5, &got, -777.0f);
    const ct::MatmulReference want = ct::evaluate_matmul_reference(c, got);
    const cuda::GpuRunResult r = cuda::run_matmul_on_gpu(c.spec, got.args);
    INFO(s[0] << "x" << s[1] << "x" << s[2] << "x" << s[3] << ": " << r.error);
    REQUIRE(r.ok);
    CHECK(ct::compare_matmul(c, got, want).passed());
  }
  CHECK(cuda::gpu_fused_stats().modules_compiled == before + 1);
}

TEST_CASE("injected load, launch and oom faults fail a matmul cleanly", "[unit][cuda][gpu]") {
  if (!gpu_or_skip()) return;
  ct::MatmulCase c = ct::matmul_cases()[1];
  c.spec.alpha = 2.5f;  // a key no other test compiles, so the load fault meets an uncached module
  for (const char* fault : {"load", "launch", "oom"}) {
    ct::MatmulCaseData data;
    ct::make_matmul_case_data(c, 9, &data, -5.0f);
    cuda::GpuRunResult r;
    {
      FaultScope scope(fault);
      r = cuda::run_matmul_on_gpu(c.spec, data.args);
    }
    INFO(fault << ": " << r.error);
    CHECK_FALSE(r.ok);
    CHECK(r.error.find(std::string("CANARY_CUDA_FAULT=") + fault) != std::string::npos);
    CHECK(data.c.front() == -5.0f);
    CHECK(data.c.back() == -5.0f);
    const cuda::GpuRunResult again = cuda::run_matmul_on_gpu(c.spec, data.args);
    INFO(again.error);
    REQUIRE(again.ok);
    CHECK(ct::compare_matmul(c, data, ct::evaluate_matmul_reference(c, data)).passed());
  }
}
