// Prints the flow-meter report from a replay.
#include "samples/flowmeter/report.h"

#include <map>

#include "samples/flowmeter/flow_accuracy.h"

namespace flowmeter {
namespace {

// "[40, 7, 60]".
std::string shape_text(const std::array<std::int64_t, 3>& s) {
  return "[" + std::to_string(s[0]) + ", " + std::to_string(s[1]) + ", " + std::to_string(s[2]) + "]";
}

// printf into a std::string.
template <typename... Args>
std::string format(const char* fmt, Args... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

// The first event of a kind in a call, if any.
const canary::Event* first_of(const CallRecord& call, canary::EventKind kind) {
  for (const canary::Event& e : call.events)
    if (e.kind == kind) return &e;
  return nullptr;
}

// Header: model signature, stream parameters, fault counts, JIT mode.
void print_header(std::FILE* out, const ReportContext& ctx, const canary::Model& model, const StreamGenerator& stream,
                  int calls) {
  const StreamConfig& c = stream.config();
  std::fprintf(out, "canary-flowmeter: %.*s model %s\n", static_cast<int>(model_kind_name(ctx.kind).size()),
               model_kind_name(ctx.kind).data(), ctx.model_path.c_str());
  for (const auto& in : model.inputs()) std::fprintf(out, "  input  %s\n", in.to_string().c_str());
  for (const auto& o : model.outputs()) std::fprintf(out, "  output %s\n", o.to_string().c_str());
  std::map<std::string_view, int> faults;
  for (const SensorFault& f : stream.faults().all())
    if (f.start_min < stream.call_time(calls - 1)) ++faults[fault_kind_name(f.kind)];
  std::fprintf(out, "stream: seed %llu, %d wells (%d held back as new wells), %d calls every %.0f min, W %d\n",
               static_cast<unsigned long long>(c.seed), c.wells, new_well_count(c.wells), calls, c.interval_min, c.window);
  std::fprintf(out, "gauge faults: %d dropouts, %d stuck, %d drifting, %d spikes; 0.5 %% noise\n", faults["dropout"],
               faults["stuck"], faults["drift"], faults["spike"]);
  std::fprintf(out, "JIT: %s\n\n", ctx.jit ? "on (background compiles)" : "off (interpreter only)");
}

// Each scheduled event, with the outcome of every call it shaped.
void print_shape_events(std::FILE* out, const StreamGenerator& stream, const ReplayResult& result) {
  std::fprintf(out, "shape events (%zu scheduled)\n", stream.script().events.size());
  for (const ShapeEvent& e : stream.script().events) {
    if (e.call >= static_cast<int>(result.calls.size())) continue;
    std::fprintf(out, "  call %-4d %-16.*s %s\n", e.call, static_cast<int>(shape_event_kind_name(e.kind).size()),
                 shape_event_kind_name(e.kind).data(), e.describe().c_str());
    for (int i = e.call; i < e.call + std::max(1, e.span) && i < static_cast<int>(result.calls.size()); ++i) {
      const CallRecord& c = result.calls[static_cast<std::size_t>(i)];
      std::fprintf(out, "            %s\n", describe_call(c).c_str());
      const std::string jit = describe_jit_events(c);
      if (!jit.empty()) std::fprintf(out, "            JIT: %s\n", jit.c_str());
    }
  }
  std::fprintf(out, "\n");
}

// Gap handling, accuracy, tiers, latency and outcomes.
void print_numbers(std::FILE* out, const ReplayResult& result) {
  const OutcomeSummary o = summarize_outcomes(result);
  const AccuracySummary a = summarize_accuracy(result);
  const LatencySummary l = summarize_latency(result);
  std::fprintf(out, "gaps: %lld readings filled, %lld leading steps trimmed, %lld well-windows masked (no estimate)\n",
               static_cast<long long>(o.imputed_values), static_cast<long long>(o.trimmed_steps),
               static_cast<long long>(o.masked_wells));
  for (const CallRecord& c : result.calls)
    if (!c.masked.empty()) {
      std::fprintf(out, "  e.g. call %d well %d: %s\n", c.index, c.masked.front().first, c.masked.front().second.c_str());
      break;
    }
  std::fprintf(out, "accuracy vs fp64 ground truth over %lld estimates:\n", static_cast<long long>(a.estimates));
  std::fprintf(out, "  MAPE        oil %5.1f %%, gas %5.1f %%, water %5.1f %%\n", a.mape[0], a.mape[1], a.mape[2]);
  std::fprintf(out, "  median APE  oil %5.1f %%, gas %5.1f %%, water %5.1f %%\n", a.median_ape[0], a.median_ape[1],
               a.median_ape[2]);
  std::fprintf(out, "  (floors %.0f / %.0f / %.0f Sm3/h); negative rates %lld, non-finite rates %lld\n", kMapeFloor[0],
               kMapeFloor[1], kMapeFloor[2], static_cast<long long>(a.negative_rates),
               static_cast<long long>(a.non_finite_rates));
  std::fprintf(out, "tiers: max relative deviation from the fp64 reference session %.2g (floor 1 Sm3/h)\n",
               a.max_reference_error);
  std::fprintf(out, "latency per call: p50 %.3f ms, p99 %.3f ms, max %.3f ms over %d warm calls; first call %.3f ms\n",
               l.p50_us / 1e3, l.p99_us / 1e3, l.max_us / 1e3, l.samples, l.first_us / 1e3);
  std::fprintf(out, "outcomes: %d ran, %d rejected with canary::Error, %d with every well masked\n\n", o.ran,
               o.rejected, o.no_wells);
}

// True when a guard's condition reads one of the model's inputs ("x.dim2 == 60", "2 <= x.dim0 <= ...").
bool guards_model_input(const std::string& condition, const std::vector<canary::TensorSpec>& inputs) {
  for (const canary::TensorSpec& in : inputs) {
    const auto at = condition.find(in.name + ".");
    if (at != std::string::npos && (at == 0 || condition[at - 1] == ' ')) return true;
    if (condition.rfind(in.name + " ", 0) == 0) return true;
  }
  return false;
}

// Session stats, the JIT's counters, its variants (guards on model inputs, and any that failed) and the event log by kind.
void print_runtime(std::FILE* out, const canary::Model& model, const ReplayResult& result) {
  const std::vector<canary::TensorSpec>& inputs = model.inputs();
  const canary::Stats& s = result.stats;
  const canary::JitStats& j = s.jit;
  std::fprintf(out, "runtime: %llu calls ok, %llu failed\n", static_cast<unsigned long long>(s.calls),
               static_cast<unsigned long long>(s.failed_calls));
  std::fprintf(out, "  JIT: %llu traces recorded, %llu compiles (%llu failed, %.1f ms), %llu retraces, %llu variants installed\n",
               static_cast<unsigned long long>(j.traces_recorded), static_cast<unsigned long long>(j.compiles),
               static_cast<unsigned long long>(j.compile_failures), j.compile_ms,
               static_cast<unsigned long long>(j.retraces), static_cast<unsigned long long>(j.variants_installed));
  std::fprintf(out, "       %llu compiled entries, %llu guard failures, %llu deopts\n",
               static_cast<unsigned long long>(j.compiled_entries), static_cast<unsigned long long>(j.guard_failures),
               static_cast<unsigned long long>(j.deopts));
  for (const canary::AnchorReport& a : result.jit.anchors) {
    std::fprintf(out, "  anchor %s: %s, %zu variant(s)\n", a.name.c_str(), a.state.c_str(), a.variants.size());
    for (const canary::VariantReport& v : a.variants) {
      std::fprintf(out, "    trace %u: %s, %s, %llu entries, %zu kernels, %zu fused groups\n", v.trace, v.tier.c_str(),
                   v.isa.c_str(), static_cast<unsigned long long>(v.entries), v.kernels.size(), v.groups.size());
      std::size_t hidden = 0;
      for (const canary::GuardReport& g : v.guards) {
        if (!guards_model_input(g.condition, inputs) && g.failures == 0) {
          ++hidden;
          continue;
        }
        std::fprintf(out, "      guard %s (failed %llu)\n", g.condition.c_str(), static_cast<unsigned long long>(g.failures));
      }
      if (hidden > 0) std::fprintf(out, "      + %zu guards on weights and fused-group layouts, none failed\n", hidden);
    }
  }
  std::map<std::string_view, int> kinds;
  for (const canary::Event& e : result.events) ++kinds[canary::event_kind_name(e.kind)];
  std::string line;
  for (const auto& [name, count] : kinds) line += " " + std::string(name) + " " + std::to_string(count);
  std::fprintf(out, "  events:%s\n", line.empty() ? " none" : line.c_str());
}

}  // namespace

// Shape and outcome of one call.
std::string describe_call(const CallRecord& c) {
  std::string s = "call " + std::to_string(c.index) + " " + shape_text(c.stream_shape);
  if (!c.masked.empty()) s += format(" (%zu masked)", c.masked.size());
  switch (c.outcome) {
    case CallOutcome::Ran: {
      const auto m = call_mape(c);
      return s + format(" ran: %zu well%s, MAPE oil %.1f %% gas %.1f %% water %.1f %%, %.3f ms", c.wells.size(),
                        c.wells.size() == 1 ? "" : "s", m[0], m[1], m[2], c.latency_us / 1e3);
    }
    case CallOutcome::Rejected:
      return s + " rejected: canary::Error (" + canary::error_kind_name(c.error_kind) + "): " + c.error +
             "; no estimate this call, the stream goes on";
    case CallOutcome::NoWells: return s + " skipped: every well masked";
  }
  return s;
}

// Counts by kind, then the telling detail of guard failures, deopts, retraces and compiles.
std::string describe_jit_events(const CallRecord& c) {
  if (c.events.empty()) return "";
  std::map<std::string_view, int> kinds;
  for (const canary::Event& e : c.events) ++kinds[canary::event_kind_name(e.kind)];
  std::string s;
  for (const auto& [name, count] : kinds) s += (s.empty() ? "" : ", ") + std::string(name) + " x" + std::to_string(count);
  if (const canary::Event* e = first_of(c, canary::EventKind::GuardFailed)) s += "; guard '" + e->guard + "' " + e->observed;
  if (const canary::Event* e = first_of(c, canary::EventKind::Deopt)) s += "; deopt at '" + e->guard + "' " + e->observed;
  if (const canary::Event* e = first_of(c, canary::EventKind::Retrace)) s += "; retrace: " + e->decision;
  if (const canary::Event* e = first_of(c, canary::EventKind::Compiled)) s += "; compiled: " + e->decision;
  if (const canary::Event* e = first_of(c, canary::EventKind::CompileFailed)) s += "; compile failed: " + e->message;
  return s;
}

// Header, per-call lines when verbose, shape events, numbers, runtime.
void print_report(std::FILE* out, const ReportContext& context, const canary::Model& model,
                  const StreamGenerator& stream, const ReplayResult& result) {
  print_header(out, context, model, stream, static_cast<int>(result.calls.size()));
  if (context.verbose) {
    for (const CallRecord& c : result.calls) {
      std::fprintf(out, "%s\n", describe_call(c).c_str());
      if (const std::string jit = describe_jit_events(c); !jit.empty()) std::fprintf(out, "  JIT: %s\n", jit.c_str());
    }
    std::fprintf(out, "\n");
  }
  print_shape_events(out, stream, result);
  print_numbers(out, result);
  print_runtime(out, model, result);
}

}  // namespace flowmeter
