// The run summary: model signature, call times per tier, output values, stats.
#include "cli/run_summary.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace canary::cli {

namespace {

// "x: f32[N, 4], h0: f32[N, 2]".
std::string signature(const std::vector<TensorSpec>& specs) {
  std::string s;
  for (const TensorSpec& spec : specs) s += (s.empty() ? "" : ", ") + spec.to_string();
  return s.empty() ? "(none)" : s;
}

// Median of the call durations.
double median_us(const std::vector<CallRecord>& calls) {
  std::vector<double> d;
  for (const CallRecord& c : calls) d.push_back(c.duration_us);
  std::sort(d.begin(), d.end());
  const std::size_t n = d.size();
  return n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
}

// "[8, 4] x12, [16, 4] x8".
std::string shape_counts(const InputShapes& in) {
  std::string s;
  for (const ShapeCount& sc : in.shapes) s += fmt::format("{}{} x{}", s.empty() ? "" : ", ", shape_to_string(sc.shape), sc.count);
  if (in.other) s += fmt::format(", {} calls of other shapes", in.other);
  return s;
}

}  // namespace

ValueSummary summarise_values(const Tensor& t) {
  ValueSummary v;
  double sum = 0.0;
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    const double x = t.element_as_double(i);
    if (!std::isfinite(x)) {
      ++v.non_finite;
      continue;
    }
    v.min = v.count ? std::min(v.min, x) : x;
    v.max = v.count ? std::max(v.max, x) : x;
    sum += x;
    ++v.count;
  }
  v.mean = v.count ? sum / static_cast<double>(v.count) : 0.0;
  return v;
}

void print_call_times(std::ostream& os, const std::vector<CallRecord>& calls) {
  if (calls.empty()) {
    fmt::print(os, "calls: none\n");
    return;
  }
  const TierTimes t = tier_times(calls);
  double min = calls.front().duration_us, max = min;
  for (const CallRecord& c : calls) {
    min = std::min(min, c.duration_us);
    max = std::max(max, c.duration_us);
  }
  const double total = t.interpreter.total_us + t.compiled.total_us;
  fmt::print(os, "calls: {} in {:.3f} ms; per call: mean {:.1f} us, median {:.1f} us, min {:.1f} us, max {:.1f} us\n",
             calls.size(), total / 1000.0, total / static_cast<double>(calls.size()), median_us(calls), min, max);
  fmt::print(os, "  interpreter only: {} calls, mean {:.1f} us\n", t.interpreter.calls, t.interpreter.mean_us());
  fmt::print(os, "  compiled code:    {} calls, mean {:.1f} us\n", t.compiled.calls, t.compiled.mean_us());
}

void print_stats(std::ostream& os, const Stats& s) {
  fmt::print(os, "stats: {} calls ({} failed), {} instructions, {} distinct shapes\n", s.calls, s.failed_calls,
             s.instructions_executed, s.distinct_shapes);
  for (const InputShapes& in : s.input_shapes) fmt::print(os, "  input {}: {}\n", in.input, shape_counts(in));
  const JitStats& j = s.jit;
  fmt::print(os, "jit: {} compiled entries, {} guard failures, {} deopts, {} exits continued in side traces, {} value canaries\n",
             j.compiled_entries, j.guard_failures, j.deopts, j.side_trace_entries, j.value_canaries);
  if (j.tiled_fused_calls > 0)
    fmt::print(os, "  {} fused calls ran short rows as long tiles\n", j.tiled_fused_calls);
  if (j.device_fused_calls > 0 || j.device_fallbacks > 0)
    fmt::print(os,
               "  {} fused calls ran on the GPU ({} bytes moved to and from it, {} chains of calls sharing values "
               "there); {} variants fell back to the CPU\n",
               j.device_fused_calls, j.device_bytes, j.device_chain_calls, j.device_fallbacks);
  fmt::print(os, "  {} traces, {} compiles ({:.3f} ms), {} failed, {} retraces; {} variants and {} side traces installed, {} bytes of code\n",
             j.traces_recorded, j.compiles, j.compile_ms, j.compile_failures, j.retraces, j.variants_installed,
             j.side_traces_installed, j.code_bytes);
}

void print_run_summary(std::ostream& os, const std::string& model_path, const std::string& settings,
                       const Model& model, const RunResult& run, const std::vector<std::string>& written) {
  fmt::print(os, "model: {}\n  inputs: {}\n  outputs: {}\n  runtime: {}\n", model_path, signature(model.inputs()),
             signature(model.outputs()), settings);
  print_call_times(os, run.calls);
  if (!run.calls.empty()) fmt::print(os, "outputs of call {}:\n", run.calls.back().call);
  for (const auto& [name, tensor] : run.last_outputs) {
    const ValueSummary v = summarise_values(tensor);
    fmt::print(os, "  {}: {}  min {:.6g}  max {:.6g}  mean {:.6g}", name, tensor.type_string(), v.min, v.max, v.mean);
    if (v.non_finite) fmt::print(os, "  ({} NaN/Inf)", v.non_finite);
    fmt::print(os, "\n");
  }
  print_stats(os, run.stats);
  for (const std::string& path : written) fmt::print(os, "wrote {}\n", path);
}

}  // namespace canary::cli
