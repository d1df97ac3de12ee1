// canary explain: after the calls, the JIT's event log in words (text or --json).
#include <iostream>

#include "cli/explain_text.h"
#include "cli/json_reports.h"
#include "cli/verbs.h"

namespace canary::cli {

int explain_command(const CliOptions& cli) {
  const LoadedModel loaded = load_model(cli);
  const RunResult run = replay_for_command(cli, loaded, false);
  const std::vector<Event> events = loaded.model.events();
  if (cli.json) std::cout << explain_json(cli.model, events, run, cli.cost);
  else print_explain(std::cout, events, run, cli.cost);
  return 0;
}

}  // namespace canary::cli
