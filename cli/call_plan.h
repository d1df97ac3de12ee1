// The list of calls a command replays, built from --input, --inputs, --stream and --repeat.
#pragma once

#include <vector>

#include "cli/cli_options.h"
#include "cli/stream_file.h"

namespace canary::cli {

// Without --stream: one call with the --inputs folder's files and the --input
// sources (which win over the folder's). With --stream: one call per stream
// line, each line's sources over those. The list is repeated --repeat times.
// No inputs at all gives no calls.
std::vector<CallSpec> plan_calls(const InputArgs& args);

}  // namespace canary::cli
