// Vectorised versions of the f64 sums' inner loop (wide_sums.h), chosen
// once per process from the host's ISA.
#include "kernels/reference/wide_sums.h"

#include "kernels/host_simd.h"

namespace canary::kernels::reference {

namespace {

// The loop is compiled three times, for AVX-512, AVX2 and the baseline, and
// dispatched at run time (kernels/host_simd.h). This file is compiled with
// -ffp-contract=off (kernels/CMakeLists.txt): AVX-512F has FMA, and no
// version may fuse a product into its sum, so every version rounds each
// product and each sum as the baseline does and the results are the same
// bits on every host.
// (Holding blocks of outputs in registers across all terms measured 10-20%
// slower on the samples' Conv and LSTM than this loop, so it stays simple.)
#if defined(__clang__)  // vectorises at -O2 already
#define CANARY_VECTORISE
#else  // GCC 12's -O2 vectorises only loops that need no remainder
#define CANARY_VECTORISE __attribute__((optimize("tree-vectorize")))
#endif

template <typename T>
__attribute__((always_inline)) inline void accumulate(double* __restrict acc, const T* __restrict x, std::int64_t n,
                                                      std::int64_t stride, double weight) {
  if (stride == 1) {
    for (std::int64_t o = 0; o < n; ++o) acc[o] += double(x[o]) * weight;
  } else {
    for (std::int64_t o = 0; o < n; ++o) acc[o] += double(x[o * stride]) * weight;
  }
}

template <typename T>
CANARY_VECTORISE __attribute__((target("avx512f"))) void accumulate_avx512(double* acc, const T* x, std::int64_t n,
                                                                          std::int64_t stride, double weight) {
  accumulate(acc, x, n, stride, weight);
}

template <typename T>
CANARY_VECTORISE __attribute__((target("avx2"))) void accumulate_avx2(double* acc, const T* x, std::int64_t n,
                                                                      std::int64_t stride, double weight) {
  accumulate(acc, x, n, stride, weight);
}

template <typename T>
CANARY_VECTORISE void accumulate_baseline(double* acc, const T* x, std::int64_t n, std::int64_t stride,
                                          double weight) {
  accumulate(acc, x, n, stride, weight);
}

template <typename T>
void dispatch(double* acc, const T* x, std::int64_t n, std::int64_t stride, double weight) {
  switch (host_simd()) {
    case Simd::Avx512: return accumulate_avx512(acc, x, n, stride, weight);
    case Simd::Avx2: return accumulate_avx2(acc, x, n, stride, weight);
    case Simd::Baseline: return accumulate_baseline(acc, x, n, stride, weight);
  }
}

}  // namespace

void accumulate_scaled(double* acc, const float* x, std::int64_t n, std::int64_t stride, double weight) {
  dispatch(acc, x, n, stride, weight);
}

void accumulate_scaled(double* acc, const double* x, std::int64_t n, std::int64_t stride, double weight) {
  dispatch(acc, x, n, stride, weight);
}

}  // namespace canary::kernels::reference
