// `canary inspect` as text: anchors, variants, fusion groups, guards, compile cost, time per tier.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "canary/canary.h"
#include "cli/replay.h"

namespace canary::cli {

// Prints the JIT report readably. Guards are shown when they failed or check
// one of `model_inputs`; `listing` shows every guard and each variant's full plan.
void print_jit_report(std::ostream& os, const JitReport& report, const std::vector<std::string>& model_inputs,
                      bool listing);

// What each graph-optimizer pass changed at load, one line per rewrite.
void print_graph_passes(std::ostream& os, const std::vector<GraphPassReport>& passes);

// The whole inspect report: the JIT report, then time per tier and stats.
void print_inspect(std::ostream& os, const JitReport& report, const std::vector<std::string>& model_inputs,
                   const RunResult& run, bool listing);

}  // namespace canary::cli
