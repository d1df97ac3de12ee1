// Vectorised clones of the f64 sums' inner loop (wide_sums.h).
#include "kernels/reference/wide_sums.h"

#include <cstring>
#include <type_traits>

namespace canary::kernels::reference {

namespace {

// The clones give the loops AVX-512 and AVX2 registers where the host has
// them. This file is compiled with -ffp-contract=off (kernels/CMakeLists.txt):
// no clone fuses a product into its sum (AVX-512F has FMA), so every clone
// rounds each product and each sum as the default code does, and the
// results are the same bits on every host.
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

// Outputs per block: four vectors of 8 doubles (AVX-512 registers, or two
// AVX2 ones each), kept in registers across all terms. Each vector's sum is
// a chain of dependent adds (the order is fixed), so four chains keep the
// adder busy. GCC's vector extensions keep them in registers: a plain array
// was spilled on every term.
constexpr int kVectors = 4;
constexpr std::int64_t kBlock = 8 * kVectors;
using Doubles = double __attribute__((vector_size(8 * sizeof(double))));
using Floats = float __attribute__((vector_size(8 * sizeof(float))));

template <typename T>
CANARY_VECTOR_CLONES void accumulate_block(double* __restrict acc, std::int64_t first, const T* const* x,
                                           const double* weights, std::int64_t terms) {
  Doubles a[kVectors];
  for (int v = 0; v < kVectors; ++v) std::memcpy(&a[v], acc + 8 * v, sizeof(Doubles));
  for (std::int64_t t = 0; t < terms; ++t) {
    const T* p = x[t] + first;
    const double w = weights[t];
    for (int v = 0; v < kVectors; ++v) {
      Doubles xv;
      if constexpr (std::is_same_v<T, float>) {
        Floats f;
        std::memcpy(&f, p + 8 * v, sizeof f);
        xv = __builtin_convertvector(f, Doubles);
      } else {
        std::memcpy(&xv, p + 8 * v, sizeof xv);
      }
      a[v] += xv * w;
    }
  }
  for (int v = 0; v < kVectors; ++v) std::memcpy(acc + 8 * v, &a[v], sizeof(Doubles));
}

template <typename T>
void accumulate_all(double* acc, std::int64_t n, const T* const* x, const double* weights, std::int64_t terms,
                    std::int64_t stride) {
  std::int64_t o = 0;
  if (stride == 1)  // strided rows (a strided Conv) run term by term
    for (; o + kBlock <= n; o += kBlock) accumulate_block(acc + o, o, x, weights, terms);
  if (o == n) return;
  // The last outputs: term by term over the remainder, the same order.
  for (std::int64_t t = 0; t < terms; ++t) accumulate(acc + o, x[t] + o * stride, n - o, stride, weights[t]);
}

}  // namespace

void accumulate_terms(double* acc, std::int64_t n, const float* const* x, const double* weights, std::int64_t terms,
                      std::int64_t stride) {
  accumulate_all(acc, n, x, weights, terms, stride);
}

void accumulate_terms(double* acc, std::int64_t n, const double* const* x, const double* weights,
                      std::int64_t terms, std::int64_t stride) {
  accumulate_all(acc, n, x, weights, terms, stride);
}

void accumulate_scaled(double* acc, const float* x, std::int64_t n, std::int64_t stride, double weight) {
  accumulate(acc, x, n, stride, weight);
}

void accumulate_scaled(double* acc, const double* x, std::int64_t n, std::int64_t stride, double weight) {
  accumulate(acc, x, n, stride, weight);
}

}  // namespace canary::kernels::reference
