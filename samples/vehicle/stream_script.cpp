// The shape-event script: compares consecutive call layouts and names the
// scheduled cause of each change (group membership, window, feed rate,
// restart, message format).
#include "samples/vehicle/stream_script.h"

#include <algorithm>
#include <cstdio>

namespace vehicle {
namespace {

// "vehicles 5, 11" or "vehicle 7".
std::string vehicle_list(const std::vector<int>& ids) {
  std::string out = ids.size() == 1 ? "vehicle " : "vehicles ";
  for (std::size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  return out;
}

// Ids in `a` and not in `b` (both sorted).
std::vector<int> missing_from(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// True when a span covers the tick.
bool inside(const std::vector<ScheduledSpan>& spans, std::int64_t tick) {
  return std::any_of(spans.begin(), spans.end(), [&](const ScheduledSpan& s) { return s.start <= tick && tick < s.end; });
}

// Why the window changed between two calls.
std::string window_reason(const Scenario& s, const CallSpec& prev, const CallSpec& now, bool history_limited) {
  if (prev.step != now.step)
    return now.rate_hz() == kFastRateHz ? "a 25 Hz feed replaces the 10 Hz feed (the window still spans the same seconds)"
                                        : "the 10 Hz feed is back";
  if (history_limited)
    return now.tick >= s.restart ? "the roadside unit restarted: history refills one sample per call"
                                 : "the stream is starting: history fills one sample per call";
  if (inside(s.long_window, now.tick)) return "the operator lengthens the window to 3.5 s";
  if (inside(s.long_window, prev.tick)) return "the operator restores the 2 s window";
  return "the window was cut";
}

// True when the call's window is shorter than its nominal length because history is missing.
bool history_limited(const Scenario& s, const CallSpec& c) {
  const std::int64_t history_start = c.tick >= s.restart ? s.restart : 0;
  const std::int64_t first_grid = (history_start + c.step - 1) / c.step * c.step;
  return c.window == (c.tick - first_grid) / c.step;
}

// Appends a one-call entry.
void add_event(std::vector<ShapeEvent>& script, int call, const CallSpec& now, char dim, std::int64_t before,
               std::int64_t after, std::string reason) {
  script.push_back({call, call, tick_seconds(now.tick), dim, before, after, after, std::move(reason)});
}

// Appends the entries for the change from call i-1 to call i.
void compare_calls(const Scenario& s, const std::vector<CallSpec>& specs, int i, std::vector<ShapeEvent>& script) {
  const CallSpec& prev = specs[static_cast<std::size_t>(i - 1)];
  const CallSpec& now = specs[static_cast<std::size_t>(i)];
  if (prev.vehicles != now.vehicles) {
    const auto joined = missing_from(now.vehicles, prev.vehicles), left = missing_from(prev.vehicles, now.vehicles);
    std::string why;
    if (!left.empty()) why = vehicle_list(left) + " left the group";
    if (!joined.empty()) why += (why.empty() ? "" : "; ") + vehicle_list(joined) + " joined (windows now full)";
    add_event(script, i, now, 'N', static_cast<std::int64_t>(prev.vehicles.size()),
              static_cast<std::int64_t>(now.vehicles.size()), why);
  }
  if (prev.window != now.window) {
    const bool limited = history_limited(s, now);
    ShapeEvent* last = script.empty() ? nullptr : &script.back();
    if (limited && prev.step == now.step && now.window == prev.window + 1 && last && last->dim == 'W' &&
        last->last_call == i - 1) {
      last->last_call = i;
      last->final_value = now.window;
    } else {
      std::string why = window_reason(s, prev, now, limited);
      if (now.tick - prev.tick > prev.step)
        why += "; no calls for " + std::to_string(tick_seconds(now.tick - prev.tick)).substr(0, 4) + " s";
      add_event(script, i, now, 'W', prev.window, now.window, why);
    }
  }
  if (prev.features != now.features)
    add_event(script, i, now, 'F', prev.features, now.features,
              now.features > kFeatures ? "message format v2 adds a heading field" : "message format v1 is back");
}

}  // namespace

// "call 141 (14.1 s): N 16 -> 18: vehicles 5, 11 joined".
std::string ShapeEvent::to_string() const {
  char head[128];
  if (first_call == last_call)
    std::snprintf(head, sizeof head, "call %d (%.1f s): %c %lld -> %lld", first_call, seconds, dim,
                  static_cast<long long>(before), static_cast<long long>(after));
  else
    std::snprintf(head, sizeof head, "calls %d-%d (%.1f s): %c %lld -> %lld..%lld", first_call, last_call, seconds,
                  dim, static_cast<long long>(before), static_cast<long long>(after),
                  static_cast<long long>(final_value));
  return std::string(head) + ": " + reason;
}

// Walks the calls in order, one comparison per consecutive pair.
std::vector<ShapeEvent> build_shape_script(const Scenario& s, const std::vector<CallSpec>& specs) {
  std::vector<ShapeEvent> script;
  for (int i = 1; i < static_cast<int>(specs.size()); ++i) compare_calls(s, specs, i, script);
  return script;
}

}  // namespace vehicle
