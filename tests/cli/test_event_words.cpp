// Events in words and recompile chains, from hand-built events.
#include <catch2/catch.hpp>

#include "cli/event_words.h"

using canary::Event;
using canary::EventKind;
using namespace canary::cli;

namespace {

Event event(EventKind kind, std::uint64_t call, std::uint32_t trace) {
  Event e;
  e.kind = kind;
  e.call = call;
  e.anchor = "entry";
  e.trace = trace;
  return e;
}

}  // namespace

TEST_CASE("explain: events are sentences built from their fields", "[unit][cli-explain]") {
  Event g = event(EventKind::GuardFailed, 17, 1);
  g.guard = "x.dim1 == 128";
  g.observed = "saw 96";
  g.pc = 4;
  CHECK(event_place(g) == "call 17");
  CHECK(describe_event(g) == "guard x.dim1 == 128 failed (saw 96) -> the interpreter ran the region (trace 1, from pc 4)");
  Event c = event(EventKind::Compiled, 0, 2);
  c.thread = 1;
  c.duration_ms = 0.4;
  c.code_bytes = 900;
  c.decision = "symbolic fused, exact math";
  CHECK(event_place(c) == "compile thread");
  CHECK(describe_event(c) ==
        "trace 2 compiled on the compile thread in 0.400 ms, 900 bytes of code; variant: symbolic fused, exact math");
  Event h = event(EventKind::Hot, 8, 0);
  h.message = "anchor 'entry' is hot";
  CHECK(describe_event(h) == "anchor 'entry' is hot");
}

TEST_CASE("explain: a retrace is paired with the failure before it and the compile after it", "[unit][cli-explain]") {
  Event g = event(EventKind::GuardFailed, 18, 1);
  g.guard = "x.dim1 == 128";
  g.observed = "saw 96";
  Event r = event(EventKind::Retrace, 18, 0);
  r.decision = "x.dim1 made symbolic (seen 96..128, divisible by 16)";
  Event other = event(EventKind::Compiled, 18, 7);
  other.anchor = "rnn";  // another anchor's compile does not close the chain
  Event c = event(EventKind::Compiled, 19, 2);
  c.duration_ms = 0.25;
  c.decision = "symbolic fused, exact math";
  Event r2 = event(EventKind::Retrace, 30, 0);
  r2.decision = "sibling trace: x changed rank or dtype";
  const std::vector<Recompile> chains = find_recompiles({g, r, other, c, r2});
  REQUIRE(chains.size() == 2);
  CHECK(chains[0].trace == 2);
  CHECK(chains[0].compile_ms == 0.25);
  CHECK(chains[0].text() ==
        "call 18: guard x.dim1 == 128 failed (saw 96) -> x.dim1 made symbolic (seen 96..128, divisible by 16) -> trace 2 "
        "recompiled in 0.250 ms "
        "(symbolic fused, exact math)");
  CHECK(chains[1].trace == 0);
  CHECK(chains[1].outcome == "not compiled by the end of the run");
}
