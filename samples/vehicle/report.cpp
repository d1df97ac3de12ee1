// The report, section by section; the shape-event story reads the JIT's
// events of the calls from each shape event up to the next one.
#include "samples/vehicle/report.h"

#include <cstdio>
#include <map>

namespace vehicle {
namespace {

// Per-kind detection table, the false-alarm rates and what was left out.
void print_detection(const Summary& s) {
  std::printf("\nDetection (a row is one vehicle at one call; precision counts every false alarm against each kind)\n");
  std::printf("  %-18s %6s %8s %12s %6s %7s %9s %6s\n", "kind", "events", "detected", "median delay", "rows", "recall",
              "precision", "F1");
  KindScore all;
  for (int k = 0; k < kLabelKindCount; ++k) {
    const auto kind = static_cast<LabelKind>(k);
    const KindScore& ks = s.kinds[static_cast<std::size_t>(k)];
    if (!is_attack(kind) || ks.rows + ks.events == 0) continue;
    std::printf("  %-18s %6d %8d %10.2f s %6lld %7.2f %9.2f %6.2f\n", std::string(label_kind_name(kind)).c_str(),
                ks.events, ks.detected, ks.median_delay(), static_cast<long long>(ks.rows), ks.recall(),
                ks.precision(s.false_alarms()), ks.f1(s.false_alarms()));
    all.rows += ks.rows;
    all.alarms += ks.alarms;
    all.events += ks.events;
    all.detected += ks.detected;
    all.delays.insert(all.delays.end(), ks.delays.begin(), ks.delays.end());
  }
  std::printf("  %-18s %6d %8d %10.2f s %6lld %7.2f %9.2f %6.2f\n", "all attacks", all.events, all.detected,
              all.median_delay(), static_cast<long long>(all.rows), all.recall(), all.precision(s.false_alarms()),
              all.f1(s.false_alarms()));
  auto pct = [](std::int64_t a, std::int64_t n) { return n ? 100.0 * static_cast<double>(a) / static_cast<double>(n) : 0.0; };
  std::printf("  false alarms: clean rows %.1f %% (%lld of %lld), benign hard braking %.1f %% (%lld of %lld)\n",
              pct(s.clean_alarms, s.clean_rows), static_cast<long long>(s.clean_alarms),
              static_cast<long long>(s.clean_rows), pct(s.benign_alarms, s.benign_rows),
              static_cast<long long>(s.benign_alarms), static_cast<long long>(s.benign_rows));
  std::int64_t raw = 0;
  for (const KindScore& ks : s.kinds) raw += ks.exceedances;
  std::printf("  every exceedance an alarm: attack recall %.2f, false alarms clean %.1f %%, benign %.1f %%\n",
              all.rows ? static_cast<double>(raw) / static_cast<double>(all.rows) : 0.0,
              pct(s.clean_exceedances, s.clean_rows), pct(s.benign_exceedances, s.benign_rows));
  std::printf("  left out: %lld rows whose window still held an ended attack, %lld rows not scored\n",
              static_cast<long long>(s.aftermath_rows), static_cast<long long>(s.unscored_rows));
}

// How many rows each screening outcome took.
void print_screening(const ReplayRun& run) {
  std::map<RowOutcome, std::int64_t> counts;
  for (const CallResult& c : run.results)
    for (const RowDecision& d : c.rows) ++counts[d.outcome];
  std::printf("\nScreening before the model: ");
  for (const auto& [outcome, n] : counts) std::printf("%s %lld  ", row_outcome_name(outcome), static_cast<long long>(n));
  std::printf("\n  (stale and non-finite rows raise an alarm without a prediction; recovering rows wait for a clean window)\n");
}

// Latency percentiles and the agreement with the fp64 reference session.
void print_tiers(const ReplayRun& run, const ReportHeader& h) {
  const Summary& s = run.summary;
  std::printf("\nLatency (Session::run, one call): p50 %.0f us, p99 %.0f us over %zu calls; %d calls failed\n",
              s.percentile_latency(0.5), s.percentile_latency(0.99), s.latencies_us.size(), s.failed_calls);
  if (!h.reference) return;
  const TierComparison& t = run.vs_reference;
  std::printf("Versus the fp64 reference session: %lld rows, max |dy| %.2e (relative %.2e), alarm flips %lld "
              "(%lld within 1 %% of the threshold, %lld outside), outcome mismatches %lld\n",
              static_cast<long long>(t.rows), t.max_abs_diff, t.max_rel_diff,
              static_cast<long long>(t.flips_inside_band + t.flips_outside_band),
              static_cast<long long>(t.flips_inside_band), static_cast<long long>(t.flips_outside_band),
              static_cast<long long>(t.outcome_mismatches));
}

// Stats::jit and the event log counted by kind.
void print_runtime(const ReplayRun& run, bool jit) {
  const canary::JitStats& j = run.stats.jit;
  std::printf("\nRuntime (%s%s): %llu calls, %llu failed; ", jit ? "JIT on, " : "JIT off", jit ? run.jit_isa.c_str() : "",
              static_cast<unsigned long long>(run.stats.calls), static_cast<unsigned long long>(run.stats.failed_calls));
  std::printf("compiled entries %llu, guard failures %llu, deopts %llu, traces %llu, compiles %llu (%llu failed), "
              "retraces %llu, variants %llu, %llu code bytes, %.1f ms compiling\n",
              static_cast<unsigned long long>(j.compiled_entries), static_cast<unsigned long long>(j.guard_failures),
              static_cast<unsigned long long>(j.deopts), static_cast<unsigned long long>(j.traces_recorded),
              static_cast<unsigned long long>(j.compiles), static_cast<unsigned long long>(j.compile_failures),
              static_cast<unsigned long long>(j.retraces), static_cast<unsigned long long>(j.variants_installed),
              static_cast<unsigned long long>(j.code_bytes), j.compile_ms);
  std::map<std::string, int> kinds;
  for (const canary::Event& e : run.events) ++kinds[std::string(canary::event_kind_name(e.kind))];
  std::printf("  events:");
  for (const auto& [name, n] : kinds) std::printf(" %s %d", name.c_str(), n);
  std::printf("%s\n", kinds.empty() ? " none" : "");
}

// The session call an event belongs to; background work joins the call before it.
std::vector<std::uint64_t> event_calls(const std::vector<canary::Event>& events) {
  std::vector<std::uint64_t> calls;
  std::uint64_t last = 0;
  for (const canary::Event& e : events) calls.push_back(last = e.call ? e.call : last);
  return calls;
}

// The outcome of a shape event's calls and the JIT's events up to the next shape event.
void print_outcome(const ReplayRun& run, const ShapeEvent& e, int next_call, const std::vector<std::uint64_t>& calls) {
  if (e.first_call >= static_cast<int>(run.results.size())) return;
  const CallResult& c = run.results[static_cast<std::size_t>(e.first_call)];
  if (c.failed) {
    int failed = 0;
    for (int i = e.first_call; i < next_call && i < static_cast<int>(run.results.size()); ++i)
      failed += run.results[static_cast<std::size_t>(i)].failed;
    std::printf("    -> typed error for %d call(s), stream went on: %s\n", failed, c.error.c_str());
  } else {
    std::printf("    -> ran %s: [%lld, %lld, %lld] in %.0f us\n", c.compiled ? "compiled" : "interpreted",
                static_cast<long long>(c.model_rows), static_cast<long long>(c.window),
                static_cast<long long>(c.features), c.latency_us);
  }
  const std::uint64_t from = static_cast<std::uint64_t>(c.session_call);
  const std::uint64_t to = next_call < static_cast<int>(run.results.size())
                               ? static_cast<std::uint64_t>(run.results[static_cast<std::size_t>(next_call)].session_call)
                               : ~std::uint64_t{0};
  int shown = 0, hidden = 0;
  for (std::size_t i = 0; i < run.events.size(); ++i) {
    if (calls[i] < from || calls[i] >= to || from == 0) continue;
    if (shown < 8) std::printf("    jit: %s\n", run.events[i].message.c_str()), ++shown;
    else ++hidden;
  }
  if (hidden) std::printf("    jit: ... %d more events before the next shape event\n", hidden);
  if (shown == 0 && c.compiled) std::printf("    jit: no events: the installed variant's guards accept the new shape\n");
}

}  // namespace

// All sections in order.
void print_report(const ReportHeader& h, const ReplayRun& run, const VehicleStream& stream) {
  std::printf("canary-vehicle: seed %llu, %.0f s scene, %zu of %d calls, JIT %s\n",
              static_cast<unsigned long long>(h.seed), h.seconds, run.results.size(), stream.calls(), h.jit ? "on" : "off");
  for (const auto& in : run.inputs) std::printf("model  input  %s\n", in.to_string().c_str());
  for (const auto& out : run.outputs) std::printf("model  output %s\n", out.to_string().c_str());
  std::printf("alarm: score above %.3f (the %.0fth percentile of %d clean validation scores) on %d consecutive "
              "samples of a vehicle, or once above %.0fx that\n", run.card.threshold, 100.0 * run.card.threshold_quantile,
              run.card.validation_windows, h.rule.persistence, h.rule.strong_factor);
  print_detection(run.summary);
  print_screening(run);
  print_tiers(run, h);
  print_runtime(run, h.jit);
  std::printf("\nShape events\n");
  const auto calls = event_calls(run.events);
  const auto& script = stream.script();
  for (std::size_t i = 0; i < script.size(); ++i) {
    if (script[i].first_call >= static_cast<int>(run.results.size())) break;
    std::printf("  %s\n", script[i].to_string().c_str());
    if (i + 1 < script.size() && script[i + 1].first_call == script[i].first_call) continue;  // same call: one outcome
    const int next = i + 1 < script.size() ? script[i + 1].first_call : static_cast<int>(run.results.size());
    print_outcome(run, script[i], next, calls);
  }
}

}  // namespace vehicle
