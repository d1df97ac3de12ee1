// The machine-readable reports of `canary inspect --json` and `canary explain --json`
// (fields documented in docs/cli-json-schema.md).
#pragma once

#include <string>
#include <vector>

#include "canary/canary.h"
#include "cli/replay.h"

namespace canary::cli {

// {"format": "canary-inspect", "version": 1, "model", "graph_passes", "jit", "tiers", "stats", "calls"}.
std::string inspect_json(const std::string& model_path, const std::vector<GraphPassReport>& passes,
                         const JitReport& report, const RunResult& run);

// {"format": "canary-explain", "version": 1, "model", "events", "recompiles", "counts", "cost_model", "tiers", "calls"}.
std::string explain_json(const std::string& model_path, const std::vector<Event>& events, const RunResult& run,
                         bool cost_model_on);

}  // namespace canary::cli
