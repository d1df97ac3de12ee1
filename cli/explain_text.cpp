// The explain report: a timeline of events in words, the recompile chains, the counts.
#include "cli/explain_text.h"

#include <map>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "cli/event_words.h"

namespace canary::cli {

const char* const kCostModelOffNote =
    "the cost model was off: variants follow the JIT's ladder (exact fused -> symbolic fused -> unfused); "
    "--cost trials candidates against the fp64 reference and logs a table per choice";

namespace {

// "2 hot, 3 guard-failed, ..." in the order of EventKind.
std::string kind_counts(const std::vector<Event>& events) {
  std::map<EventKind, std::size_t> counts;
  for (const Event& e : events) ++counts[e.kind];
  std::string s;
  for (const auto& [kind, n] : counts) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", n, event_kind_name(kind));
  return s;
}

}  // namespace

void print_explain(std::ostream& os, const std::vector<Event>& events, const RunResult& run, bool cost_model_on) {
  const TierTimes t = tier_times(run.calls);
  fmt::print(os, "{} calls: {} interpreted only, {} ran compiled code; {} events\n", run.calls.size(),
             t.interpreter.calls, t.compiled.calls, events.size());
  for (const Event& e : events)
    fmt::print(os, "{:>10.3f} ms  {}: {}\n", e.time_us / 1000.0, event_place(e), describe_event(e));
  const std::vector<Recompile> recompiles = find_recompiles(events);
  fmt::print(os, "why it recompiled:{}\n", recompiles.empty() ? " it did not (no retrace was queued)" : "");
  for (const Recompile& r : recompiles) fmt::print(os, "  {}\n", r.text());
  if (!events.empty()) fmt::print(os, "event counts: {}\n", kind_counts(events));
  bool any_decision = false;
  for (const Event& e : events) {
    if (e.kind != EventKind::Decision || !e.cost) continue;
    if (!any_decision) fmt::print(os, "cost model decisions:\n");
    any_decision = true;
    fmt::print(os, "{}\n", e.cost->to_table());
  }
  if (!any_decision && !cost_model_on) fmt::print(os, "note: {}\n", kCostModelOffNote);
  if (!any_decision && cost_model_on) fmt::print(os, "note: the cost model made no decision during these calls\n");
}

}  // namespace canary::cli
