// The differential harness (see differential_harness.h).
#include "tests/jit_differential/differential_harness.h"

#include <cmath>
#include <optional>

#include "tests/jit_differential/value_bounds.h"
#include "tests/runtime/host_fused_device.h"

namespace canary::differential {
namespace {

// One session's result for one call: outputs, or the error it threw.
struct Outcome {
  NamedTensors outputs;
  std::optional<ErrorKind> error;
  std::string message;
};

// Runs a call, catching canary::Error.
Outcome run_call(Session& session, const NamedTensors& inputs) {
  Outcome o;
  try {
    o.outputs = session.run(inputs);
  } catch (const Error& e) {
    o.error = e.kind();
    o.message = e.what();
  }
  return o;
}

// "threw <message>" or "succeeded".
std::string outcome_text(const Outcome& o) { return o.error ? "threw: " + o.message : "succeeded"; }

// True when sum(sign(x)) > 0, the condition of a generated main-graph If.
bool then_taken(const Tensor& x) {
  double sum = 0;
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    double v = x.element_as_double(i);
    sum += v > 0 ? 1.0 : (v < 0 ? -1.0 : (std::isnan(v) ? NAN : 0.0));
  }
  return sum > 0;
}

// The state of one graph's run over its stream.
class GraphRun {
 public:
  GraphRun(const RandomGraph& graph, const std::vector<StreamCall>& stream, const HarnessOptions& options,
           DifferentialReport& report)
      : graph_(graph), stream_(stream), options_(options), report_(report) {}

  // Runs every call; returns the first failure ("" when none). twin: the
  // reference session of the unsaturated twin, or null when not needed.
  std::string run(Session& jit, Session& interp, Session& ref, Session* twin) {
    for (std::size_t i = 0; i < stream_.size(); ++i) {
      NamedTensors inputs = make_inputs(graph_, stream_[i], options_.values);
      note_branch(inputs);
      Outcome a = run_call(jit, inputs), b = run_call(interp, inputs);
      Outcome r = options_.compare_reference ? run_call(ref, inputs) : Outcome{};
      note_saturation(r, twin != nullptr ? run_call(*twin, inputs) : Outcome{});
      ++report_.calls;
      std::string what = compare_call(a, b, r);
      if (!what.empty()) return header(i) + what;
    }
    return "";
  }

 private:
  // Marks, per output, the elements that depend on an infinity clamped to
  // the f32 limits (the reference and its unsaturated twin differ there).
  // The static bounds assume inputs in [-2, 2]; computing on with 3.4e38 is
  // outside them (products of it cancel in fp64 but not in f32), so those
  // elements have no tolerance to be held to.
  void note_saturation(const Outcome& ref, const Outcome& twin) {
    saturated_.clear();
    if (ref.error || twin.error) return;
    for (const auto& [name, tensor] : ref.outputs) {
      auto t = twin.outputs.find(name);
      if (t != twin.outputs.end()) saturated_[name] = saturated_elements(tensor, t->second);
    }
  }

  // The current call's mask for an output (null when nothing is masked).
  const SkipMask* saturation_mask(const std::string& output) const {
    auto it = saturated_.find(output);
    return it == saturated_.end() ? nullptr : &it->second;
  }

  // Counts the main If's direction for this call's inputs.
  void note_branch(const NamedTensors& inputs) {
    if (graph_.if_condition_inputs.empty()) return;
    if (then_taken(inputs.at(graph_.if_condition_inputs.front()))) ++report_.then_calls;
    else ++report_.else_calls;
  }

  // "seed S (replay: ...), call i of n (N=.. ..): ".
  std::string header(std::size_t i) const {
    std::string seed = std::to_string(graph_.seed);
    return "seed " + seed + " (replay: CANARY_DIFF_SEED=" + seed + "), call " + std::to_string(i + 1) + " of " +
           std::to_string(stream_.size()) + " (" + describe_call(graph_, stream_[i]) + "): ";
  }

  // Compares the three outcomes of one call; returns what differs ("" when all agree).
  std::string compare_call(const Outcome& jit, const Outcome& interp, const Outcome& ref) {
    if (jit.error != interp.error) return "JIT " + outcome_text(jit) + " but the interpreter " + outcome_text(interp);
    if (options_.compare_reference && ref.error != interp.error)
      return "the reference " + outcome_text(ref) + " but the interpreter " + outcome_text(interp);
    if (interp.error) {
      ++report_.error_calls;
      return "";
    }
    for (const OutputBound& out : graph_.outputs) {
      std::string what = compare_output(out, jit, interp, ref);
      if (!what.empty()) return "output " + out.name + ": " + what;
    }
    return "";
  }

  // Compares one output: JIT vs interpreter, then both vs the reference.
  std::string compare_output(const OutputBound& out, const Outcome& jit, const Outcome& interp, const Outcome& ref) {
    auto j = jit.outputs.find(out.name), i = interp.outputs.find(out.name);
    if (j == jit.outputs.end() || i == interp.outputs.end()) return "missing from the JIT or interpreter result";
    // Bit-for-bit runs stay bit for bit even on saturated values.
    const SkipMask* skip = options_.identical_to_interpreter ? nullptr : saturation_mask(out.name);
    Tolerance tol = options_.identical_to_interpreter ? Tolerance{} : jit_tolerance(out);
    CompareResult c = compare_tensors(j->second, i->second, tol, skip);
    report_.compared += c.compared;
    report_.saturated += c.skipped;
    report_.non_finite += c.non_finite;
    report_.worst_jit_ratio = std::max(report_.worst_jit_ratio, c.worst_ratio);
    if (!c.difference.empty()) return "JIT vs interpreter, " + c.difference;
    if (!options_.compare_reference) return "";
    auto r = ref.outputs.find(out.name);
    if (r == ref.outputs.end()) return "missing from the reference result";
    for (const auto* side : {&i->second, &j->second}) {
      CompareResult d = compare_to_reference(*side, r->second, reference_tolerance(out), 1e30, saturation_mask(out.name));
      report_.worst_reference_ratio = std::max(report_.worst_reference_ratio, d.worst_ratio);
      if (side == &i->second) report_.skipped_reference += d.skipped;
      if (!d.difference.empty())
        return std::string(side == &i->second ? "interpreter" : "JIT") + " vs fp64 reference, " + d.difference;
    }
    return "";
  }

  const RandomGraph& graph_;
  const std::vector<StreamCall>& stream_;
  const HarnessOptions& options_;
  DifferentialReport& report_;
  std::map<std::string, SkipMask> saturated_;  // this call's masks by output name
};

}  // namespace

// Synchronous compiles after hot_threshold anchor visits.
Options jit_options(std::uint64_t hot_threshold, bool value_canaries, const std::string& fault_injection) {
  Options o;
  o.jit.fault_injection = fault_injection;
  o.jit.enabled = true;
  o.jit.synchronous = true;
  o.jit.hot_threshold = hot_threshold;
  o.jit.hot_time_us = 0;  // tier up by visits only: deterministic
  o.jit.value_canaries = value_canaries;
  return o;
}

// The interpreter only.
Options interpreter_options() {
  Options o;
  o.jit.enabled = false;
  return o;
}

// Two f32 implementations within g u of the exact value differ by at most 2 g u;
// the factor 2 and the depth-scaled relative term leave room for fused math.
Tolerance jit_tolerance(const OutputBound& out) {
  return Tolerance{4.0 * out.error_units * kUnitRoundoff + 1e-30, 8.0 * std::max(out.depth, 1) * kUnitRoundoff};
}

// The static bound, with a quarter of slack, plus one rounding of the reference's magnitude.
Tolerance reference_tolerance(const OutputBound& out) {
  return Tolerance{1.25 * out.error_units * kUnitRoundoff + 1e-30, kUnitRoundoff};
}

// Events of a model by kind.
std::array<std::size_t, kEventKinds> count_events(const std::vector<Event>& events) {
  std::array<std::size_t, kEventKinds> counts{};
  for (const Event& e : events) {
    auto k = static_cast<std::size_t>(e.kind);
    if (k < kEventKinds) ++counts[k];
  }
  return counts;
}

// Compiled events per anchor.
std::map<std::string, std::size_t> compiles_per_anchor(const std::vector<Event>& events) {
  std::map<std::string, std::size_t> out;
  for (const Event& e : events)
    if (e.kind == EventKind::Compiled) ++out[e.anchor];
  return out;
}

// The first `limit` events, one per line.
std::string describe_events(const std::vector<Event>& events, std::size_t limit) {
  std::string s;
  for (std::size_t i = 0; i < events.size() && i < limit; ++i) {
    const Event& e = events[i];
    s += "  #" + std::to_string(e.sequence) + " call " + std::to_string(e.call) + " " +
         std::string(event_kind_name(e.kind)) + " [" + e.anchor + "] " + e.message + "\n";
  }
  if (events.size() > limit) s += "  ... " + std::to_string(events.size() - limit) + " more\n";
  return s.empty() ? "  (none)\n" : s;
}

DifferentialRunner::DifferentialRunner()
    : interpreter_(interpreter_options()), device_(std::make_shared<test::HostFusedDevice>()) {}

// The JIT runtime for the options' threshold, canaries and fault injection (created once).
const Runtime& DifferentialRunner::jit_runtime(const HarnessOptions& options) {
  std::string key = std::to_string(options.hot_threshold) + (options.value_canaries ? "+canaries:" : ":") +
                    options.isa + ":" + options.fault_injection + (options.device ? ":device" : "") +
                    (options.cuda_device ? ":cuda" : "");
  auto& slot = jit_[key];
  if (!slot) {
    Options o = jit_options(options.hot_threshold, options.value_canaries, options.fault_injection);
    o.jit.isa = options.isa;
    if (options.device || options.cuda_device) o.jit.device = "gpu";
    slot = std::make_unique<Runtime>(o);
  }
  return *slot;
}

// Runs graph over stream on the three sessions and compares everything.
DifferentialReport DifferentialRunner::run(const RandomGraph& graph, const std::vector<StreamCall>& stream,
                                           const HarnessOptions& options) {
  DifferentialReport report;
  std::string source = "seed_" + std::to_string(graph.seed);
  std::optional<Model> jit_model, interp_model, twin_model;
  // The twin matters only where infinities are injected and a Clip lacks a bound.
  bool use_twin =
      options.compare_reference && options.values.non_finite_fraction > 0 && graph.unsaturated_text != graph.text;
  try {
    // The device is taken when the model loads (runtime/fused_device_lookup.cpp).
    std::optional<jit::ScopedDeviceOverride> device;
    if (options.device) device.emplace(device_);
    jit_model = jit_runtime(options).load_text(graph.text, source);
    interp_model = interpreter_.load_text(graph.text, source);
    if (use_twin) twin_model = interpreter_.load_text(graph.unsaturated_text, source + "_unsaturated");
  } catch (const Error& e) {
    report.failure = "seed " + std::to_string(graph.seed) + ": the generated graph does not load: " + e.what() +
                     "\ngraph:\n" + graph.text;
    return report;
  }
  Session jit = jit_model->session(), interp = interp_model->session(), ref = interp_model->reference_session();
  std::optional<Session> twin;
  if (twin_model) twin = twin_model->reference_session();
  const int row_runs_before = device_->row_runs();
  std::string failure = GraphRun(graph, stream, options, report).run(jit, interp, ref, twin ? &*twin : nullptr);
  report.device_row_runs = static_cast<std::size_t>(device_->row_runs() - row_runs_before);
  std::vector<Event> events = jit_model->events();
  report.events = count_events(events);
  report.jit = jit.stats().jit;
  const JitReport jit_report = jit_model->jit_report();
  report.device = jit_report.device;
  report.device_absent = jit_report.device_absent;
  if (!failure.empty()) report.failure = failure + "\nJIT events:\n" + describe_events(events) + "graph:\n" + graph.text;
  return report;
}

}  // namespace canary::differential
