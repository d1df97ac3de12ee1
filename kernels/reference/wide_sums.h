// The inner loops of the reference kernels' f64 sums. Each output sums its
// products in double, in the order the caller lists them, exactly as a
// per-output loop would; the loops run across outputs, which vectorises.
// Conv adds its kernel taps to a row of outputs, LSTM its input and state
// elements to every gate row.
#pragma once

#include <cstdint>

namespace canary::kernels::reference {

// acc[o] += x[o * stride] * weight for o in [0, n).
void accumulate_scaled(double* acc, const float* x, std::int64_t n, std::int64_t stride, double weight);
void accumulate_scaled(double* acc, const double* x, std::int64_t n, std::int64_t stride, double weight);

// acc[o] += x[0][o * stride] * weights[0] + x[1][o * stride] * weights[1] + ...
// for o in [0, n), the terms added one at a time in that order (taps terms).
// Outputs are taken in blocks held in registers across all terms.
void accumulate_terms(double* acc, std::int64_t n, const float* const* x, const double* weights, std::int64_t terms,
                      std::int64_t stride);
void accumulate_terms(double* acc, std::int64_t n, const double* const* x, const double* weights,
                      std::int64_t terms, std::int64_t stride);

}  // namespace canary::kernels::reference
