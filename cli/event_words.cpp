// Event sentences and recompile chains, built from the Event fields.
#include "cli/event_words.h"

#include <map>

#include <fmt/format.h>

namespace canary::cli {

std::string event_place(const Event& e) {
  if (e.call > 0) return "call " + std::to_string(e.call);
  return e.thread == 1 ? "compile thread" : "model";
}

namespace {

// "compiled on the compile thread" or "compiled on the calling thread".
std::string compile_thread(const Event& e) {
  return e.thread == 1 ? "on the compile thread" : "on the calling thread";
}

// What a failure looked like, for a recompile chain.
std::string cause_of(const Event& e) {
  if (e.kind == EventKind::GuardFailed) return fmt::format("guard {} failed ({})", e.guard, e.observed);
  return fmt::format("trace {} deoptimised at {}", e.trace, e.guard);
}

}  // namespace

std::string describe_event(const Event& e) {
  switch (e.kind) {
    case EventKind::GuardFailed:
      return fmt::format("guard {} failed ({}) -> the interpreter ran the region (trace {}, from pc {})", e.guard,
                         e.observed, e.trace, e.pc);
    case EventKind::Deopt:
      return fmt::format("trace {} left compiled code at {} -> deopt, the interpreter resumed", e.trace, e.guard);
    case EventKind::Retrace:
      return fmt::format("retrace of '{}' queued -> {}", e.anchor, e.decision);
    case EventKind::Compiled:
      return fmt::format("trace {} compiled {} in {:.3f} ms, {} bytes of code; variant: {}", e.trace,
                         compile_thread(e), e.duration_ms, e.code_bytes, e.decision);
    case EventKind::Hot:
    case EventKind::TraceRecorded:
    case EventKind::CompileFailed:
    case EventKind::ValueCanary:
    case EventKind::Evicted:
    case EventKind::Penalty:
    case EventKind::Profile:
    case EventKind::Decision:
    case EventKind::Fallback:
      break;
  }
  return e.message;
}

std::string Recompile::text() const {
  return fmt::format("call {}: {} -> {} -> {}", call, cause.empty() ? "(no failure recorded)" : cause, decision,
                     outcome);
}

std::vector<Recompile> find_recompiles(const std::vector<Event>& events) {
  std::vector<Recompile> out;
  std::map<std::string, std::string> last_cause;    // by anchor
  std::map<std::string, std::size_t> pending;       // by anchor: index into out
  for (const Event& e : events) {
    switch (e.kind) {
      case EventKind::GuardFailed:
      case EventKind::Deopt: last_cause[e.anchor] = cause_of(e); break;
      case EventKind::Retrace:
        pending[e.anchor] = out.size();
        out.push_back({e.call, e.anchor, last_cause[e.anchor], e.decision, "not compiled by the end of the run", 0, 0});
        break;
      case EventKind::Compiled:
      case EventKind::CompileFailed: {
        auto it = pending.find(e.anchor);
        if (it == pending.end()) break;
        Recompile& r = out[it->second];
        if (e.kind == EventKind::Compiled) {
          r.trace = e.trace;
          r.compile_ms = e.duration_ms;
          r.outcome = fmt::format("trace {} recompiled in {:.3f} ms ({})", e.trace, e.duration_ms, e.decision);
        } else {
          r.outcome = "recompile failed: " + e.message;
        }
        pending.erase(it);
        break;
      }
      default: break;
    }
  }
  return out;
}

}  // namespace canary::cli
