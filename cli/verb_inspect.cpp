// canary inspect: after the calls, what the JIT holds (text or --json).
#include <iostream>

#include "cli/inspect_text.h"
#include "cli/json_reports.h"
#include "cli/verbs.h"

namespace canary::cli {

namespace {

// The names of the model's inputs.
std::vector<std::string> input_names(const Model& model) {
  std::vector<std::string> names;
  for (const TensorSpec& spec : model.inputs()) names.push_back(spec.name);
  return names;
}

// Whether calls may run as slices of their batch on the intra-op threads, and why not.
void print_batch_split(std::ostream& os, const Model& model) {
  const std::string obstacle = model.batch_split_obstacle();
  if (obstacle.empty())
    os << "batch split: samples are independent; with --threads N, calls at batch 2 or more run as batch slices\n";
  else
    os << "batch split: no (" << obstacle << ")\n";
}

}  // namespace

int inspect_command(const CliOptions& cli) {
  const LoadedModel loaded = load_model(cli);
  const RunResult run = replay_for_command(cli, loaded, false);
  const JitReport report = loaded.model.jit_report();
  if (cli.json) {
    std::cout << inspect_json(cli.model, loaded.model.graph_passes(), report, run);
    return 0;
  }
  if (cli.passes) print_graph_passes(std::cout, loaded.model.graph_passes());
  print_batch_split(std::cout, loaded.model);
  print_inspect(std::cout, report, input_names(loaded.model), run, cli.listing);
  return 0;
}

}  // namespace canary::cli
