// Events: what the JIT did and why, in order — traces recorded, compiles and
// their failures, guards that failed, deopts, retraces, variants installed.
// Sessions append to their model's event log; the CLI's explain verb and
// CANARY_LOG print them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "canary/cost.h"

namespace canary {

enum class EventKind : std::uint8_t {
  Hot,            // an anchor reached the hot threshold
  TraceRecorded,  // one execution of the anchor's region was recorded
  Compiled,       // a variant was compiled and installed
  CompileFailed,  // code generation failed; the region stays interpreted
  GuardFailed,    // a canary failed on entry: the interpreter ran the region
  Deopt,          // compiled code left through a side exit mid-trace
  ValueCanary,    // a kernel saw NaN/Inf appear or a value leave its recorded range
  Retrace,        // a retrace was queued (with the policy's decision)
  Evicted,        // a variant was removed (limit reached or demoted)
  Penalty,        // an anchor waits before its next compile
  Profile,        // the learned shape profile was loaded, saved or rejected (JitOptions::profile_path)
  Decision,       // the cost model started a trial of candidates, or chose one (with its table)
  Fallback,       // a JIT facility was unavailable and a slower path served (the compile
                  // thread did not start: the trace compiled on the calling thread)
};

std::string_view event_kind_name(EventKind kind);

struct Event {
  EventKind kind = EventKind::Hot;
  std::uint64_t sequence = 0;     // order in the model's log
  double time_us = 0.0;           // microseconds since the model was loaded
  std::uint32_t thread = 0;       // 0: a session's thread; 1: the background compile thread
  std::uint64_t call = 0;         // the session call it happened in (1-based), 0 for background work
  std::string anchor;             // "entry" or the loop node's name
  std::uint32_t trace = 0;        // trace id (0: none)
  std::uint32_t pc = 0;           // bytecode pc where it happened (deopt: where the interpreter resumed)
  std::string guard;              // GuardFailed / Deopt: the guard, "x.dim1 == 128"
  std::string observed;           // what was seen instead, "saw 96"
  // Retrace: "x.dim1 made symbolic (seen 96..128, divisible by 16)"; Compiled: the variant.
  std::string decision;
  std::string message;            // everything above in one readable sentence
  double duration_ms = 0.0;       // Compiled / CompileFailed: compile time
  std::uint64_t code_bytes = 0;   // Compiled: machine code size
  // Decision: the full candidate table (null for "trial started" events).
  std::shared_ptr<const CostDecision> cost;
};

}  // namespace canary
