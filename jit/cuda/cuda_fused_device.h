// The CUDA backend as a FusedDevice (jit/fused_device.h): device 0 through
// the process-wide driver and fused runner (fused_runner.h).
#pragma once

#include <memory>
#include <string>

#include "jit/fused_device.h"

namespace canary::jit::cuda {

// Why the CUDA backend cannot run spec at any shape ("" when it can): the
// spec-only launch checks (a malformed spec, range canaries, the kernel
// parameter space); shapes are checked per call.
std::string gpu_unsupported(const FusedElementwiseSpec& spec);
// The same for a row kernel.
std::string gpu_unsupported_row(const FusedRowSpec& spec);

// Device 0 when the driver came up; otherwise nullptr with `why` set to the
// driver's reason ("libcuda.so.1: cannot open shared object file: ...").
std::shared_ptr<const FusedDevice> open_cuda_fused_device(std::string& why);

}  // namespace canary::jit::cuda
