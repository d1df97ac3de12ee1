// The `canary` command: parses the command line (CLI11 stays in this file) and runs one verb.
//
//   canary run     MODEL [inputs] [--output-dir DIR] [--chrome-trace FILE.json]
//   canary inspect MODEL [inputs] [--json] [--listing] [--passes] [--chrome-trace FILE.json]
//   canary explain MODEL [inputs] [--json] [--chrome-trace FILE.json]
//   canary dot     MODEL [inputs]
//
// inputs: --input NAME=FILE.npy | NAME=random[:DIMS] (repeatable), --inputs DIR,
// --stream FILE, --repeat N, --seed S; runtime: --profile, --cost, --decision,
// --no-jit, --threads, --sync-compile, --hot N, --graph-opt. Any error exits non-zero with one line on stderr.
#include <cstdio>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>

#include "canary/error.h"
#include "cli/verbs.h"

namespace {

using canary::cli::CliOptions;

// The options every verb takes: the model, its inputs and the runtime settings.
void add_common_options(CLI::App* verb, CliOptions& cli, std::uint64_t& hot) {
  verb->add_option("model", cli.model, "Model file: .onnx, or the text format (.cnr)")->required();
  verb->add_option("-i,--input", cli.inputs.inputs, "NAME=FILE.npy or NAME=random[:DIMS] (e.g. x=random:4x16); repeatable");
  verb->add_option("--inputs", cli.inputs.inputs_dir, "Folder of NAME.npy files, one per model input");
  verb->add_option("--stream", cli.inputs.stream, "File with one call per line (see docs/cli.md)");
  verb->add_option("--repeat", cli.inputs.repeat, "Replay the calls N times")->check(CLI::Range(1, 1000000));
  verb->add_option("--seed", cli.seed, "Seed of random inputs");
  verb->add_option("--profile", cli.profile, "speed | balanced | robust")
      ->check(CLI::IsMember({"speed", "balanced", "robust"}));
  verb->add_flag("--cost", cli.cost,
                 "Choose variants with the robustness-weighted cost model (trials with shadow runs against the fp64 "
                 "reference; --profile sets its weights and limits)");
  verb->add_option("--decision", cli.decisions,
                   "An output whose values are decisions: OUTPUT=threshold:T[:MARGIN] or OUTPUT=argmax[:MARGIN]; "
                   "repeatable (with --cost)");
  verb->add_flag("--no-jit", cli.no_jit, "Interpreter only");
  verb->add_flag("--sync-compile", cli.sync_compile, "Compile on the calling thread (deterministic)");
  verb->add_flag("--range-canaries", cli.range_canaries,
                 "Report compiled outputs outside the range recorded for them (value-canary events)");
  verb->add_option("--device", cli.device,
                   "Where fused groups run: cpu, gpu (an NVIDIA GPU where one is usable) or auto (the cost model "
                   "places each trace; needs --cost)")
      ->check(CLI::IsMember({"cpu", "gpu", "auto"}));
  verb->add_option("--threads", cli.threads, "Intra-op threads of the oneDNN kernels (0: library default)")
      ->check(CLI::Range(0, 1024));
  verb->add_option("--graph-opt", cli.graph_opt,
                   "Graph optimizer level at load: off, basic (rewrites that keep every value) or all (also "
                   "BatchNormalization folding and fusions that round differently; default)")
      ->check(CLI::IsMember({"off", "basic", "all"}));
  verb->add_option("--hot", hot,
                   "Anchor visits before a trace is recorded (default 8, or sooner once interpreting a region has "
                   "taken 2 ms); given, exactly N visits")
      ->check(CLI::Range(1, 1000000000));
}

// "canary: error: <what>" on one line.
int report_error(const std::string& what, int status) {
  std::string line = what;
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  std::fprintf(stderr, "canary: error: %s\n", line.c_str());
  return status;
}

// Runs the verb the command line chose.
int dispatch(const CliOptions& cli) {
  if (cli.verb == "run") return canary::cli::run_command(cli);
  if (cli.verb == "inspect") return canary::cli::inspect_command(cli);
  if (cli.verb == "explain") return canary::cli::explain_command(cli);
  return canary::cli::dot_command(cli);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"canary: run models, inspect the JIT's traces, explain every deopt and recompile", "canary"};
  app.require_subcommand(1);
  CliOptions cli;
  std::uint64_t hot = 0;
  CLI::App* run = app.add_subcommand("run", "Run a model and print a summary of the calls and outputs");
  CLI::App* inspect = app.add_subcommand("inspect", "After running, report what the JIT holds");
  CLI::App* explain = app.add_subcommand("explain", "After running, the JIT's event log in words");
  CLI::App* dot = app.add_subcommand("dot", "Graphviz DOT of the graph with fusion groups and guards");
  for (CLI::App* verb : {run, inspect, explain, dot}) add_common_options(verb, cli, hot);
  run->add_option("--output-dir", cli.output_dir, "Write the last call's outputs as NAME.npy here");
  for (CLI::App* verb : {run, inspect, explain})
    verb->add_option("--chrome-trace", cli.chrome_trace, "Write a Chrome trace-event file (Perfetto, chrome://tracing)");
  for (CLI::App* verb : {inspect, explain}) verb->add_flag("--json", cli.json, "Machine-readable output (docs/cli-json-schema.md)");
  inspect->add_flag("--listing", cli.listing, "Print each variant's full plan");
  inspect->add_flag("--passes", cli.passes, "Print what each graph-optimizer pass changed at load");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    return report_error(e.what(), 2);
  }
  cli.verb = app.get_subcommands().front()->get_name();
  if (hot > 0) cli.hot_threshold = hot;
  try {
    return dispatch(cli);
  } catch (const canary::Error& e) {
    return report_error(e.what(), 1);
  } catch (const std::exception& e) {
    return report_error(std::string("internal error: ") + e.what(), 1);
  } catch (...) {
    return report_error("internal error: unknown exception", 1);
  }
}
