// Chrome trace-event files (chrome://tracing, Perfetto) of a replay and the JIT's events.
//
// Thread 0 ("session"): one complete event ("ph": "X") per call, category
// "interpreter" or "compiled" (compiled code ran during it), measured by the
// CLI around Session::run; guard failures, deopts, retraces and the other
// session-side events as instant events ("ph": "i"). Thread 1 ("compile
// queue"): one complete event per compile, from Event::time_us back by
// Event::duration_ms. Times are microseconds since the model loaded.
#pragma once

#include <string>
#include <vector>

#include "canary/events.h"
#include "cli/replay.h"

namespace canary::cli {

std::string chrome_trace_json(const std::string& model_path, const std::vector<CallRecord>& calls,
                              const std::vector<Event>& events);

// Writes chrome_trace_json to `path`; Error(Resource) when it cannot.
void write_chrome_trace(const std::string& path, const std::string& model_path, const std::vector<CallRecord>& calls,
                        const std::vector<Event>& events);

}  // namespace canary::cli
