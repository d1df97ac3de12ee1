// Transposes with no per-shape set-up: the reordered dims are merged where
// they stay neighbours, and what is left moves either as contiguous runs
// (the innermost dim stays innermost) or as 2-D planes between the input's
// innermost dim and the output's, in 8x8 register blocks
// (kernels/transpose_block.h).
//
// oneDNN's reorder does the same at the same speed, but generates its code
// for each shape: 0.1-0.4 ms a primitive, three of them in the vehicle LSTM,
// paid on every first call at a new batch or window.
#pragma once

#include <cstdint>
#include <span>

#include "canary/tensor.h"

namespace canary::kernels::onednn {

// y = x with its dims permuted by `perm` (a valid permutation of x's rank,
// which the caller has checked), for 4-byte dtypes and for any dtype whose
// innermost dim stays innermost. False, with y untouched, otherwise.
bool transpose_by_planes(std::span<const std::int64_t> perm, const Tensor& x, Tensor& y);

}  // namespace canary::kernels::onednn
