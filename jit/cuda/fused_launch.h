// Launching fused elementwise kernels on device memory: the argument
// checks, the parameter block in the order ptx_elementwise.h documents, the
// grid size, and the cache of loaded modules (one per spec key, elementwise,
// row and matmul kernels alike, so a symbolic spec compiles once and serves every
// shape).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "jit/cuda/driver.h"
#include "jit/cuda/module.h"
#include "jit/cuda/ptx_matmul.h"
#include "jit/fused_kernel.h"
#include "jit/fused_row.h"

namespace canary::jit::cuda {

// Kernel parameter space the driver accepts on every supported device.
inline constexpr std::size_t kKernelParamBytesLimit = 4096;

// FusedArgs with device addresses.
struct DeviceFusedArgs {
  std::vector<DevicePtr> inputs;
  std::vector<DevicePtr> outputs;
  std::vector<std::int64_t> strides;  // per input: stride0, stride1
  std::int64_t dims[3] = {1, 1, 1};   // ignored by exact variants
  std::int64_t row_begin = 0;
  std::int64_t row_end = 0;
  DevicePtr flag = 0;                 // one u32, required when check_non_finite
};

// The dims a launch iterates: the spec's exact dims, else `dims`.
std::array<std::int64_t, 3> launch_dims(const FusedElementwiseSpec& spec, const std::int64_t dims[3]);

// Why this spec over these dims, rows and strides cannot run on the GPU
// (malformed spec, negative extent or stride, rows out of range, more than
// kMaxGpuElements elements), or "".
std::string check_gpu_launch(const FusedElementwiseSpec& spec, const std::int64_t dims[3], std::int64_t row_begin,
                             std::int64_t row_end, const std::int64_t* strides);

// Elements input k spans (its highest offset + 1) for a full launch over
// dims; 0 when the space is empty.
std::int64_t input_extent(const FusedElementwiseSpec& spec, const std::array<std::int64_t, 3>& dims,
                          const std::int64_t* strides, int k);

// Enqueues the kernel for args on the driver's stream (no-op for no rows).
CudaStatus launch_fused(const CudaDriver& driver, const CudaModule& module, const FusedElementwiseSpec& spec,
                        const DeviceFusedArgs& args);

class FusedKernelCache {
 public:
  explicit FusedKernelCache(const CudaDriver& driver) : driver_(driver) {}

  // The loaded module for spec, emitting and loading PTX on first use. A
  // module that failed to load fails again without retrying (injected
  // faults excepted).
  CudaStatus get(const FusedElementwiseSpec& spec, const CudaModule** out);
  // The same for a row kernel (ptx_row.h).
  CudaStatus get(const FusedRowSpec& spec, const CudaModule** out);
  // The same for the matrix-product kernel (ptx_matmul.h).
  CudaStatus get(const MatmulSpec& spec, const CudaModule** out);
  int compiles() const { return compiles_; }
  int hits() const { return hits_; }
  double compile_ms() const { return compile_ms_; }

 private:
  // The module cached under key, else emit()'s PTX loaded (check: the spec's problem, or "").
  CudaStatus get_module(const std::string& key, const std::string& check, const std::function<std::string()>& emit,
                        const char* entry, const CudaModule** out);

  const CudaDriver& driver_;
  std::unordered_map<std::string, std::unique_ptr<CudaModule>> modules_;
  std::unordered_map<std::string, std::string> failures_;
  int compiles_ = 0;
  int hits_ = 0;
  double compile_ms_ = 0.0;
};

}  // namespace canary::jit::cuda
