// canary run: replay the calls, write the outputs, print the summary.
#include <iostream>

#include "cli/output_files.h"
#include "cli/run_summary.h"
#include "cli/runtime_options.h"
#include "cli/verbs.h"

namespace canary::cli {

int run_command(const CliOptions& cli) {
  const LoadedModel loaded = load_model(cli);
  const RunResult run = replay_for_command(cli, loaded, true);
  std::vector<std::string> written;
  if (!cli.output_dir.empty()) written = write_outputs(cli.output_dir, run.last_outputs);
  print_run_summary(std::cout, cli.model, describe_settings(cli), loaded.model, run, written);
  return 0;
}

}  // namespace canary::cli
