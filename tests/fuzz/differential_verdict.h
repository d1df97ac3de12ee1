// The graph_stream target's check, exposed so a test can show that a failed
// differential report becomes a finding.
#pragma once

#include "tests/fuzz/fuzz_result.h"
#include "tests/jit_differential/differential_harness.h"

namespace canary::fuzz {

// Accepted when the report has no failure, else a Finding with its description.
FuzzResult judge_report(const differential::DifferentialReport& report);

}  // namespace canary::fuzz
