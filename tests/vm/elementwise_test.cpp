// VM tests on straight-line graphs: results, register and buffer reuse,
// fp64 promotion, shape histograms and the entry hot counter.
#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <set>

#include "vm_graph_builders.h"

using namespace vmtest;
namespace vm = canary::vm;

namespace {

// y1 = x + c; y2 = y1 * c; y3 = relu(y2 - 10); y4 = y3 + c; out = -y4.
Graph chain_graph() {
  Graph g;
  Dim n = g.symbols().declare("N");
  ValueId x = g.add_input("x", type_of(DType::F32, {n, 4}));
  ValueId c = g.add_constant("c", f32({1, 2, 3, 4}, {4}));
  ValueId ten = g.add_constant("ten", f32({10}, {}));
  ValueId y1 = op(g, OpKind::Add, "y1", {x, c});
  ValueId y2 = op(g, OpKind::Mul, "y2", {y1, c});
  ValueId d = op(g, OpKind::Sub, "d", {y2, ten});
  ValueId y3 = op(g, OpKind::Relu, "y3", {d});
  ValueId y4 = op(g, OpKind::Add, "y4", {y3, c});
  g.add_output(op(g, OpKind::Neg, "out", {y4}));
  canary::graph::infer_shapes(g);
  return g;
}

// Hand-computed chain on one element with constant cv.
double chain_value(double x, double cv) {
  double y2 = (x + cv) * cv;
  double y3 = std::max(y2 - 10.0, 0.0);
  return -(y3 + cv);
}

}  // namespace

TEST_CASE("elementwise chain matches hand-computed values", "[unit][vm]") {
  Graph g = chain_graph();
  vm::Interpreter interp(vm::compile(g));
  std::vector<Tensor> in{f32({0, 1, 2, 3, -5, 5, 0.5f, 10}, {2, 4})};
  auto out = interp.run(in);
  REQUIRE(out.size() == 1);
  CHECK(out[0].shape() == canary::Shape{2, 4});
  const std::vector<double> cs{1, 2, 3, 4, 1, 2, 3, 4};
  const std::vector<double> xs{0, 1, 2, 3, -5, 5, 0.5, 10};
  auto got = values(out[0]);
  for (std::size_t i = 0; i < xs.size(); ++i) CHECK(got[i] == Approx(chain_value(xs[i], cs[i])));
}

TEST_CASE("register allocation shares registers between values that are not live together", "[unit][vm]") {
  Graph g = chain_graph();
  auto p = vm::compile(g);
  CHECK(p->register_count() < p->value_count());
  const std::string listing = p->disassemble();
  std::map<std::string, std::set<std::string>> names_by_reg;
  std::regex operand(R"((r\d+)\(([^)]+)\))");
  for (auto it = std::sregex_iterator(listing.begin(), listing.end(), operand); it != std::sregex_iterator(); ++it)
    names_by_reg[(*it)[1]].insert((*it)[2]);
  bool shared = false;
  for (const auto& [reg, names] : names_by_reg) shared = shared || names.size() >= 2;
  CHECK(shared);
  // Inputs, constants and outputs keep registers of their own.
  for (const auto& [reg, names] : names_by_reg)
    for (const char* pinned : {"x", "c", "ten", "out"})
      if (names.count(pinned)) CHECK(names.size() == 1);
}

TEST_CASE("outputs of two calls do not alias and intermediate buffers are reused", "[unit][vm]") {
  Graph g = chain_graph();
  auto p = vm::compile(g);

  struct PointerSpy : vm::JitHooks, vm::InstructionObserver {
    vm::Pc watch;
    vm::RegId reg;
    std::vector<const void*> seen;
    void on_hot(const vm::Program&, vm::AnchorId, const vm::ShapeProfile&) override {}
    vm::EntryResult enter(const vm::Program&, vm::AnchorId, const vm::FrameView&) override {
      return {vm::EntryAction::Record, vm::kNoPc, {}, this};
    }
    void on_side_exit(const vm::Program&, vm::AnchorId, vm::ExitId, vm::Pc, const vm::FrameView&) override {}
    bool on_executed(vm::Pc pc, vm::Pc, const vm::FrameView& f) override {
      if (pc == watch) seen.push_back(f.registers[reg.index].raw());
      return true;
    }
  } spy;
  spy.watch = pc_of(*p, "y2");
  REQUIRE(spy.watch != vm::kNoPc);
  spy.reg = p->outputs_of(p->at(spy.watch))[0];

  vm::Interpreter interp(p);
  interp.set_hooks(&spy);
  std::vector<Tensor> in1{f32({0, 1, 2, 3}, {1, 4})};
  std::vector<Tensor> in2{f32({4, 5, 6, 7}, {1, 4})};
  auto out1 = interp.run(in1);
  auto out2 = interp.run(in2);
  CHECK(out1[0].raw() != out2[0].raw());
  CHECK_FALSE(out1[0].shares_storage_with(out2[0]));
  // The first result is intact after the second call.
  CHECK(values(out1[0])[1] == Approx(chain_value(1, 2)));
  CHECK(values(out2[0])[1] == Approx(chain_value(5, 2)));
  REQUIRE(spy.seen.size() == 2);
  CHECK(spy.seen[0] == spy.seen[1]);
  // Inputs are never written.
  CHECK(values(in1[0]) == std::vector<double>{0, 1, 2, 3});
}

TEST_CASE("fp64 promotion gives f64 outputs that agree with f32", "[unit][vm]") {
  Graph g = chain_graph();
  std::vector<Tensor> in{f32({0.1f, 1.7f, 2.2f, 3.3f}, {1, 4})};
  vm::Interpreter narrow(vm::compile(g));
  vm::Interpreter wide(vm::compile(g, vm::CompileOptions{true}));
  CHECK(wide.program().promoted_to_f64());
  CHECK(wide.program().input_types()[0].dtype == DType::F32);
  auto a = narrow.run(in);
  auto b = wide.run(in);
  CHECK(a[0].dtype() == DType::F32);
  CHECK(b[0].dtype() == DType::F64);
  auto av = values(a[0]), bv = values(b[0]);
  for (std::size_t i = 0; i < av.size(); ++i) CHECK(bv[i] == Approx(av[i]).epsilon(1e-5));
  // The f64 result uses the f32 input value exactly: x = 0.1f.
  CHECK(bv[0] == Approx(chain_value(static_cast<double>(0.1f), 1.0)).epsilon(1e-12));
}

TEST_CASE("shape histogram records distinct shapes and the entry counter counts calls", "[unit][vm]") {
  Graph g = chain_graph();
  vm::Interpreter interp(vm::compile(g));
  for (std::int64_t rows : {2, 3, 2, 2}) {
    std::vector<float> v(static_cast<std::size_t>(rows * 4), 1.0f);
    std::vector<Tensor> in{f32(v, {rows, 4})};
    interp.run(in);
  }
  const auto& prof = interp.profile();
  const auto& h = prof.output_shapes(pc_of(interp.program(), "y1"));
  CHECK(h.entries().size() == 2);
  CHECK(h.count_of(std::vector<std::int64_t>{2, 4}) == 3);
  CHECK(h.count_of(std::vector<std::int64_t>{3, 4}) == 1);
  CHECK(h.overflow() == 0);
  CHECK(prof.input_shapes(0).count_of(std::vector<std::int64_t>{3, 4}) == 1);
  CHECK(prof.anchor_count(vm::AnchorId{0}) == 4);
  CHECK(prof.calls() == 4);
  CHECK(interp.instructions_executed() == 4 * interp.program().instruction_count());
}

TEST_CASE("shape histogram keeps a few shapes and counts the rest as overflow", "[unit][vm]") {
  vm::ShapeHistogram h;
  for (std::int64_t n = 1; n <= 6; ++n) h.record(std::vector<std::int64_t>{n});
  h.record(std::vector<std::int64_t>{1});
  CHECK(h.entries().size() == vm::ShapeHistogram::kMaxShapes);
  CHECK(h.overflow() == 2);
  CHECK(h.count_of(std::vector<std::int64_t>{1}) == 2);
  CHECK(h.total() == 7);
}

TEST_CASE("disassembly lists pcs, opcodes, registers, nodes and anchors", "[unit][vm]") {
  Graph g = chain_graph();
  const std::string listing = vm::compile(g)->disassemble();
  CHECK(listing.find("anchor 0 entry at pc 0") != std::string::npos);
  CHECK(listing.find("kernel Add") != std::string::npos);
  CHECK(listing.find("node 'y4'") != std::string::npos);
  CHECK(listing.find("(x)") != std::string::npos);
  CHECK(listing.find("return") != std::string::npos);
}
