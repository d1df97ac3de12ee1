// A trace's MatMul or Gemm as a FusedDevice::run_matmul call: which
// instructions placement may put on the device, and, per call, whether
// these tensors are a product the device call covers and with which dims.
// What it does not cover runs the CPU kernel for that call (which also
// reports any shape error the op has): operands that are not f32 or not
// at least 2-D, batch dims that broadcast against each other, a Gemm C
// other than one bias row added once (beta 1), an empty dim.
#pragma once

#include <optional>

#include "canary/tensor.h"
#include "jit/fused_device.h"
#include "vm/elementwise_info.h"

namespace canary::jit {

// The instruction's contraction when it is a MatMul or a Gemm (not a Conv).
std::optional<vm::ContractionInfo> device_matmul_info(const vm::Instruction& in);

// The call for this run's operands (c: Gemm's optional C, or null) and the
// shape of the product; C's pointer is left for the caller, who sizes the
// output. False when the device call does not cover these operands.
bool make_matmul_call(const vm::ContractionInfo& info, const Tensor& a, const Tensor& b, const Tensor* c,
                      MatmulCall& call, Shape& out_shape);

}  // namespace canary::jit
