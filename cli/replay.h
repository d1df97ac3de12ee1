// Replaying the planned calls on one session, timing each and telling which tier ran it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "canary/canary.h"
#include "cli/call_inputs.h"
#include "cli/cli_options.h"
#include "cli/stream_file.h"

namespace canary::cli {

using Clock = std::chrono::steady_clock;

// A model and the moment it finished loading (the origin of every time the CLI prints;
// Event::time_us counts from the same moment, give or take the load's last step).
struct LoadedModel {
  Model model;
  Clock::time_point origin;
};

// Loads cli.model with the options the command line asks for.
LoadedModel load_model(const CliOptions& cli);

// One Session::run call as the CLI measured it.
struct CallRecord {
  std::uint64_t call = 0;       // 1-based; the same numbering as Event::call
  std::string origin;           // "--input", "calls.txt:3"
  double start_us = 0.0;        // since the model loaded
  double duration_us = 0.0;     // around Session::run only (inputs are prepared before)
  bool compiled = false;        // compiled code ran (JitStats::compiled_entries grew)
  std::uint64_t guard_failures = 0;  // during this call
  std::uint64_t deopts = 0;          // during this call
};

struct RunResult {
  std::vector<CallRecord> calls;
  NamedTensors last_outputs;
  Stats stats;  // after the last call, once background compiles finished
};

// Runs every call in order on a new session; stops at the first error with
// Error naming the call and where it was written. Waits for compiles at the end.
RunResult replay_calls(const LoadedModel& loaded, const std::vector<CallSpec>& calls, std::uint64_t seed);

// Calls and time per tier (interpreter only / compiled code ran).
struct TierTime {
  std::uint64_t calls = 0;
  double total_us = 0.0;
  double mean_us() const { return calls ? total_us / static_cast<double>(calls) : 0.0; }
};
struct TierTimes {
  TierTime interpreter, compiled;
};
TierTimes tier_times(const std::vector<CallRecord>& calls);

}  // namespace canary::cli
