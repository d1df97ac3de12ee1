// PTX emission for a batched f32 matrix product on the GPU: the CUDA
// backend's own tiled kernel for MatMul and Gemm (no cuBLAS: the backend
// loads only the driver).
//
//   C[b] = alpha * op(A[b]) op(B[b]) (+ bias), for b < batch
//
// with op(A) [M, K] (A stored [M, K], or [K, M] when trans_a), op(B) [K, N]
// (B stored [K, N], or [N, K] when trans_b), all row-major, C dense
// [batch, M, N], and bias a row of N floats added to every row (Gemm's C
// with beta 1). A and B advance by their batch strides (0 broadcasts one
// matrix over the batch).
//
// Each block computes a kTile x kTile tile of one C[b] with 256 threads:
// thread t (tx = t % 16, ty = t / 16) owns the 4 x 4 outputs at rows
// ty + 16 i and columns tx + 16 j of the tile. The K axis is walked in slices
// of kSliceK: the block stages the slice of A (kTile x kSliceK) and of B
// (kSliceK x kTile) in shared memory, zero-filled outside the matrices,
// waits at a barrier, and each thread accumulates its 16 outputs with one
// fma per k in increasing k. Every output is therefore
//   acc = fma(a[k], b[k], acc) for k = 0 .. K-1, from acc = +0,
// then acc * alpha (when alpha != 1), then + bias, each rounded to nearest:
// a fixed order a host model reproduces bit for bit
// (tests/cuda/matmul_cases.h). Blocks are numbered
// (b * tiles_m + tile_m) * tiles_n + tile_n over a 1-D grid.
//
// Parameters, in order:
//   .u64 a, b, bias, c          base addresses (bias 0 when unused)
//   .s64 stride_a, stride_b     batch strides of A and B (elements)
//   .u32 m, n, k                the product's dims
//   .u32 tiles_n, magic_n, shift_n, tiles_mn, magic_mn, shift_mn
//                               (MatmulLaunchScalars: the block decoding)
// Shapes are always parameters: one module serves every shape.
#pragma once

#include <cstdint>
#include <string>

namespace canary::jit::cuda {

// The name of the kernel entry in every module emit_matmul_ptx returns.
inline constexpr const char* kMatmulEntryName = "canary_matmul";
// Rows and columns of C per block, the K slice per stage, threads per block.
inline constexpr std::int64_t kMatmulTile = 64;
inline constexpr std::int64_t kMatmulSliceK = 16;
inline constexpr unsigned kMatmulThreads = 256;

struct MatmulSpec {
  bool trans_a = false;
  bool trans_b = false;
  bool has_bias = false;
  float alpha = 1.0f;
  // "mm ta=0 tb=1 bias=1 alpha=0x3F800000": the module cache's key.
  std::string key() const;
};

// The scalar launch parameters after the batch strides, in parameter order.
struct MatmulLaunchScalars {
  std::uint32_t m = 0, n = 0, k = 0;
  std::uint32_t tiles_n = 1, magic_n = 0, shift_n = 0;
  std::uint32_t tiles_mn = 1, magic_mn = 0, shift_mn = 0;
  std::uint64_t blocks = 0;  // batch * tiles_m * tiles_n: the grid
};
// The caller checks the ranges first (check_gpu_matmul_launch).
MatmulLaunchScalars make_matmul_scalars(std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k);

// The PTX module text for `spec`, targeting `target` ("sm_90", "sm_80").
std::string emit_matmul_ptx(const MatmulSpec& spec, const std::string& target = "sm_90");

}  // namespace canary::jit::cuda
