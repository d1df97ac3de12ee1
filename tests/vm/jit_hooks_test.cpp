// VM tests of the tier-up interface with a fake JIT: hot notification,
// entering compiled code at the graph entry, resuming after a side exit,
// recording, and loop-header anchors.
#include <catch2/catch.hpp>

#include "vm_graph_builders.h"

using namespace vmtest;
namespace vm = canary::vm;

namespace {

// y = relu(x + c); z = y * c.
std::shared_ptr<const vm::Program> small_program() {
  Graph g;
  ValueId x = g.add_input("x", type_of(DType::F32, {4}));
  ValueId c = g.add_constant("c", f32({1, -2, 3, -4}, {4}));
  ValueId y = op(g, OpKind::Relu, "y", {op(g, OpKind::Add, "s", {x, c})});
  g.add_output(op(g, OpKind::Mul, "z", {y, c}));
  canary::graph::infer_shapes(g);
  return vm::compile(g);
}

// A scriptable fake JIT.
struct FakeJit : vm::JitHooks {
  enum class Mode { Decline, WholeGraph, SideExit } mode = Mode::Decline;
  std::uint64_t threshold = 1000;
  std::uint64_t time_ns = 0;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> hot;  // anchor, count when notified
  std::vector<std::uint32_t> exits;
  std::vector<vm::Pc> exit_pcs;
  std::uint64_t enters = 0;

  std::uint64_t hot_threshold() const override { return threshold; }
  std::uint64_t hot_time_ns() const override { return time_ns; }
  void on_hot(const vm::Program&, vm::AnchorId a, const vm::ShapeProfile& p) override {
    hot.emplace_back(a.index, p.anchor_count(a));
  }
  vm::EntryResult enter(const vm::Program& p, vm::AnchorId a, const vm::FrameView& f) override {
    ++enters;
    if (mode == Mode::Decline || a.index != 0) return {};
    const Tensor& x = f.registers[p.input_registers()[0].index];
    const float c[4] = {1, -2, 3, -4};
    if (mode == Mode::WholeGraph) {
      // Computes z itself and resumes at Return.
      Tensor z = Tensor::empty(DType::F32, {4});
      for (int i = 0; i < 4; ++i) z.data<float>()[i] = std::max(x.data<float>()[i] + c[i], 0.0f) * c[i] + 1000.0f;
      f.registers[p.output_registers()[0].index] = z;
      return {vm::EntryAction::Resumed, static_cast<vm::Pc>(p.instruction_count() - 1), {}, nullptr};
    }
    // Computes y, then side-exits at the Mul, which the interpreter runs.
    const vm::Pc mul = pc_of(p, "z");
    const vm::RegId y_reg = p.inputs_of(p.at(mul))[0];
    Tensor y = Tensor::empty(DType::F32, {4});
    for (int i = 0; i < 4; ++i) y.data<float>()[i] = std::max(x.data<float>()[i] + c[i], 0.0f);
    f.registers[y_reg.index] = y;
    return {vm::EntryAction::Resumed, mul, vm::ExitId{7}, nullptr};
  }
  void on_side_exit(const vm::Program&, vm::AnchorId, vm::ExitId e, vm::Pc pc, const vm::FrameView&) override {
    exits.push_back(e.index);
    exit_pcs.push_back(pc);
  }
};

std::vector<Tensor> input() { return {f32({1, 1, 1, 1}, {4})}; }
// relu(x + c) * c for x = 1: [2, 0, 12, 0].
const std::vector<double> kExpected{2, 0, 12, 0};

}  // namespace

TEST_CASE("on_hot fires once when the entry counter reaches the threshold", "[unit][vm]") {
  FakeJit jit;
  jit.threshold = 3;
  vm::Interpreter interp(small_program());
  interp.set_hooks(&jit);
  for (int i = 0; i < 5; ++i) CHECK(values(interp.run(input())[0]) == kExpected);
  REQUIRE(jit.hot.size() == 1);
  CHECK(jit.hot[0] == std::pair<std::uint32_t, std::uint64_t>{0, 3});
  CHECK(jit.enters == 5);
}

TEST_CASE("interpreted time makes an anchor hot before its visit count, the first visit uncharged",
          "[unit][vm]") {
  FakeJit jit;
  jit.threshold = 1000;
  jit.time_ns = 1;  // any interpreted region reaches it
  vm::Interpreter interp(small_program());
  interp.set_hooks(&jit);
  for (int i = 0; i < 5; ++i) CHECK(values(interp.run(input())[0]) == kExpected);
  // Visit 1 is not charged, visit 2's region is: hot at visit 3, once.
  REQUIRE(jit.hot.size() == 1);
  CHECK(jit.hot[0] == std::pair<std::uint32_t, std::uint64_t>{0, 3});

  // Compiled code's time is never charged: a JIT that always enters never sees on_hot by time.
  FakeJit entering;
  entering.mode = FakeJit::Mode::WholeGraph;
  entering.time_ns = 1;
  vm::Interpreter compiled(small_program());
  compiled.set_hooks(&entering);
  for (int i = 0; i < 5; ++i) compiled.run(input());
  CHECK(entering.hot.empty());
}

TEST_CASE("a time budget of 0 leaves tier-up to the visit count", "[unit][vm]") {
  FakeJit jit;
  jit.threshold = 4;
  vm::Interpreter interp(small_program());
  interp.set_hooks(&jit);
  for (int i = 0; i < 6; ++i) interp.run(input());
  REQUIRE(jit.hot.size() == 1);
  CHECK(jit.hot[0].second == 4);
}

TEST_CASE("compiled code entered at graph entry produces the outputs", "[unit][vm]") {
  FakeJit jit;
  jit.mode = FakeJit::Mode::WholeGraph;
  vm::Interpreter interp(small_program());
  interp.set_hooks(&jit);
  auto out = interp.run(input());
  CHECK(values(out[0]) == std::vector<double>{1002, 1000, 1012, 1000});
  CHECK(interp.instructions_executed() == 2);  // entry, return
  CHECK(jit.exits.empty());
  // Without hooks the interpreter computes the same function itself.
  interp.set_hooks(nullptr);
  CHECK(values(interp.run(input())[0]) == kExpected);
}

TEST_CASE("a side exit resumes the interpreter mid-program with the exit's registers", "[unit][vm]") {
  FakeJit jit;
  jit.mode = FakeJit::Mode::SideExit;
  auto p = small_program();
  vm::Interpreter interp(p);
  interp.set_hooks(&jit);
  auto out = interp.run(input());
  CHECK(values(out[0]) == kExpected);
  REQUIRE(jit.exits.size() == 1);
  CHECK(jit.exits[0] == 7);
  CHECK(jit.exit_pcs[0] == pc_of(*p, "z"));
  CHECK(interp.instructions_executed() == 3);  // entry, mul, return
  // The exit's pc has y live (the register the fake wrote).
  auto live = p->live_at(pc_of(*p, "z"));
  CHECK(std::find(live.begin(), live.end(), p->inputs_of(p->at(pc_of(*p, "z")))[0]) != live.end());
}

TEST_CASE("a recording observer follows one execution until it stops", "[unit][vm]") {
  struct Recorder : vm::JitHooks, vm::InstructionObserver {
    std::vector<vm::Pc> pcs;
    int runs_ended = 0;
    bool recorded = false;
    void on_hot(const vm::Program&, vm::AnchorId, const vm::ShapeProfile&) override {}
    vm::EntryResult enter(const vm::Program&, vm::AnchorId, const vm::FrameView&) override {
      if (recorded) return {};
      recorded = true;
      return {vm::EntryAction::Record, vm::kNoPc, {}, this};
    }
    void on_side_exit(const vm::Program&, vm::AnchorId, vm::ExitId, vm::Pc, const vm::FrameView&) override {}
    bool on_executed(vm::Pc pc, vm::Pc next, const vm::FrameView&) override {
      CHECK(next == pc + 1);
      pcs.push_back(pc);
      return true;
    }
    void on_run_end(bool ok) override {
      CHECK(ok);
      ++runs_ended;
    }
  } rec;
  auto p = small_program();
  vm::Interpreter interp(p);
  interp.set_hooks(&rec);
  interp.run(input());
  interp.run(input());
  std::vector<vm::Pc> expected;
  for (vm::Pc pc = 0; pc + 1 < p->instruction_count(); ++pc) expected.push_back(pc);
  CHECK(rec.pcs == expected);
  CHECK(rec.runs_ended == 1);
}

TEST_CASE("loop headers are anchors offered to the JIT once per iteration", "[unit][vm]") {
  Graph g;
  ValueId m = g.add_input("M", type_of(DType::I64, {}));
  ValueId zero = g.add_constant("zero", i64(0));
  auto body = subgraph(g, "body");
  ValueId i = body->add_input("i", type_of(DType::I64, {}));
  ValueId c = body->add_input("c", type_of(DType::Bool, {}));
  ValueId s = body->add_input("s", type_of(DType::I64, {}));
  body->add_output(c);
  body->add_output(op(*body, OpKind::Add, "s2", {s, i}));
  auto n = g.add_node(OpKind::Loop, "loop", {m, ValueId::none(), zero}, {"sum"}, {{"body", body}});
  g.add_output(g.node(n).outputs[0]);
  canary::graph::infer_shapes(g);
  FakeJit jit;
  jit.threshold = 4;
  vm::Interpreter interp(vm::compile(g));
  interp.set_hooks(&jit);
  CHECK(values(interp.run(std::vector<Tensor>{i64(6)})[0]) == std::vector<double>{15});
  CHECK(jit.enters == 1 + 6);
  REQUIRE(jit.hot.size() == 1);
  CHECK(jit.hot[0].first == 1);
  CHECK(interp.program().anchors().size() == 2);
  CHECK(interp.program().anchors()[1].kind == vm::AnchorKind::LoopHeader);
}
