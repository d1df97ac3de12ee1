// `canary explain` as text: every JIT event in order, then why each recompile happened.
#pragma once

#include <ostream>
#include <vector>

#include "canary/events.h"
#include "cli/replay.h"

namespace canary::cli {

// The note explain prints when the cost model was off.
extern const char* const kCostModelOffNote;

// The timeline, the recompile chains, the counts and every cost-model decision table.
void print_explain(std::ostream& os, const std::vector<Event>& events, const RunResult& run, bool cost_model_on);

}  // namespace canary::cli
