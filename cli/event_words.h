// JIT events in words, and the recompile chains they form (cause -> decision -> outcome).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "canary/events.h"

namespace canary::cli {

// Where an event happened: "call 17", "compile thread" or "model".
std::string event_place(const Event& e);

// One event as a sentence built from its fields:
// "guard x.dim0 == 8 failed (saw 16) -> the interpreter ran the region (trace 1, from pc 0)".
std::string describe_event(const Event& e);

// A retrace and what came of it.
struct Recompile {
  std::uint64_t call = 0;     // the call whose failure queued it
  std::string anchor;
  std::string cause;          // "guard x.dim0 == 8 failed (saw 16)", "deopt at ..."
  std::string decision;       // Event::decision of the Retrace: "x.dim0 made symbolic (seen 8..16, divisible by 8)"
  std::string outcome;        // "trace 2 recompiled in 0.412 ms (symbolic fused, exact math)"
  std::uint32_t trace = 0;    // the new trace, 0 when none was compiled
  double compile_ms = 0.0;
  // "call 13: guard x.dim0 == 8 failed (saw 16) -> x.dim0 made symbolic (seen 8..16, divisible by 8)
  // -> trace 2 recompiled in ...".
  std::string text() const;
};

// Pairs every Retrace with the failure before it and the compile after it, per anchor.
std::vector<Recompile> find_recompiles(const std::vector<Event>& events);

}  // namespace canary::cli
