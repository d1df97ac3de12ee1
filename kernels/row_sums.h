// Sums along one run of dims of a dense f32 tensor, for ReduceSum and
// ReduceMean with no per-shape set-up: over the innermost dims (a mean over
// time, or over H*W channels-first) as row sums, over middle dims (a mean
// over H*W channels-last, a sum over the batch) as column sums.
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

// For x laid out as [outer, length, inner]:
// out[o * inner + i] = sum over l of x[(o * length + l) * inner + i] / divisor.
// oneDNN 2.6 reduces a dim other than the innermost in a scalar reference
// loop, and the reference kernel sums in double: a global average pool over
// a channels-last [8, 32, 32, 64] map took 0.12 ms, a fifth of it at memory
// speed. Each output sums blocks of 16 terms and then adds the blocks'
// sums: the rounding error grows with 16 + length / 16 terms.
void column_sums(const float* x, std::int64_t outer, std::int64_t length, std::int64_t inner, float divisor,
                 float* out);

}  // namespace canary::kernels
