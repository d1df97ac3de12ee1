// Launching the tiled matrix-product kernel (ptx_matmul.h) on device
// memory: the argument checks, the parameter block in the documented order
// and the grid (one block per 64 x 64 tile of each batch entry's C).
#pragma once

#include <cstdint>
#include <string>

#include "jit/cuda/driver.h"
#include "jit/cuda/module.h"
#include "jit/cuda/ptx_matmul.h"

namespace canary::jit::cuda {

// The dims of one product: batch entries of [m, k] x [k, n].
struct MatmulDims {
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  std::int64_t stride_a = 0, stride_b = 0;  // elements between batch entries of A and B (0 broadcasts)
};

// A product on device memory.
struct DeviceMatmulArgs {
  DevicePtr a = 0, b = 0, bias = 0, c = 0;  // bias only with MatmulSpec::has_bias
  MatmulDims dims;
};

// Why these dims cannot run on the GPU (a negative dim or stride, a dim or a
// row index beyond 32 bits, more blocks than one launch has), or "".
std::string check_gpu_matmul_launch(const MatmulDims& dims);

// Floats of A and B a product reads (the highest offset + 1; 0 when empty;
// -1 when it overflows 64 bits, which check_gpu_matmul_launch reports).
std::int64_t matmul_a_extent(const MatmulDims& dims);
std::int64_t matmul_b_extent(const MatmulDims& dims);

// Enqueues the kernel on the driver's stream (no-op when C is empty).
CudaStatus launch_matmul(const CudaDriver& driver, const CudaModule& module, const MatmulSpec& spec,
                         const DeviceMatmulArgs& args);

}  // namespace canary::jit::cuda
