// JitOptions::max_compile_queue: a trace recorded while the background queue
// is full is dropped with a fallback event (the region stays interpreted and
// is recorded again later); the queued ones still compile.
#include <catch2/catch.hpp>

#include "trace_recording.h"
#include "jit/engine.h"

using namespace canary;
using namespace canary::jit;
using canary::jit::test::record;

namespace {

const char* kChain = R"(canary v1
graph main(x: f32[N, 4]) -> (y) {
  const half: f32[] = [0.5]
  s = Mul(x, half)
  y = Tanh(s)
}
)";

std::size_t count_events(const Engine& engine, EventKind kind, const std::string& words) {
  std::size_t n = 0;
  for (const Event& e : engine.events().since(0))
    if (e.kind == kind && e.message.find(words) != std::string::npos) ++n;
  return n;
}

}  // namespace

TEST_CASE("compile queue: a trace that finds the queue full is dropped, the queued one compiles",
          "[unit][jit][limits]") {
  const auto recorded = record(kChain, {Tensor::empty(DType::F32, {3, 4})});
  JitOptions options;
  options.max_compile_queue = 1;
  Engine engine(recorded.program, options);
  if (!engine.active()) {
    WARN("skipped: this CPU cannot run the x86 backend (no AVX2+FMA)");
    return;
  }
  const vm::AnchorId entry{0};
  engine.hold_compiles(true);  // the queue cannot drain while held
  engine.submit(entry, recorded.trace, 1);
  engine.submit(entry, recorded.trace, 2);
  JitStats stats;
  engine.fill_stats(stats);
  CHECK(stats.compiles_dropped == 1);
  CHECK(stats.compiles == 0);
  CHECK(count_events(engine, EventKind::Fallback, "compile queue full (JitOptions::max_compile_queue = 1)") == 1);
  CHECK(count_events(engine, EventKind::Fallback, "stays interpreted and is recorded again") == 1);

  engine.hold_compiles(false);
  engine.wait_idle();
  engine.fill_stats(stats);
  CHECK(stats.compiles == 1);
  CHECK(stats.variants_installed == 1);
  CHECK(stats.compile_failures == 0);
}

TEST_CASE("compile queue: synchronous compiles never queue, so nothing is dropped", "[unit][jit][limits]") {
  const auto recorded = record(kChain, {Tensor::empty(DType::F32, {3, 4})});
  JitOptions options;
  options.max_compile_queue = 1;
  options.synchronous = true;
  Engine engine(recorded.program, options);
  if (!engine.active()) {
    WARN("skipped: this CPU cannot run the x86 backend (no AVX2+FMA)");
    return;
  }
  engine.hold_compiles(true);  // no worker: holding changes nothing
  for (std::uint64_t call = 1; call <= 3; ++call) engine.submit(vm::AnchorId{0}, recorded.trace, call);
  JitStats stats;
  engine.fill_stats(stats);
  CHECK(stats.compiles_dropped == 0);
  CHECK(stats.compiles == 3);
}
