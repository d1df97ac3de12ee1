// The flow-meter report: the stream, each shape event and what became of it,
// gap handling, accuracy against ground truth, latency, and the runtime's
// story (compiles, guard failures, deopts, retraces, variants).
#pragma once

#include <cstdio>
#include <string>

#include "samples/flowmeter/replay.h"

namespace flowmeter {

struct ReportContext {
  std::string model_path;
  ModelKind kind = ModelKind::Conv;
  bool jit = true;
  bool verbose = false;  // one line per call
};

// Prints the whole report.
void print_report(std::FILE* out, const ReportContext& context, const canary::Model& model,
                  const StreamGenerator& stream, const ReplayResult& result);

// One line for a call: shape, outcome, wells, MAPE, latency.
std::string describe_call(const CallRecord& call);

// What the JIT did during a call, in one line ("" when nothing happened).
std::string describe_jit_events(const CallRecord& call);

}  // namespace flowmeter
