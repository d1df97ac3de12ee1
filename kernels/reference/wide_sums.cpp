// Vectorised clones of the f64 sums' inner loop (wide_sums.h).
#include "kernels/reference/wide_sums.h"

namespace canary::kernels::reference {

namespace {

// The clones give the contiguous loop AVX-512 and AVX2 registers where the
// host has them. Neither target enables FMA, so every clone rounds each
// product and each sum exactly as the default code does: the results are
// the same bits on every host.
#if defined(__clang__)  // vectorises at -O2 already
#define CANARY_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else  // GCC 12's -O2 vectorises only loops that need no remainder
#define CANARY_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default"), optimize("tree-vectorize")))
#endif

template <typename T>
CANARY_VECTOR_CLONES void accumulate(double* __restrict acc, const T* __restrict x, std::int64_t n,
                                     std::int64_t stride, double weight) {
  if (stride == 1) {
    for (std::int64_t o = 0; o < n; ++o) acc[o] += double(x[o]) * weight;
  } else {
    for (std::int64_t o = 0; o < n; ++o) acc[o] += double(x[o * stride]) * weight;
  }
}

}  // namespace

void accumulate_scaled(double* acc, const float* x, std::int64_t n, std::int64_t stride, double weight) {
  accumulate(acc, x, n, stride, weight);
}

void accumulate_scaled(double* acc, const double* x, std::int64_t n, std::int64_t stride, double weight) {
  accumulate(acc, x, n, stride, weight);
}

}  // namespace canary::kernels::reference
