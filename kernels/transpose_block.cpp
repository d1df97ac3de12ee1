// Dense 2-D f32 transposes in 8x8 register blocks (see transpose_block.h).
#include "kernels/transpose_block.h"

#include <immintrin.h>

#include "kernels/host_simd.h"

namespace canary::kernels {
namespace {

void transpose_scalar(const float* src, std::int64_t src_stride, float* dst, std::int64_t dst_stride,
                      std::int64_t rows, std::int64_t cols) {
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) dst[j * dst_stride + i] = src[i * src_stride + j];
}

// One 8x8 block: eight rows in, eight columns out. Written out in full so
// that all sixteen vectors stay in registers.
__attribute__((target("avx2"), always_inline)) inline void transpose8x8(const float* src, std::int64_t src_stride,
                                                                         float* dst, std::int64_t dst_stride) {
  const __m256 r0 = _mm256_loadu_ps(src), r1 = _mm256_loadu_ps(src + src_stride);
  const __m256 r2 = _mm256_loadu_ps(src + 2 * src_stride), r3 = _mm256_loadu_ps(src + 3 * src_stride);
  const __m256 r4 = _mm256_loadu_ps(src + 4 * src_stride), r5 = _mm256_loadu_ps(src + 5 * src_stride);
  const __m256 r6 = _mm256_loadu_ps(src + 6 * src_stride), r7 = _mm256_loadu_ps(src + 7 * src_stride);
  // Pairs of rows interleaved, then pairs of pairs, then the 128-bit halves exchanged.
  const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  _mm256_storeu_ps(dst, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(dst + dst_stride, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(dst + 2 * dst_stride, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(dst + 3 * dst_stride, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(dst + 4 * dst_stride, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(dst + 5 * dst_stride, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(dst + 6 * dst_stride, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(dst + 7 * dst_stride, _mm256_permute2f128_ps(u3, u7, 0x31));
}

__attribute__((target("avx2"))) void transpose_avx2(const float* src, std::int64_t src_stride, float* dst,
                                                     std::int64_t dst_stride, std::int64_t rows, std::int64_t cols) {
  const std::int64_t full_rows = rows / 8 * 8, full_cols = cols / 8 * 8;
  for (std::int64_t i = 0; i < full_rows; i += 8) {
    for (std::int64_t j = 0; j < full_cols; j += 8)
      transpose8x8(src + i * src_stride + j, src_stride, dst + j * dst_stride + i, dst_stride);
    transpose_scalar(src + i * src_stride + full_cols, src_stride, dst + full_cols * dst_stride + i, dst_stride, 8,
                     cols - full_cols);
  }
  transpose_scalar(src + full_rows * src_stride, src_stride, dst + full_rows, dst_stride, rows - full_rows, cols);
}

}  // namespace

void transpose_block(const float* src, std::int64_t src_stride, float* dst, std::int64_t dst_stride,
                     std::int64_t rows, std::int64_t cols) {
  if (rows <= 0 || cols <= 0) return;
  if (host_simd() != Simd::Baseline) return transpose_avx2(src, src_stride, dst, dst_stride, rows, cols);
  transpose_scalar(src, src_stride, dst, dst_stride, rows, cols);
}

}  // namespace canary::kernels
