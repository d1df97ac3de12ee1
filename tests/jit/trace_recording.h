// Records the trace of one interpreter run of a graph in the text format:
// shared by the JIT tests that plan, estimate or compile recorded traces.
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <vector>

#include "graph/text_format.h"
#include "jit/trace_recorder.h"
#include "vm/compiler.h"
#include "vm/interpreter.h"

namespace canary::jit::test {

// Hooks that record the entry anchor's region on the first call.
class RecordOnce : public vm::JitHooks {
 public:
  std::uint64_t hot_threshold() const override { return 1; }
  void on_hot(const vm::Program&, vm::AnchorId, const vm::ShapeProfile&) override {}
  vm::EntryResult enter(const vm::Program& program, vm::AnchorId anchor, const vm::FrameView&) override {
    if (recorder || anchor.index != 0) return {};
    recorder = std::make_unique<TraceRecorder>(program, anchor, vm::kNoPc, [this](std::optional<Trace> t) { trace = t; });
    vm::EntryResult r;
    r.action = vm::EntryAction::Record;
    r.observer = recorder.get();
    return r;
  }
  void on_side_exit(const vm::Program&, vm::AnchorId, vm::ExitId, vm::Pc, const vm::FrameView&) override {}
  std::unique_ptr<TraceRecorder> recorder;
  std::optional<Trace> trace;
};

struct Recorded {
  std::shared_ptr<const vm::Program> program;
  Trace trace;
};

// Compiles the graph, runs it once on `inputs` and returns the recorded trace.
inline Recorded record(const char* text, std::vector<Tensor> inputs) {
  auto program = vm::compile(*graph::parse_graph(text));
  vm::Interpreter interp(program);
  RecordOnce hooks;
  interp.set_hooks(&hooks);
  interp.run(inputs);
  REQUIRE(hooks.trace.has_value());
  return {program, *hooks.trace};
}

}  // namespace canary::jit::test
