// The device a model's fused groups may run on (JitOptions::device): an
// installed override (jit::ScopedDeviceOverride) first, else the CUDA
// backend's GPU when this build has it, else none, with the reason.
#pragma once

#include "canary/options.h"
#include "jit/engine.h"

namespace canary {

// Opens nothing when options.device is "cpu".
jit::DeviceChoice open_fused_device(const JitOptions& options);

}  // namespace canary
