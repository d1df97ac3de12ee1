// Sums of the rows of a dense f32 matrix, for reductions over the innermost
// dims (a mean over time or over H*W) that need no per-shape set-up.
//
// oneDNN generates a reduction kernel per shape: 0.2-3 ms on the first call
// at each new batch or window of the flow meter's mean over time, against
// a few microseconds of arithmetic. Each row here is summed in 32 partial
// sums (four 8-lane vectors where the host has AVX2), combined pairwise:
// the rounding error grows with length / 32 terms, not with the length.
#pragma once

#include <cstdint>

namespace canary::kernels {

// out[r] = sum(x[r * length .. r * length + length)) / divisor for r < rows
// (divisor 1: the sums; the row length: the means).
void row_sums(const float* x, std::int64_t rows, std::int64_t length, float divisor, float* out);

}  // namespace canary::kernels
