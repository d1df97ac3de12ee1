// The explain report: a timeline of events in words, the recompile chains, the counts.
#include "cli/explain_text.h"

#include <map>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "cli/event_words.h"

namespace canary::cli {

const char* const kCostModelNote =
    "variants follow the JIT's ladder (exact fused -> symbolic fused -> unfused); tables of candidates "
    "with their cost terms and weights come with the cost model";

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

void print_explain(std::ostream& os, const std::vector<Event>& events, const RunResult& run) {
  const TierTimes t = tier_times(run.calls);
  fmt::print(os, "{} calls: {} interpreted only, {} ran compiled code; {} events\n", run.calls.size(),
             t.interpreter.calls, t.compiled.calls, events.size());
  for (const Event& e : events)
    fmt::print(os, "{:>10.3f} ms  {}: {}\n", e.time_us / 1000.0, event_place(e), describe_event(e));
  const std::vector<Recompile> recompiles = find_recompiles(events);
  fmt::print(os, "why it recompiled:{}\n", recompiles.empty() ? " it did not (no retrace was queued)" : "");
  for (const Recompile& r : recompiles) fmt::print(os, "  {}\n", r.text());
  if (!events.empty()) fmt::print(os, "event counts: {}\n", kind_counts(events));
  fmt::print(os, "note: {}\n", kCostModelNote);
}

}  // namespace canary::cli
