// Chrome trace-event JSON: call spans, compile spans on the compile thread, instant events.
#include "cli/chrome_trace.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "canary/error.h"

#include "cli/event_words.h"

namespace canary::cli {

using nlohmann::json;

namespace {

constexpr int kPid = 1;

// A metadata event naming a thread.
json thread_name(int tid, const char* name) {
  return {{"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"name", "thread_name"}, {"args", {{"name", name}}}};
}

// One call as a complete event on the session thread.
json call_span(const CallRecord& c) {
  const char* tier = c.compiled ? "compiled" : "interpreter";
  return {{"ph", "X"},
          {"pid", kPid},
          {"tid", 0},
          {"name", "call " + std::to_string(c.call) + " (" + tier + ")"},
          {"cat", tier},
          {"ts", c.start_us},
          {"dur", c.duration_us},
          {"args", {{"origin", c.origin}, {"guard_failures", c.guard_failures}, {"deopts", c.deopts}}}};
}

// A compile (or failed compile): a span ending at the event's time.
json compile_span(const Event& e) {
  const double dur = e.duration_ms * 1000.0;
  return {{"ph", "X"},
          {"pid", kPid},
          {"tid", e.thread == 1 ? 1 : 0},
          {"name", (e.kind == EventKind::Compiled ? "compile trace " : "failed compile of trace ") + std::to_string(e.trace)},
          {"cat", "compile"},
          {"ts", std::max(0.0, e.time_us - dur)},
          {"dur", dur},
          {"args", {{"anchor", e.anchor}, {"variant", e.decision}, {"code_bytes", e.code_bytes},
                    {"call", e.call}, {"text", describe_event(e)}}}};
}

// Any other event as an instant on its thread.
json instant(const Event& e) {
  return {{"ph", "i"},
          {"s", "t"},
          {"pid", kPid},
          {"tid", e.thread == 1 ? 1 : 0},
          {"name", std::string(event_kind_name(e.kind)) + (e.guard.empty() ? "" : ": " + e.guard)},
          {"cat", std::string(event_kind_name(e.kind))},
          {"ts", e.time_us},
          {"args", {{"anchor", e.anchor}, {"call", e.call}, {"trace", e.trace}, {"text", describe_event(e)}}}};
}

}  // namespace

std::string chrome_trace_json(const std::string& model_path, const std::vector<CallRecord>& calls,
                              const std::vector<Event>& events) {
  json list = json::array();
  list.push_back({{"ph", "M"}, {"pid", kPid}, {"name", "process_name"}, {"args", {{"name", "canary " + model_path}}}});
  list.push_back(thread_name(0, "session"));
  list.push_back(thread_name(1, "compile queue"));
  for (const CallRecord& c : calls) list.push_back(call_span(c));
  for (const Event& e : events) {
    const bool span = e.kind == EventKind::Compiled || e.kind == EventKind::CompileFailed;
    list.push_back(span ? compile_span(e) : instant(e));
  }
  const json doc = {{"traceEvents", list}, {"displayTimeUnit", "ms"}};
  return doc.dump() + "\n";
}

void write_chrome_trace(const std::string& path, const std::string& model_path, const std::vector<CallRecord>& calls,
                        const std::vector<Event>& events) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) throw Error(ErrorKind::Resource, "cannot write '" + path + "': " + std::strerror(errno));
  out << chrome_trace_json(model_path, calls, events);
  out.close();
  if (!out) throw Error(ErrorKind::Resource, "cannot write '" + path + "': write failed");
}

}  // namespace canary::cli
