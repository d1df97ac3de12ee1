// Row sums in 32 partial sums (see row_sums.h).
#include "kernels/row_sums.h"

#include <immintrin.h>

#include "kernels/host_simd.h"

namespace canary::kernels {
namespace {

// Partial sums per row: 32 lanes, strided over the row.
constexpr int kLanes = 32;

// The 32 partials added pairwise, the way the vector version combines them.
float combine(float* partial) {
  for (int width = kLanes / 2; width >= 1; width /= 2)
    for (int i = 0; i < width; ++i) partial[i] += partial[i + width];
  return partial[0];
}

float row_sum_scalar(const float* x, std::int64_t n) {
  float partial[kLanes] = {};
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) partial[j] += x[i + j];
  for (int j = 0; i + j < n; ++j) partial[j] += x[i + j];
  return combine(partial);
}

__attribute__((target("avx2"))) float row_sum_avx2(const float* x, std::int64_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
    a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + i + 8));
    a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x + i + 16));
    a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x + i + 24));
  }
  alignas(32) float partial[kLanes];
  _mm256_store_ps(partial, a0);
  _mm256_store_ps(partial + 8, a1);
  _mm256_store_ps(partial + 16, a2);
  _mm256_store_ps(partial + 24, a3);
  for (int j = 0; i + j < n; ++j) partial[j] += x[i + j];
  return combine(partial);
}

}  // namespace

void row_sums(const float* x, std::int64_t rows, std::int64_t length, float divisor, float* out) {
  const bool avx2 = host_simd() != Simd::Baseline;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * length;
    const float sum = avx2 ? row_sum_avx2(row, length) : row_sum_scalar(row, length);
    out[r] = sum / divisor;
  }
}

}  // namespace canary::kernels
