// Vectorised clones of the f64 sums' inner loop (wide_sums.h).
#include "kernels/reference/wide_sums.h"

namespace canary::kernels::reference {

namespace {

// The clones give the contiguous loop AVX-512 and AVX2 registers where the
// host has them. This file is compiled with -ffp-contract=off
// (kernels/CMakeLists.txt): AVX-512F has FMA, and no clone may fuse a
// product into its sum, so every clone rounds each product and each sum as
// the default code does and the results are the same bits on every host.
// (Holding blocks of outputs in registers across all terms measured 10-20%
// slower on the samples' Conv and LSTM than this loop, so it stays simple.)
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
