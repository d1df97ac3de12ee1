// oneDNN-backed f32 kernels for MatMul, Gemm and Conv, with plain types only
// (no oneDNN headers leak out of kernels/onednn/).
//
// Each kernel returns false, leaving y untouched or reset, when its case does
// not apply: a dtype other than f32, invalid shapes or attributes (so the
// reference kernel reports the error with its own message), a case oneDNN
// cannot express, or any oneDNN error. The caller then runs the reference
// kernel, which stays the oracle and the only path for f64. On success the
// output shape is exactly the reference kernel's.
//
// Primitives are kept in a per-thread LRU cache keyed by op kind, shapes and
// attributes (kernels/onednn/primitive_cache.h); the functions below read and
// control the calling thread's cache.
#pragma once

#include <cstddef>
#include <cstdint>

#include "canary/tensor.h"
#include "kernels/reference.h"

namespace canary::kernels {

// NumPy matmul of f32 a and b (batch broadcasting, 1-D operands) into y.
bool onednn_matmul(const Tensor& a, const Tensor& b, Tensor& y);
// ONNX Gemm of f32 a, b and optional c into y.
bool onednn_gemm(const GemmParams& p, const Tensor& a, const Tensor& b, const Tensor* c, Tensor& y);
// 1-D or 2-D f32 convolution with optional bias into y.
bool onednn_conv(const ConvParams& p, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y);

// Counters of the calling thread's primitive cache.
struct OnednnCacheStats {
  std::uint64_t calls = 0;  // oneDNN kernel calls, whether they applied or not
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t evictions = 0;
  std::size_t size = 0;
  std::size_t capacity = 0;
};

// Default number of primitives each thread keeps.
inline constexpr std::size_t kOnednnCacheCapacity = 256;

OnednnCacheStats onednn_cache_stats();
// Sets the calling thread's capacity (at least 1), evicting least recently used entries.
void onednn_set_cache_capacity(std::size_t capacity);
// Drops every primitive of the calling thread's cache and zeroes its counters (calls included).
void onednn_clear_cache();

}  // namespace canary::kernels
