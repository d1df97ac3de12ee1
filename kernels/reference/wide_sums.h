// The inner loop of the reference kernels' f64 sums: acc[o] += x[o * stride]
// * weight, each product and sum rounded in double, in the caller's order.
// Conv adds one kernel tap to a row of outputs with it, the recurrent
// kernels one input or state element to every gate row; each output thus
// sums its products in the same order a per-output loop would, while the
// loop runs across outputs, which vectorises.
#pragma once

#include <cstdint>

namespace canary::kernels::reference {

void accumulate_scaled(double* acc, const float* x, std::int64_t n, std::int64_t stride, double weight);
void accumulate_scaled(double* acc, const double* x, std::int64_t n, std::int64_t stride, double weight);

}  // namespace canary::kernels::reference
