// canary::Options from the command line: --profile, --no-jit, --threads, --sync-compile, --hot.
#pragma once

#include <string>
#include <string_view>

#include "canary/options.h"
#include "cli/cli_options.h"

namespace canary::cli {

// speed:    JitOptions::fast_math (transcendentals within the looser documented bounds).
// balanced: the library defaults.
// robust:   JitOptions::value_canaries (NaN/Inf appearing in compiled kernels is reported
//           as events) and nothing rejected: NaN/Inf inputs flow through as in the interpreter.
// Error(Input) for any other name.
Options profile_options(std::string_view profile);

// "score=threshold:0.5:0.01" or "label=argmax" as a DecisionOutput;
// Error(Input) naming the flag's value when it is malformed.
DecisionOutput parse_decision(std::string_view spec);

// The profile's options with the other command-line settings applied. With
// --cost the profile is the cost model's (it decides fast math itself).
Options runtime_options(const CliOptions& cli);

// "profile balanced; jit on (hot after 8 visits or 2000 us interpreted, background compiles, exact math); 1 intra-op thread".
std::string describe_settings(const CliOptions& cli);

}  // namespace canary::cli
