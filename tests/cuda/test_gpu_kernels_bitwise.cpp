// The CUDA backend's row kernels on a GPU, a module the driver rejects, and
// every exact-math kernel bit for bit (NaN payloads aside) against the host models of
// tests/cuda/kernel_model.h and row_model.h, whose agreement with the fp64
// reference the model tests establish without a GPU. On a machine without a
// GPU the [gpu] tests skip here and run again under the PTX emulator
// (tests/cuda/emulator, "cuda-emulated/" in ctest), which also reports that
// its launches ran and none faulted.
#include <catch2/catch.hpp>

#include <dlfcn.h>


#include "jit/cuda/driver.h"
#include "tests/cuda/gpu_or_skip.h"
#include "jit/cuda/fused_runner.h"
#include "jit/cuda/module.h"
#include "jit/cuda/ptx_elementwise.h"
#include "tests/cuda/diff_cases.h"
#include "tests/cuda/kernel_model.h"
#include "tests/cuda/row_cases.h"
#include "tests/cuda/row_model.h"

namespace cuda = canary::jit::cuda;
namespace ct = canary::jit::cuda_test;
using ct::gpu_or_skip;

namespace {


// The emulated driver's counters, when the loaded libcuda.so.1 is the emulator.
struct EmulatorCounters {
  bool emulated = false;
  std::uint64_t launches = 0, instructions = 0, faults = 0;
  std::string last_fault;
};

EmulatorCounters emulator_counters() {
  EmulatorCounters c;
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (library == nullptr) return c;
  using Counters = void (*)(std::uint64_t*, std::uint64_t*, std::uint64_t*);
  using LastFault = const char* (*)();
  auto counters = reinterpret_cast<Counters>(dlsym(library, "canary_cuda_emulator_counters"));
  auto last_fault = reinterpret_cast<LastFault>(dlsym(library, "canary_cuda_emulator_last_fault"));
  if (counters != nullptr && last_fault != nullptr) {
    c.emulated = true;
    counters(&c.launches, &c.instructions, &c.faults);
    c.last_fault = last_fault();
  }
  dlclose(library);
  return c;
}

}  // namespace

TEST_CASE("GPU row kernels match the reference on the row catalog", "[unit][cuda][gpu]") {
  if (!gpu_or_skip()) return;
  for (const ct::RowCase& c : ct::row_cases()) {
    ct::RowCaseData want, got;
    ct::make_row_case_data(c, 11, &want);
    ct::make_row_case_data(c, 11, &got, -777.0f);
    const std::uint32_t want_flag = canary::jit::evaluate_row_reference(c.spec, want.args);
    const cuda::GpuRunResult r = cuda::run_row_on_gpu(c.spec, got.args);
    INFO(c.name << ": " << r.error);
    REQUIRE(r.ok);
    const ct::RowOutcome o = ct::compare_row_outputs(c, got, want);
    INFO("max error " << o.max_error << " of the bound; " << o.first_failure);
    CHECK(o.passed());
    CHECK(r.flag == want_flag);
  }
}

TEST_CASE("exact-math GPU kernels give the host models' bits", "[unit][cuda][gpu]") {
  if (!gpu_or_skip()) return;
  int compared = 0;
  for (const ct::DiffCase& c : ct::differential_cases()) {
    if (c.spec.math != canary::jit::MathMode::Exact) continue;
    ct::CaseData model, got;
    ct::make_case_data(c, c.dims, 23, &model, -777.0f);
    ct::make_case_data(c, c.dims, 23, &got, -777.0f);
    const std::uint32_t model_flag = ct::evaluate_fused_model(c.spec, model.args);
    const cuda::GpuRunResult r = cuda::run_fused_on_gpu(c.spec, got.args);
    INFO(c.name << ": " << r.error);
    REQUIRE(r.ok);
    CHECK(r.flag == model_flag);
    for (std::size_t k = 0; k < got.outputs.size(); ++k) {
      const std::int64_t at = ct::first_bit_difference(got.outputs[k], model.outputs[k]);
      INFO("output " << k << " element " << at);
      CHECK(at == -1);
    }
    ++compared;
  }
  for (const ct::RowCase& c : ct::row_cases()) {
    if (c.spec.prologue.math != canary::jit::MathMode::Exact) continue;
    ct::RowCaseData model, got;
    ct::make_row_case_data(c, 23, &model, -777.0f);
    ct::make_row_case_data(c, 23, &got, -777.0f);
    const std::uint32_t model_flag = ct::evaluate_row_model(c.spec, model.args);
    const cuda::GpuRunResult r = cuda::run_row_on_gpu(c.spec, got.args);
    INFO(c.name << ": " << r.error);
    REQUIRE(r.ok);
    CHECK(r.flag == model_flag);
    INFO("element " << ct::first_bit_difference(got.output, model.output));
    CHECK(ct::first_bit_difference(got.output, model.output) == -1);
    ++compared;
  }
  CHECK(compared > 50);
}

TEST_CASE("under the PTX emulator a launch runs, counts its instructions and does not fault", "[unit][cuda][gpu]") {
  if (!gpu_or_skip()) return;
  const EmulatorCounters before = emulator_counters();
  if (!before.emulated) {
    if (canary::test::emulator_expected()) FAIL("CANARY_EXPECT_GPU=emulator but the driver is " << cuda::CudaDriver::get()->info().name);
    WARN("skipped: the driver is not the PTX emulator (" << cuda::CudaDriver::get()->info().name << ")");
    return;
  }
  CHECK(cuda::CudaDriver::get()->info().name == "Canary PTX emulator (CPU)");
  const auto cases = ct::differential_cases();
  const ct::DiffCase& c = cases.front();
  ct::CaseData data;
  ct::make_case_data(c, c.dims, 3, &data);
  const cuda::GpuRunResult r = cuda::run_fused_on_gpu(c.spec, data.args);
  REQUIRE(r.ok);
  const EmulatorCounters after = emulator_counters();
  CHECK(after.launches > before.launches);
  CHECK(after.instructions > before.instructions);
  INFO(after.last_fault);
  CHECK(after.faults == 0);
}

TEST_CASE("a module the driver rejects fails to load with the driver's name and JIT log", "[unit][cuda][gpu]") {
  if (!gpu_or_skip()) return;
  const auto cases = ct::differential_cases();
  std::string ptx = cuda::emit_fused_ptx(cases.front().spec, cuda::CudaDriver::get()->ptx_target());
  const std::size_t at = ptx.find("ld.param.u64");
  REQUIRE(at != std::string::npos);
  ptx.replace(at, 12, "ld.param.q64");  // no such type
  std::unique_ptr<cuda::CudaModule> module;
  const cuda::CudaStatus s = cuda::CudaModule::load(*cuda::CudaDriver::get(), ptx, cuda::kFusedEntryName, &module);
  INFO(s.error());
  CHECK_FALSE(s.ok());
  CHECK(module == nullptr);
  CHECK(s.error().find("cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX") != std::string::npos);
  CHECK(s.error().find("JIT log: ") != std::string::npos);
}
