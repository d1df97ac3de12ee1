// What the command line asked for: the verb, the model, its inputs and the runtime settings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace canary::cli {

// Where the calls' inputs come from (see call_plan.h).
struct InputArgs {
  std::vector<std::string> inputs;  // --input NAME=FILE.npy | NAME=random[:DIMS]
  std::string inputs_dir;           // --inputs DIR (NAME.npy files)
  std::string stream;               // --stream FILE (one call per line)
  int repeat = 1;                   // --repeat N: the whole list of calls N times
};

struct CliOptions {
  std::string verb;  // run, inspect, explain, dot
  std::string model;
  InputArgs inputs;
  std::uint64_t seed = 0;                      // --seed: random inputs
  std::string output_dir;                      // --output-dir (run)
  std::string profile = "balanced";            // --profile speed|balanced|robust
  bool cost = false;                           // --cost: the robustness-weighted cost model chooses variants
  std::vector<std::string> decisions;          // --decision OUTPUT=threshold:T[:MARGIN] | OUTPUT=argmax[:MARGIN]
  bool no_jit = false;                         // --no-jit
  bool sync_compile = false;                   // --sync-compile: compile on the calling thread
  bool range_canaries = false;                 // --range-canaries: JitOptions::range_canaries
  std::string device = "cpu";                  // --device cpu|gpu|auto: JitOptions::device
  int threads = 1;                             // --threads: intra-op threads
  std::optional<std::uint64_t> hot_threshold;  // --hot N: anchor visits before a trace is recorded
  std::string chrome_trace;                    // --chrome-trace FILE.json
  bool json = false;                           // --json (inspect, explain)
  bool listing = false;                        // --listing (inspect): each variant's full plan
  bool passes = false;                         // --passes (inspect): what each graph pass changed
  std::string graph_opt = "all";               // --graph-opt off|basic|all: Options::graph_optimization
};

}  // namespace canary::cli
