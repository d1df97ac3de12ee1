// `canary explain` as text: every JIT event in order, then why each recompile happened.
#pragma once

#include <ostream>
#include <vector>

#include "canary/events.h"
#include "cli/replay.h"

namespace canary::cli {

// The note explain prints about variant choices until the cost model exists.
extern const char* const kCostModelNote;

void print_explain(std::ostream& os, const std::vector<Event>& events, const RunResult& run);

}  // namespace canary::cli
