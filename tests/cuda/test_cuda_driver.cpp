// CUDA backend without a GPU: the driver's absent path and its reasons,
// probing the toolkit's stub library, run_fused_on_gpu refusing cleanly,
// CANARY_CUDA_FAULT parsing and the arena's size classes.
#include <catch2/catch.hpp>

#include <string>
#include <sys/stat.h>

#include "jit/cuda/device_arena.h"
#include "jit/cuda/driver.h"
#include "jit/cuda/fault_injection.h"
#include "jit/cuda/fused_runner.h"

namespace cuda = canary::jit::cuda;
using canary::jit::EwNode;
using canary::jit::EwOp;
using canary::jit::FusedArgs;
using canary::jit::FusedElementwiseSpec;

namespace {

bool file_exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// The toolkit's stub libcuda.so, found next to ptxas (bin/../lib64/stubs).
std::string stub_library_path() {
  const std::string ptxas = CANARY_PTXAS;
  const auto slash = ptxas.rfind("/bin/");
  if (slash == std::string::npos) return {};
  return ptxas.substr(0, slash) + "/lib64/stubs/libcuda.so";
}

}  // namespace

TEST_CASE("CudaDriver::get reports a readable reason when no GPU is usable", "[unit][cuda]") {
  const cuda::CudaDriver* driver = cuda::CudaDriver::get();
  if (driver != nullptr) {
    CHECK(cuda::CudaDriver::absent_reason().empty());
    CHECK(driver->info().sm_count > 0);
    CHECK(driver->info().compute_major >= 7);
    WARN("a GPU is present: " << driver->info().name << ", compute " << driver->info().compute_major << "."
                              << driver->info().compute_minor << "; the absent path is not exercised");
    return;
  }
  const std::string reason = cuda::CudaDriver::absent_reason();
  WARN("no usable GPU on this machine: " << reason);
  REQUIRE_FALSE(reason.empty());
  // Either the driver library is missing or it came up without a device.
  const bool library_missing = reason.find("libcuda.so.1") != std::string::npos;
  const bool init_failed = reason.find("cuInit failed: CUDA_ERROR_") != std::string::npos;
  CHECK((library_missing || init_failed));
  // Asking again gives the same answer without retrying.
  CHECK(cuda::CudaDriver::get() == nullptr);
  CHECK(cuda::CudaDriver::absent_reason() == reason);
}

TEST_CASE("probing a library that does not exist names the dlopen error", "[unit][cuda]") {
  const std::string reason = cuda::CudaDriver::probe("/nonexistent/libcuda.so.1");
  CHECK(reason.find("cannot open shared object file") != std::string::npos);
}

TEST_CASE("probing the toolkit's stub library fails in cuInit with CUDA_ERROR_STUB_LIBRARY", "[unit][cuda]") {
  const std::string stub = stub_library_path();
  if (stub.empty() || !file_exists(stub)) {
    WARN("skipped: no CUDA toolkit stub library next to ptxas (" << CANARY_PTXAS << ")");
    CHECK(cuda::CudaDriver::probe("/nonexistent/libcuda.so.1") != "");
    return;
  }
  const std::string reason = cuda::CudaDriver::probe(stub.c_str());
  CHECK(reason == "cuInit failed: CUDA_ERROR_STUB_LIBRARY (34)");
}

TEST_CASE("run_fused_on_gpu without a GPU refuses with the driver's reason and leaves outputs alone",
          "[unit][cuda]") {
  if (cuda::CudaDriver::get() != nullptr) {
    WARN("a GPU is present; the refusal path is not exercised");
    CHECK(cuda::CudaDriver::absent_reason().empty());
    return;
  }
  FusedElementwiseSpec spec;
  spec.num_inputs = 1;
  spec.inner_broadcast = {false};
  EwNode in;
  in.op = EwOp::Input;
  EwNode neg;
  neg.op = EwOp::Neg;
  spec.nodes = {in, neg};
  spec.outputs = {1};
  float x[4] = {1, 2, 3, 4}, y[4] = {9, 9, 9, 9};
  const float* ins[] = {x};
  float* outs[] = {y};
  const std::int64_t strides[] = {4, 4};
  FusedArgs args;
  args.inputs = ins;
  args.outputs = outs;
  args.strides = strides;
  args.dims[2] = 4;
  args.row_end = 1;
  const cuda::GpuRunResult r = cuda::run_fused_on_gpu(spec, args);
  CHECK_FALSE(r.ok);
  CHECK(r.error == "CUDA unavailable: " + cuda::CudaDriver::absent_reason());
  CHECK(y[0] == 9.0f);
  CHECK(y[3] == 9.0f);
  CHECK(cuda::gpu_fused_stats().runs == 0);
}

TEST_CASE("CANARY_CUDA_FAULT values name the injected fault", "[unit][cuda]") {
  CHECK(cuda::parse_cuda_fault("load") == cuda::CudaFault::Load);
  CHECK(cuda::parse_cuda_fault("launch") == cuda::CudaFault::Launch);
  CHECK(cuda::parse_cuda_fault("oom") == cuda::CudaFault::Oom);
  CHECK(cuda::parse_cuda_fault("LOAD") == cuda::CudaFault::None);
  CHECK(cuda::parse_cuda_fault("") == cuda::CudaFault::None);
  CHECK(cuda::parse_cuda_fault(nullptr) == cuda::CudaFault::None);
  CHECK(std::string(cuda::cuda_fault_name(cuda::CudaFault::Oom)) == "oom");
  setenv("CANARY_CUDA_FAULT", "launch", 1);
  CHECK(cuda::injected_cuda_fault() == cuda::CudaFault::Launch);
  unsetenv("CANARY_CUDA_FAULT");
  CHECK(cuda::injected_cuda_fault() == cuda::CudaFault::None);
}

TEST_CASE("device arena size classes are powers of two from 256 bytes", "[unit][cuda]") {
  CHECK(cuda::DeviceArena::size_class(1) == 0);
  CHECK(cuda::DeviceArena::size_class(256) == 0);
  CHECK(cuda::DeviceArena::size_class(257) == 1);
  CHECK(cuda::DeviceArena::size_class(512) == 1);
  CHECK(cuda::DeviceArena::class_bytes(3) == 2048);
  CHECK(cuda::DeviceArena::size_class(std::size_t{1} << 28) == 20);
  CHECK(cuda::DeviceArena::class_bytes(cuda::DeviceArena::size_class(1000000)) == 1048576);
}
