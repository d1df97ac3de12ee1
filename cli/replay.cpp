// Loading the model and replaying calls with timing and per-call JIT counters.
#include "cli/replay.h"

#include <filesystem>

#include "cli/runtime_options.h"

namespace canary::cli {

LoadedModel load_model(const CliOptions& cli) {
  std::error_code ec;
  if (!std::filesystem::exists(cli.model, ec))
    throw Error(ErrorKind::Input, "model file '" + cli.model + "' does not exist");
  if (std::filesystem::is_directory(cli.model, ec))
    throw Error(ErrorKind::Input, "model path '" + cli.model + "' is a folder, not a model file");
  const Runtime runtime(runtime_options(cli));
  Model model = runtime.load(cli.model);
  return {std::move(model), Clock::now()};
}

namespace {

// A duration in microseconds.
double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// "call 3 (calls.txt:2): " when a run has several calls, "" for a single call.
std::string call_prefix(std::size_t calls, std::uint64_t call, const std::string& origin) {
  if (calls <= 1) return "";
  return "call " + std::to_string(call) + (origin.empty() ? "" : " (" + origin + ")") + ": ";
}

// Runs one call and records it; rethrows errors with the call's number and origin.
CallRecord run_one(Session& session, const NamedTensors& inputs, const CallSpec& spec, std::uint64_t call,
                   const std::string& prefix, Clock::time_point origin, NamedTensors& outputs) {
  const JitStats before = session.stats().jit;
  CallRecord r;
  r.call = call;
  r.origin = spec.origin;
  const Clock::time_point start = Clock::now();
  try {
    outputs = session.run(inputs);
  } catch (const Error& e) {
    throw Error(e.kind(), prefix + e.detail());
  }
  const Clock::time_point end = Clock::now();
  r.start_us = micros(start - origin);
  r.duration_us = micros(end - start);
  const JitStats& after = session.stats().jit;
  r.compiled = after.compiled_entries > before.compiled_entries;
  r.guard_failures = after.guard_failures - before.guard_failures;
  r.deopts = after.deopts - before.deopts;
  return r;
}

}  // namespace

RunResult replay_calls(const LoadedModel& loaded, const std::vector<CallSpec>& calls, std::uint64_t seed) {
  RunResult result;
  Session session = loaded.model.session();
  CallInputs inputs(loaded.model.inputs(), seed);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const std::uint64_t call = i + 1;
    NamedTensors tensors;
    try {
      tensors = inputs.make(calls[i].inputs, call);
    } catch (const Error& e) {
      throw Error(e.kind(), call_prefix(calls.size(), call, "") + e.detail());
    }
    const std::string prefix = call_prefix(calls.size(), call, calls[i].origin);
    result.calls.push_back(run_one(session, tensors, calls[i], call, prefix, loaded.origin, result.last_outputs));
  }
  loaded.model.wait_for_compiles();
  result.stats = session.stats();
  return result;
}

TierTimes tier_times(const std::vector<CallRecord>& calls) {
  TierTimes t;
  for (const CallRecord& c : calls) {
    TierTime& tier = c.compiled ? t.compiled : t.interpreter;
    ++tier.calls;
    tier.total_us += c.duration_us;
  }
  return t;
}

}  // namespace canary::cli
