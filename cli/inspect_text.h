// `canary inspect` as text: anchors, variants, fusion groups, guards, compile cost, time per tier.
#pragma once

#include <ostream>
#include <vector>

#include "canary/canary.h"
#include "cli/replay.h"

namespace canary::cli {

// Prints the JIT report readably; `listing` adds each variant's full plan.
void print_jit_report(std::ostream& os, const JitReport& report, bool listing);

// The whole inspect report: the JIT report, then time per tier and stats.
void print_inspect(std::ostream& os, const JitReport& report, const RunResult& run, bool listing);

}  // namespace canary::cli
