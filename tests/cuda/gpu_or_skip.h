// The CUDA tests' guard for [gpu] cases: true when a driver came up; else
// the test skips with the driver's reason, or fails where a GPU (or the PTX
// emulator) was expected (tests/gpu_expectation.h).
#pragma once

#include <catch2/catch.hpp>

#include "jit/cuda/driver.h"
#include "tests/gpu_expectation.h"

namespace canary::jit::cuda_test {

inline bool gpu_or_skip() {
  if (cuda::CudaDriver::get() != nullptr) return true;
  const std::string& reason = cuda::CudaDriver::absent_reason();
  if (test::gpu_expected()) FAIL("CANARY_EXPECT_GPU=1 but no GPU is usable: " << reason);
  CHECK_FALSE(reason.empty());
  WARN("skipped: no usable GPU (" << reason << ")");
  return false;
}

}  // namespace canary::jit::cuda_test
