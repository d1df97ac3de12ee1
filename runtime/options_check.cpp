// Option checks at load time, so a typo in a decision output's name or a
// negative noise level is a clear error instead of a silently ignored setting.
#include "runtime/options_check.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "graph/import_limits.h"

namespace canary {

namespace {

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::Input, "Options::cost: " + what); }

void check_number(const char* name, double value, double lo, double hi) {
  if (!std::isfinite(value) || value < lo || value > hi)
    bad(std::string(name) + " is " + std::to_string(value) + "; expected a finite value in [" + std::to_string(lo) +
        ", " + std::to_string(hi) + "]");
}

bool has(const std::vector<TensorSpec>& specs, const std::string& name) {
  return std::any_of(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == name; });
}

std::string names(const std::vector<TensorSpec>& specs) {
  std::string s;
  for (const TensorSpec& spec : specs) s += (s.empty() ? "" : ", ") + spec.name;
  return s;
}

void check_weights(const CostWeights& w) {
  for (const auto& [name, value] : {std::pair{"weights.latency", w.latency}, {"weights.tail", w.tail},
                                    {"weights.error", w.error}, {"weights.flips", w.flips},
                                    {"weights.variance", w.variance}, {"weights.deopt", w.deopt},
                                    {"weights.energy", w.energy}, {"weights.memory", w.memory},
                                    {"weights.transfer", w.transfer}})
    check_number(name, value, 0.0, 1e6);
}

void check_limits(const CostLimits& l) {
  check_number("limits.max_relative_error", l.max_relative_error, 0.0, 1e30);
  check_number("limits.relative_floor", l.relative_floor, 0.0, 1.0);
  check_number("limits.max_variance_ratio", l.max_variance_ratio, 1.0, 1e30);
}

// A limit outside [lo, hi]: Error(Input) naming it.
void check_limit(const char* name, std::int64_t value, std::int64_t lo, std::int64_t hi) {
  if (value >= lo && value <= hi) return;
  throw Error(ErrorKind::Input, std::string("Options::") + name + " is " + std::to_string(value) +
                                    "; expected a value in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

// A size limit of 0 would make every model fail: Error(Input) naming it.
void check_nonzero(const char* name, std::size_t value) {
  if (value == 0) throw Error(ErrorKind::Input, std::string("Options::") + name + " is 0; expected at least 1");
}

}  // namespace

void check_limit_options(const Options& o) {
  check_nonzero("max_arena_bytes", o.max_arena_bytes);
  check_nonzero("max_graph_nodes", o.max_graph_nodes);
  check_limit("max_loop_iterations", o.max_loop_iterations, 0, std::numeric_limits<std::int64_t>::max());
  check_limit("max_graph_depth", o.max_graph_depth, 0, graph::kMaxImportDepthCeiling);
  check_limit("graph_optimization", static_cast<int>(o.graph_optimization), 0, 2);
  if (o.jit.hot_time_us > (std::uint64_t{1} << 40))
    throw Error(ErrorKind::Input, "Options::jit.hot_time_us is " + std::to_string(o.jit.hot_time_us) +
                                      "; expected at most 2^40");
  check_limit("jit.max_traces", o.jit.max_traces, 1, 1 << 20);
  check_limit("jit.max_compile_queue", o.jit.max_compile_queue, 1, 1 << 20);
  check_limit("jit.epilogue_min_elements", o.jit.epilogue_min_elements, 0, std::numeric_limits<std::int64_t>::max());
  // Negative or NaN would make every range empty (or exclude what was recorded).
  if (!(std::isfinite(o.jit.range_margin) && o.jit.range_margin >= 0))
    throw Error(ErrorKind::Input, "Options::jit.range_margin is " + std::to_string(o.jit.range_margin) +
                                      "; expected a finite value of at least 0");
  if (o.jit.device != "cpu" && o.jit.device != "gpu" && o.jit.device != "auto")
    throw Error(ErrorKind::Input,
                "Options::jit.device is '" + o.jit.device + "'; expected \"cpu\", \"gpu\" or \"auto\"");
  // Placement by measurement is the cost model's: without it "auto" would silently mean "cpu".
  if (o.jit.device == "auto" && !o.cost.enabled)
    throw Error(ErrorKind::Input,
                "Options::jit.device is 'auto', which the cost model decides, but Options::cost.enabled is false; "
                "enable the cost model or choose \"cpu\" or \"gpu\"");
}

void check_options(const Options& options, const std::vector<TensorSpec>& inputs,
                   const std::vector<TensorSpec>& outputs) {
  const CostModelOptions& c = options.cost;
  if (c.weights) check_weights(*c.weights);
  if (c.limits) check_limits(*c.limits);
  check_number("trial_calls", c.trial_calls, 1, 1e6);
  check_number("shadow_samples", c.shadow_samples, 1, 1e6);  // a candidate is only chosen once measured
  check_number("monitor_every", c.monitor_every, 0, 1e12);
  check_number("max_shadow_overhead", c.max_shadow_overhead, 0.0, 1e12);
  check_number("shadow_burst_ms", c.shadow_burst_ms, 0.0, 1e12);
  check_number("noise_copies", c.noise_copies, 0, 1024);
  check_number("noise_sigma", c.noise_sigma, 0.0, 1e6);
  for (const DecisionOutput& d : c.decisions) {
    if (!has(outputs, d.output))
      bad("decision output '" + d.output + "' is not an output of the model (its outputs: " + names(outputs) + ")");
    check_number(("decision '" + d.output + "' threshold").c_str(), d.threshold, -1e300, 1e300);
    check_number(("decision '" + d.output + "' near_margin").c_str(), d.near_margin, 0.0, 1e300);
  }
  for (const std::string& mask : c.dropout_mask_inputs)
    if (!has(inputs, mask))
      bad("dropout mask input '" + mask + "' is not an input of the model (its inputs: " + names(inputs) + ")");
}

}  // namespace canary
