// JSON forms of the inspect and explain reports (nlohmann::json stays in this file and chrome_trace.cpp).
#include "cli/json_reports.h"

#include <nlohmann/json.hpp>

#include "cli/event_words.h"
#include "cli/explain_text.h"

namespace canary::cli {

using nlohmann::json;

namespace {

// One installed variant (VariantReport).
json variant_json(const VariantReport& v) {
  json groups = json::array(), guards = json::array();
  for (const FusionGroupReport& g : v.groups)
    groups.push_back({{"nodes", g.nodes},
                      {"expression", g.expression},
                      {"inputs", g.inputs},
                      {"outputs", g.outputs},
                      {"sunk", g.sunk},
                      {"device", g.device}});
  for (const GuardReport& g : v.guards) guards.push_back({{"condition", g.condition}, {"failures", g.failures}});
  return {{"trace", v.trace},     {"tier", v.tier},         {"math", v.math},       {"isa", v.isa},
          {"loop", v.loop},       {"side", v.side},         {"start_pc", v.start_pc}, {"end_pc", v.end_pc},   {"groups", groups},
          {"kernels", v.kernels}, {"guards", guards},       {"entries", v.entries}, {"deopts", v.deopts},
          {"compile_ms", v.compile_ms}, {"code_bytes", v.code_bytes}, {"device_error", v.device_error},
          {"listing", v.listing}};
}

// The whole JitReport.
json jit_json(const JitReport& r) {
  json anchors = json::array();
  for (const AnchorReport& a : r.anchors) {
    json variants = json::array();
    json side_traces = json::array();
    for (const VariantReport& v : a.variants) variants.push_back(variant_json(v));
    for (const VariantReport& v : a.side_traces) side_traces.push_back(variant_json(v));
    anchors.push_back({{"name", a.name}, {"kind", a.kind}, {"pc", a.pc}, {"compiles", a.compiles},
                       {"state", a.state}, {"variants", variants}, {"side_traces", side_traces}});
  }
  return {{"enabled", r.enabled}, {"isa", r.isa}, {"device", r.device}, {"device_absent", r.device_absent},
          {"anchors", anchors}};
}

// One cost-model decision: weights, limits and every candidate's terms and gates.
json decision_json(const CostDecision& d) {
  json candidates = json::array();
  for (const CostCandidate& c : d.candidates) {
    json terms = json::array(), gates = json::array();
    for (const CostTerm& t : c.terms)
      terms.push_back({{"name", t.name}, {"value", t.value}, {"unit", t.unit}, {"normalised", t.normalised},
                       {"weight", t.weight}, {"source", t.source}});
    for (const CostGate& g : c.gates) gates.push_back({{"name", g.name}, {"passed", g.passed}, {"detail", g.detail}});
    candidates.push_back({{"name", c.name}, {"passed", c.passed}, {"cost", c.cost}, {"calls", c.calls},
                          {"shadow_calls", c.shadow_calls}, {"terms", terms}, {"gates", gates}});
  }
  const CostWeights& w = d.weights;
  const CostLimits& l = d.limits;
  return {{"anchor", d.anchor}, {"trace", d.trace}, {"call", d.call}, {"profile", d.profile},
          {"chosen", d.candidates.empty() ? "" : d.candidates[d.chosen].name}, {"reason", d.reason},
          {"weights", {{"latency", w.latency}, {"tail", w.tail}, {"error", w.error}, {"flips", w.flips},
                       {"variance", w.variance}, {"deopt", w.deopt}, {"energy", w.energy}, {"memory", w.memory},
                       {"transfer", w.transfer}}},
          {"limits", {{"max_relative_error", l.max_relative_error}, {"relative_floor", l.relative_floor},
                      {"reject_far_flips", l.reject_far_flips}, {"max_variance_ratio", l.max_variance_ratio}}},
          {"candidates", candidates}, {"table", d.to_table()}};
}

// Calls and time of one tier.
json tier_json(const TierTime& t) {
  return {{"calls", t.calls}, {"total_us", t.total_us}, {"mean_us", t.mean_us()}};
}

// Both tiers of a replay.
json tiers_json(const std::vector<CallRecord>& calls) {
  const TierTimes t = tier_times(calls);
  return {{"interpreter", tier_json(t.interpreter)}, {"compiled", tier_json(t.compiled)}};
}

// Every call as the CLI measured it.
json calls_json(const std::vector<CallRecord>& calls) {
  json out = json::array();
  for (const CallRecord& c : calls)
    out.push_back({{"call", c.call}, {"origin", c.origin}, {"start_us", c.start_us}, {"duration_us", c.duration_us},
                   {"tier", c.compiled ? "compiled" : "interpreter"}, {"guard_failures", c.guard_failures},
                   {"deopts", c.deopts}});
  return out;
}

// Session stats with the JIT counters.
json stats_json(const Stats& s) {
  json inputs = json::array();
  for (const InputShapes& in : s.input_shapes) {
    json shapes = json::array();
    for (const ShapeCount& sc : in.shapes) shapes.push_back({{"shape", sc.shape}, {"count", sc.count}});
    inputs.push_back({{"input", in.input}, {"shapes", shapes}, {"other", in.other}});
  }
  const JitStats& j = s.jit;
  json jit = {{"compiled_entries", j.compiled_entries}, {"guard_failures", j.guard_failures},
              {"deopts", j.deopts}, {"side_trace_entries", j.side_trace_entries},
              {"tiled_fused_calls", j.tiled_fused_calls},
              {"device_fused_calls", j.device_fused_calls}, {"device_bytes", j.device_bytes},
              {"device_chain_calls", j.device_chain_calls},
              {"device_fallbacks", j.device_fallbacks},
              {"value_canaries", j.value_canaries},
              {"range_canaries", j.range_canaries}, {"traces_recorded", j.traces_recorded},
              {"compiles", j.compiles}, {"compile_failures", j.compile_failures}, {"retraces", j.retraces},
              {"compiles_dropped", j.compiles_dropped}, {"traces_evicted", j.traces_evicted},
              {"variants_installed", j.variants_installed}, {"side_traces_installed", j.side_traces_installed},
              {"code_bytes", j.code_bytes},
              {"compile_ms", j.compile_ms}};
  return {{"calls", s.calls},
          {"failed_calls", s.failed_calls},
          {"instructions_executed", s.instructions_executed},
          {"distinct_shapes", s.distinct_shapes},
          {"arena_bytes", s.arena_bytes},
          {"peak_arena_bytes", s.peak_arena_bytes},
          {"input_shapes", inputs},
          {"jit", jit}};
}

// One event with every field and its sentence.
json event_json(const Event& e) {
  return {{"sequence", e.sequence}, {"kind", std::string(event_kind_name(e.kind))},
          {"time_us", e.time_us},   {"thread", e.thread == 1 ? "compile" : "session"},
          {"call", e.call},         {"anchor", e.anchor},
          {"trace", e.trace},       {"pc", e.pc},
          {"guard", e.guard},       {"observed", e.observed},
          {"decision", e.decision}, {"duration_ms", e.duration_ms},
          {"code_bytes", e.code_bytes}, {"message", e.message},
          {"text", describe_event(e)}};
}

}  // namespace

// One entry per graph pass that ran.
static json graph_passes_json(const std::vector<GraphPassReport>& passes) {
  json list = json::array();
  for (const GraphPassReport& p : passes)
    list.push_back({{"pass", p.pass}, {"changes", p.changes}, {"nodes_before", p.nodes_before},
                    {"nodes_after", p.nodes_after}, {"details", p.details}});
  return list;
}

std::string inspect_json(const std::string& model_path, const std::vector<GraphPassReport>& passes,
                         const JitReport& report, const RunResult& run) {
  const json doc = {{"format", "canary-inspect"}, {"version", 1},          {"model", model_path},
                    {"graph_passes", graph_passes_json(passes)},
                    {"jit", jit_json(report)},    {"tiers", tiers_json(run.calls)},
                    {"stats", stats_json(run.stats)}, {"calls", calls_json(run.calls)}};
  return doc.dump(2) + "\n";
}

std::string explain_json(const std::string& model_path, const std::vector<Event>& events, const RunResult& run,
                         bool cost_model_on) {
  json list = json::array(), recompiles = json::array(), counts = json::object(), decisions = json::array();
  for (const Event& e : events) {
    list.push_back(event_json(e));
    if (e.kind == EventKind::Decision && e.cost) decisions.push_back(decision_json(*e.cost));
    const std::string kind(event_kind_name(e.kind));
    counts[kind] = counts.value(kind, 0) + 1;
  }
  for (const Recompile& r : find_recompiles(events))
    recompiles.push_back({{"call", r.call}, {"anchor", r.anchor}, {"cause", r.cause}, {"decision", r.decision},
                          {"outcome", r.outcome}, {"trace", r.trace}, {"compile_ms", r.compile_ms},
                          {"text", r.text()}});
  const json doc = {{"format", "canary-explain"},
                    {"version", 1},
                    {"model", model_path},
                    {"events", list},
                    {"recompiles", recompiles},
                    {"counts", counts},
                    {"cost_model", {{"enabled", cost_model_on}, {"decisions", decisions}}},
                    {"tiers", tiers_json(run.calls)},
                    {"calls", calls_json(run.calls)}};
  return doc.dump(2) + "\n";
}

}  // namespace canary::cli
