// The short summary `canary run` prints: calls and their times, outputs, session stats.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "canary/canary.h"
#include "cli/replay.h"

namespace canary::cli {

// Minimum, maximum and mean of a tensor's finite elements (bool as 0/1).
struct ValueSummary {
  std::int64_t count = 0;       // finite elements
  std::int64_t non_finite = 0;  // NaN and Inf elements
  double min = 0.0, max = 0.0, mean = 0.0;
};
ValueSummary summarise_values(const Tensor& t);

// "calls: 20 in 1.234 ms; per call mean ..., then time per tier.
void print_call_times(std::ostream& os, const std::vector<CallRecord>& calls);

// Session counters: calls, instructions, input shapes, JIT counters.
void print_stats(std::ostream& os, const Stats& stats);

// Everything `canary run` prints after the calls.
// `settings` is describe_settings() of the command line.
void print_run_summary(std::ostream& os, const std::string& model_path, const std::string& settings,
                       const Model& model, const RunResult& run, const std::vector<std::string>& written);

}  // namespace canary::cli
