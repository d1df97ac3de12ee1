// Applying Options::fault_injection (or CANARY_FAULT) to the process-wide
// fault-injection registry when a Runtime is constructed.
#pragma once

#include "canary/options.h"

namespace canary {

// Configures runtime/core/fault_injection.h from options.fault_injection, or
// from CANARY_FAULT when that is empty; leaves it alone when both are empty.
// Error(Input) names the option or the variable and the bad item.
void apply_fault_options(const Options& options);

}  // namespace canary
