// run_fused_on_gpu / run_row_on_gpu / run_matmul_on_gpu: the CUDA backend's
// entry points for one fused elementwise, row-kernel or matrix-product call
// on host data. Inputs are staged through pinned memory
// into arena blocks, the kernel is launched, outputs come back; every
// failure (no driver, a module that does not load, a failed launch,
// out-of-memory, an asynchronous device error) returns its reason and
// leaves the outputs untouched, so the caller finishes the call on the CPU.
// Never throws.
#pragma once

#include <cstdint>
#include <string>

#include "jit/cuda/device_arena.h"
#include "jit/cuda/matmul_launch.h"
#include "jit/fused_device.h"
#include "jit/fused_kernel.h"
#include "jit/fused_row.h"

namespace canary::jit::cuda {

struct GpuRunResult {
  bool ok = false;
  std::string error;       // why the GPU did not run it (ok == false)
  std::uint32_t flag = 0;  // value canary: 1 when check_non_finite saw NaN/Inf
  std::uint64_t bytes_moved = 0;  // copied host -> device and back by this call
};

// Runs spec over rows [args.row_begin, args.row_end) of args.dims with host
// input and output pointers, as evaluate_fused_reference does on the CPU.
GpuRunResult run_fused_on_gpu(const FusedElementwiseSpec& spec, const FusedArgs& args);

// The same for a row kernel (ptx_row.h), as evaluate_row_reference does.
GpuRunResult run_row_on_gpu(const FusedRowSpec& spec, const RowArgs& args);

// A device chain (FusedDevice::run_chain): the steps in order as one call,
// chained inputs read from earlier steps' device blocks, host outputs
// written only after every step ran.
GpuRunResult run_chain_on_gpu(const ChainStep* steps, std::size_t count);

// A batched matrix product (ptx_matmul.h) on host data: A, B, the bias row
// (MatmulSpec::has_bias) and C [batch, m, n], dense.
struct MatmulArgs {
  const float* a = nullptr;
  const float* b = nullptr;
  const float* bias = nullptr;
  float* c = nullptr;
  MatmulDims dims;
};
GpuRunResult run_matmul_on_gpu(const MatmulSpec& spec, const MatmulArgs& args);

// Counters of the process-wide runner behind run_fused_on_gpu.
struct GpuFusedStats {
  int modules_compiled = 0;   // PTX modules emitted and loaded (one per spec key)
  int module_cache_hits = 0;
  double compile_ms = 0.0;    // emission + driver JIT time, all modules
  std::uint64_t runs = 0;     // calls that ran on the GPU
  std::uint64_t failures = 0; // calls that returned an error
  std::uint64_t bytes_to_device = 0;
  std::uint64_t bytes_to_host = 0;
  ArenaStats arena;
};
// A snapshot of the counters (all zero when the driver is absent).
GpuFusedStats gpu_fused_stats();

}  // namespace canary::jit::cuda
