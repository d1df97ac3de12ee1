// Matrix-product launches: argument checks, extents, the parameter block.
#include "jit/cuda/matmul_launch.h"

#include <vector>

#include "jit/cuda/ptx_elementwise.h"

namespace canary::jit::cuda {

std::string check_gpu_matmul_launch(const MatmulDims& d) {
  if (d.batch < 0 || d.m < 0 || d.n < 0 || d.k < 0)
    return "negative matmul dims (batch " + std::to_string(d.batch) + ", m " + std::to_string(d.m) + ", n " +
           std::to_string(d.n) + ", k " + std::to_string(d.k) + ")";
  if (d.stride_a < 0 || d.stride_b < 0) return "a negative batch stride, which the GPU backend does not support";
  if (d.m > kMaxGpuElements || d.n > kMaxGpuElements || d.k > kMaxGpuElements)
    return "a matmul dim exceeds the GPU launch limit of 2^31 - 1";
  const std::int64_t tiles_m = (d.m + kMatmulTile - 1) / kMatmulTile, tiles_n = (d.n + kMatmulTile - 1) / kMatmulTile;
  if (tiles_m > 0 && tiles_n > kMaxGpuElements / tiles_m) return "too many matmul tiles for one launch";
  const std::int64_t tiles = tiles_m * tiles_n;
  if (tiles > 0 && d.batch > kMaxGpuElements / tiles)
    return std::to_string(d.batch) + " batch entries of " + std::to_string(tiles) +
           " tiles exceed the GPU launch limit of 2^31 - 1 blocks";
  if (matmul_a_extent(d) < 0 || matmul_b_extent(d) < 0) return "a matmul operand's extent overflows 64 bits";
  return {};
}

namespace {

// (batch - 1) stride + rows cols, or -1 when it overflows; 0 when empty.
std::int64_t operand_extent(std::int64_t batch, std::int64_t stride, std::int64_t rows, std::int64_t cols) {
  if (batch <= 0 || rows == 0 || cols == 0) return 0;
  std::int64_t span = 0, matrix = 0, total = 0;
  if (__builtin_mul_overflow(batch - 1, stride, &span) || __builtin_mul_overflow(rows, cols, &matrix) ||
      __builtin_add_overflow(span, matrix, &total))
    return -1;
  return total;
}

}  // namespace

std::int64_t matmul_a_extent(const MatmulDims& d) { return operand_extent(d.batch, d.stride_a, d.m, d.k); }

std::int64_t matmul_b_extent(const MatmulDims& d) { return operand_extent(d.batch, d.stride_b, d.k, d.n); }

CudaStatus launch_matmul(const CudaDriver& driver, const CudaModule& module, const MatmulSpec& spec,
                         const DeviceMatmulArgs& args) {
  if (std::string why = check_gpu_matmul_launch(args.dims); !why.empty()) return CudaStatus::failure(why);
  if (spec.has_bias && args.bias == 0 && args.dims.n > 0)
    return CudaStatus::failure("the spec adds a bias but no bias was given");
  MatmulLaunchScalars s = make_matmul_scalars(args.dims.batch, args.dims.m, args.dims.n, args.dims.k);
  if (s.blocks == 0) return {};
  DeviceMatmulArgs a = args;  // cuLaunchKernel reads the values through non-const pointers
  std::vector<void*> params = {&a.a, &a.b, &a.bias, &a.c, &a.dims.stride_a, &a.dims.stride_b};
  for (std::uint32_t* v : {&s.m, &s.n, &s.k, &s.tiles_n, &s.magic_n, &s.shift_n, &s.tiles_mn, &s.magic_mn, &s.shift_mn})
    params.push_back(v);
  return launch_kernel(driver, module.function(),
                       LaunchShape{static_cast<unsigned>(s.blocks), kMatmulThreads}, params.data());
}

}  // namespace canary::jit::cuda
