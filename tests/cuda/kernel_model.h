// The host model of the emitted fused kernel: the same flat-index loop,
// magic-number index decoding and op lowering (ew_lowering.h) as the PTX,
// evaluated with CpuMath. For exact-mode specs it computes the bits the GPU
// will, so the differential against evaluate_fused_reference can be run
// without a GPU.
#pragma once

#include <cstdint>

#include "jit/fused_kernel.h"

namespace canary::jit::cuda_test {

// Evaluates spec on the host as the GPU kernel does; returns the canary flag.
std::uint32_t evaluate_fused_model(const FusedElementwiseSpec& spec, const FusedArgs& args);

}  // namespace canary::jit::cuda_test
