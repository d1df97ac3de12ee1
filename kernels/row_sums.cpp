// Row sums in 32 partial sums, column sums in blocks of 16 rows (see row_sums.h).
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

// Column sums: blocks of kBlockRows terms, over chunks of up to kChunk columns.
constexpr std::int64_t kBlockRows = 16;
constexpr std::int64_t kChunk = 32;

// out[0..width) = the sums of `length` rows of `width` values, `stride` apart.
void column_chunk_scalar(const float* x, std::int64_t length, std::int64_t stride, std::int64_t width, float* out) {
  float total[kChunk] = {};
  for (std::int64_t r0 = 0; r0 < length; r0 += kBlockRows) {
    float block[kChunk] = {};
    const std::int64_t r1 = r0 + kBlockRows < length ? r0 + kBlockRows : length;
    for (std::int64_t r = r0; r < r1; ++r)
      for (std::int64_t j = 0; j < width; ++j) block[j] += x[r * stride + j];
    for (std::int64_t j = 0; j < width; ++j) total[j] += block[j];
  }
  for (std::int64_t j = 0; j < width; ++j) out[j] = total[j];
}

// The same for a full chunk of 32 columns, the block and the total in registers.
__attribute__((target("avx2"))) void column_chunk_avx2(const float* x, std::int64_t length, std::int64_t stride,
                                                        float* out) {
  __m256 t0 = _mm256_setzero_ps(), t1 = t0, t2 = t0, t3 = t0;
  for (std::int64_t r0 = 0; r0 < length; r0 += kBlockRows) {
    __m256 b0 = _mm256_setzero_ps(), b1 = b0, b2 = b0, b3 = b0;
    const std::int64_t r1 = r0 + kBlockRows < length ? r0 + kBlockRows : length;
    for (std::int64_t r = r0; r < r1; ++r) {
      const float* row = x + r * stride;
      b0 = _mm256_add_ps(b0, _mm256_loadu_ps(row));
      b1 = _mm256_add_ps(b1, _mm256_loadu_ps(row + 8));
      b2 = _mm256_add_ps(b2, _mm256_loadu_ps(row + 16));
      b3 = _mm256_add_ps(b3, _mm256_loadu_ps(row + 24));
    }
    t0 = _mm256_add_ps(t0, b0);
    t1 = _mm256_add_ps(t1, b1);
    t2 = _mm256_add_ps(t2, b2);
    t3 = _mm256_add_ps(t3, b3);
  }
  _mm256_storeu_ps(out, t0);
  _mm256_storeu_ps(out + 8, t1);
  _mm256_storeu_ps(out + 16, t2);
  _mm256_storeu_ps(out + 24, t3);
}

}  // namespace

void column_sums(const float* x, std::int64_t outer, std::int64_t length, std::int64_t inner, float divisor,
                 float* out) {
  const bool avx2 = host_simd() != Simd::Baseline;
  for (std::int64_t o = 0; o < outer; ++o) {
    const float* slab = x + o * length * inner;
    float* sums = out + o * inner;
    for (std::int64_t j = 0; j < inner; j += kChunk) {
      const std::int64_t width = inner - j < kChunk ? inner - j : kChunk;
      if (avx2 && width == kChunk) column_chunk_avx2(slab + j, length, inner, sums + j);
      else column_chunk_scalar(slab + j, length, inner, width, sums + j);
    }
    for (std::int64_t j = 0; j < inner; ++j) sums[j] /= divisor;
  }
}

void row_sums(const float* x, std::int64_t rows, std::int64_t length, float divisor, float* out) {
  const bool avx2 = host_simd() != Simd::Baseline;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * length;
    const float sum = avx2 ? row_sum_avx2(row, length) : row_sum_scalar(row, length);
    out[r] = sum / divisor;
  }
}

}  // namespace canary::kernels
