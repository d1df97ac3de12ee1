// The host model of the emitted row kernel: the same thread ownership of a
// row's elements, the same warp butterfly and warp-partial fold
// (row_lowering.h) and the same per-element arithmetic as the PTX, evaluated
// with CpuMath. For exact-mode specs it computes the bits the GPU will (NaN
// payloads aside), so
// the kernel's folding can be checked against evaluate_row_reference, and a
// GPU run against the model bit for bit.
#pragma once

#include <cstdint>

#include "jit/fused_row.h"

namespace canary::jit::cuda_test {

// Evaluates spec on the host as the GPU row kernel does; returns the canary flag.
std::uint32_t evaluate_row_model(const FusedRowSpec& spec, const RowArgs& args);

}  // namespace canary::jit::cuda_test
