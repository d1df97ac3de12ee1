// The verbs of the `canary` command; each returns the process exit status.
// Errors are thrown as canary::Error and reported by main.
#pragma once

#include "cli/cli_options.h"
#include "cli/replay.h"

namespace canary::cli {

int run_command(const CliOptions& cli);      // canary run
int inspect_command(const CliOptions& cli);  // canary inspect
int explain_command(const CliOptions& cli);  // canary explain
int dot_command(const CliOptions& cli);      // canary dot

// The step every verb shares: plans the calls from the input arguments,
// replays them (none when `require_calls` is false and no inputs were given)
// and writes --chrome-trace when asked.
RunResult replay_for_command(const CliOptions& cli, const LoadedModel& loaded, bool require_calls);

}  // namespace canary::cli
