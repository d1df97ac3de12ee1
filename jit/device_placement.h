// Placement of a plan's fused elementwise groups and row kernels on a
// FusedDevice (the GPU): each one the device can run is marked on_device,
// each one it refuses keeps the reason for the listing and stays on the x86
// backend. Contractions and kernel steps always run on the CPU. Consecutive
// placed steps form device chains (device_chain.h): data crosses the bus at
// a chain's boundary, and a value only the chain reads stays on the device.
#pragma once

#include <cstddef>

#include "jit/fused_device.h"
#include "jit/plan.h"

namespace canary::jit {

// Marks the groups and row kernels of plan that device runs and forms
// plan.device_chains; returns how many are placed. Sets plan.device to the
// device's name when at least one is placed.
std::size_t place_fused_groups(Plan& plan, const FusedDevice& device);

}  // namespace canary::jit
