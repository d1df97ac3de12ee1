// Checks the Options a model is loaded with against the model: the cost
// model's numbers are in range and the outputs and inputs it names exist.
#pragma once

#include <vector>

#include "canary/canary.h"

namespace canary {

// Throws Error(Input) naming the option and the bad value.
void check_options(const Options& options, const std::vector<TensorSpec>& inputs,
                   const std::vector<TensorSpec>& outputs);

}  // namespace canary
