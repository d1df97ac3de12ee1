// canary dot: after the calls (if any), Graphviz DOT of the graph with fusion clusters and guards.
#include <iostream>

#include "cli/verbs.h"

namespace canary::cli {

int dot_command(const CliOptions& cli) {
  const LoadedModel loaded = load_model(cli);
  replay_for_command(cli, loaded, false);
  std::cout << loaded.model.to_dot();
  return 0;
}

}  // namespace canary::cli
