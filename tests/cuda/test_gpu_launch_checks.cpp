// check_gpu_launch: what the GPU backend refuses before any launch, so the
// CPU backend runs the group instead. Pure checks: no driver or GPU needed.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "jit/cuda/cuda_fused_device.h"
#include "jit/cuda/driver.h"
#include "jit/cuda/fused_launch.h"

using canary::jit::EwNode;
using canary::jit::EwOp;
using canary::jit::FusedElementwiseSpec;
using canary::jit::ValueRange;
using canary::jit::cuda::check_gpu_launch;
using canary::jit::cuda::gpu_unsupported;

namespace {

// y = |x| over one input.
FusedElementwiseSpec abs_spec() {
  FusedElementwiseSpec s;
  s.num_inputs = 1;
  s.inner_broadcast = {false};
  s.nodes = {EwNode{EwOp::Input, 0, 0, 0, 0.0f, 0.0f}, EwNode{EwOp::Abs, 0, 0, 0, 0.0f, 0.0f}};
  s.outputs = {1};
  return s;
}

}  // namespace

TEST_CASE("gpu launch checks: range canaries stay on the CPU backend", "[unit][cuda]") {
  const std::int64_t dims[3] = {1, 2, 8};
  const std::int64_t strides[2] = {16, 8};
  FusedElementwiseSpec s = abs_spec();
  CHECK(check_gpu_launch(s, dims, 0, 2, strides).empty());
  s.output_ranges = {ValueRange{0.0f, 1.0f}};
  CHECK_THAT(check_gpu_launch(s, dims, 0, 2, strides), Catch::Contains("range canaries"));
  s.output_ranges = {std::nullopt};  // an entry without a range asks for nothing
  CHECK(check_gpu_launch(s, dims, 0, 2, strides).empty());
}

TEST_CASE("gpu placement: the device refuses a group only for what no shape can change", "[unit][cuda]") {
  FusedElementwiseSpec s = abs_spec();
  CHECK(gpu_unsupported(s).empty());
  s.exact_dims = std::array<std::int64_t, 3>{4, 5, 6};  // exact dims are a per-call matter
  CHECK(gpu_unsupported(s).empty());
  s.output_ranges = {ValueRange{0.0f, 1.0f}};
  CHECK_THAT(gpu_unsupported(s), Catch::Contains("range canaries are not emitted for the GPU"));
  s.output_ranges.clear();
  s.nodes[1].a = 7;  // an operand that does not exist
  CHECK_THAT(gpu_unsupported(s), Catch::StartsWith("malformed spec"));
}

TEST_CASE("gpu placement: without a driver the CUDA device does not open and says why", "[unit][cuda]") {
  std::string why;
  const auto device = canary::jit::cuda::open_cuda_fused_device(why);
  if (canary::jit::cuda::CudaDriver::get() != nullptr) {
    REQUIRE(device);
    CHECK_THAT(device->name(), Catch::StartsWith("cuda:0 "));
    CHECK(why.empty());
    return;
  }
  CHECK_FALSE(device);
  CHECK(why == canary::jit::cuda::CudaDriver::absent_reason());
  CHECK_FALSE(why.empty());
}
