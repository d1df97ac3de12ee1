// The replay step the verbs share: plan calls, run them, write the Chrome trace.
#include "cli/call_inputs.h"
#include "cli/call_plan.h"
#include "cli/chrome_trace.h"
#include "cli/verbs.h"

namespace canary::cli {

RunResult replay_for_command(const CliOptions& cli, const LoadedModel& loaded, bool require_calls) {
  const std::vector<CallSpec> calls = plan_calls(cli.inputs);
  if (calls.empty() && require_calls && !loaded.model.inputs().empty())
    throw Error(ErrorKind::Input, "no inputs given; the model's inputs are: " + describe_inputs(loaded.model.inputs()) +
                                      " (use --input NAME=FILE.npy or NAME=random:DIMS, --inputs DIR, or --stream FILE)");
  std::vector<CallSpec> planned = calls;
  if (planned.empty() && loaded.model.inputs().empty() && require_calls) planned.push_back({{}, "no inputs"});
  RunResult run = replay_calls(loaded, planned, cli.seed);
  if (!cli.chrome_trace.empty()) write_chrome_trace(cli.chrome_trace, cli.model, run.calls, loaded.model.events());
  return run;
}

}  // namespace canary::cli
