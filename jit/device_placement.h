// Placement of a plan's fused elementwise groups, row kernels and matrix
// products on a FusedDevice (the GPU): each one the device can run is marked
// on_device, each one it refuses keeps the reason for the listing and stays
// on the CPU. Products are MatMul and Gemm steps (kernel steps, and the
// contraction of a Contraction step, whose epilogue then runs as its
// separate fused group, itself placed or not); Conv and every other kernel
// step run on the CPU, and so do the products of a bf16 variant, which the
// device would compute in fp32. Consecutive placed groups and row kernels
// form device chains (device_chain.h): data crosses the bus at a chain's
// boundary, and a value only the chain reads stays on the device. Products
// are not chained: their operands and result cross the bus at each one.
#pragma once

#include <cstddef>

#include "jit/fused_device.h"
#include "jit/plan.h"
#include "vm/program.h"

namespace canary::jit {

// Marks the groups, row kernels and products of plan that device runs and
// forms plan.device_chains; returns how many are placed. Sets plan.device
// to the device's name when at least one is placed.
std::size_t place_fused_groups(Plan& plan, const vm::Program& program, const FusedDevice& device);

}  // namespace canary::jit
