// Launching fused row kernels (ptx_row.h) on device memory: the argument
// checks, the parameter block in the documented order, and the grid (one
// block per row, row_block_threads threads each).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "jit/cuda/driver.h"
#include "jit/cuda/module.h"
#include "jit/fused_row.h"

namespace canary::jit::cuda {

// RowArgs with device addresses.
struct DeviceRowArgs {
  std::vector<DevicePtr> inputs;
  DevicePtr output = 0;  // written at output + 4 row (reductions) or + 4 row d2
  DevicePtr scale = 0, bias = 0;
  std::vector<std::int64_t> strides;  // per prologue input: stride0, stride1
  std::int64_t dims[3] = {1, 1, 1};   // ignored by exact variants
  std::int64_t row_begin = 0;
  std::int64_t row_end = 0;
  DevicePtr flag = 0;  // one u32, required when the prologue checks values
};

// Why this row spec over these dims, rows and strides cannot run on the GPU
// (a malformed spec, the prologue's launch limits, the parameter space), or "".
std::string check_gpu_row_launch(const FusedRowSpec& spec, const std::int64_t dims[3], std::int64_t row_begin,
                                 std::int64_t row_end, const std::int64_t* strides);

// Floats the kernel writes per row: 1 for reductions, d2 for Softmax and LayerNorm.
std::int64_t row_output_width(const FusedRowSpec& spec, std::int64_t d2);

// Enqueues the kernel for args on the driver's stream (no-op for no rows).
CudaStatus launch_row(const CudaDriver& driver, const CudaModule& module, const FusedRowSpec& spec,
                      const DeviceRowArgs& args);

}  // namespace canary::jit::cuda
