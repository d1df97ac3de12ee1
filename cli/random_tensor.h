// Seeded random input tensors for NAME=random:DIMS.
#pragma once

#include <cstdint>
#include <string_view>

#include "canary/tensor.h"

namespace canary::cli {

// The seed of one random input: mixes the run's seed, the call number and the
// input's name, so every call and input gets its own reproducible values.
std::uint64_t input_seed(std::uint64_t run_seed, std::uint64_t call, std::string_view name);

// f32/f64 uniform in [-1, 1); i32/i64 uniform integers in [0, 9]; bool true
// with probability 1/2.
Tensor random_tensor(DType dtype, const Shape& shape, std::uint64_t seed);

}  // namespace canary::cli
