// The npy target's check, exposed so a test can show that it reports a
// difference (a check that cannot fail checks nothing).
#pragma once

#include "canary/tensor.h"
#include "tests/fuzz/fuzz_result.h"

namespace canary::fuzz {

// Accepted when both tensors have the same dtype, shape and element bytes,
// else a Finding saying which differs.
FuzzResult compare_npy_tensors(const Tensor& first, const Tensor& second);

}  // namespace canary::fuzz
