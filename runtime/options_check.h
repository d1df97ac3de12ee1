// Checks of Options: the resource limits when a Runtime is made, and the
// cost model's settings against each model it loads (its numbers in range,
// the outputs and inputs it names present).
#pragma once

#include <vector>

#include "canary/canary.h"

namespace canary {

// Throws Error(Input) naming the limit (or the range canaries' margin, or
// the JIT's device) and its bad value.
void check_limit_options(const Options& options);

// Throws Error(Input) naming the option and the bad value.
void check_options(const Options& options, const std::vector<TensorSpec>& inputs,
                   const std::vector<TensorSpec>& outputs);

}  // namespace canary
