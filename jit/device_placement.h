// Placement of a plan's fused elementwise groups and row kernels on a
// FusedDevice (the GPU): each one the device can run is marked on_device,
// each one it refuses keeps the reason for the listing and stays on the x86
// backend. Contractions and kernel steps always run on the CPU, so data
// crosses the bus at every placed group's boundary.
#pragma once

#include <cstddef>

#include "jit/fused_device.h"
#include "jit/plan.h"

namespace canary::jit {

// Marks the groups and row kernels of plan that device runs; returns how many. Sets
// plan.device to the device's name when at least one is placed.
std::size_t place_fused_groups(Plan& plan, const FusedDevice& device);

}  // namespace canary::jit
