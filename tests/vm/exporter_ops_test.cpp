// VM tests of the exporter ops end to end: a graph in the text format using
// Pad, LeakyRelu, Split (several outputs), ConstantOfShape, Range, Mod,
// Dropout and Not runs through the kernel table in f32 and in the fp64
// reference mode, and Dropout's training mode fails at run time.
#include <catch2/catch.hpp>

#include "canary/error.h"
#include "graph/text_format.h"
#include "vm_graph_builders.h"

using namespace vmtest;
namespace vm = canary::vm;

namespace {

constexpr const char* kGraph = R"(canary v1
graph main(x: f32[N, 2], train: bool[]) -> (first, second, zeros, steps, rem, kept, flipped) {
  const pads: i64[4] = [0, 1, 0, 1]
  const nine: f32[] = [9]
  const zero: i64[] = [0]
  const three: i64[] = [3]
  const two: f32[] = [2]
  p = Pad(x, pads, nine)
  l = LeakyRelu(p) {alpha = 0.5}
  first, second = Split(l) {axis = 1}
  s = Shape(x)
  zeros = ConstantOfShape(s)
  n = Gather(s, zero) {axis = 0}
  steps = Range(n, zero, three)
  rem = Mod(x, two) {fmod = 0}
  kept, mask = Dropout(x, _, train)
  flipped = Not(mask)
}
)";

// Runs the graph on x = [[-4, 3], [5, -1]] with the given training flag.
std::vector<Tensor> run_graph(bool train, vm::CompileOptions opts) {
  std::shared_ptr<Graph> g = canary::graph::parse_graph(kGraph, "<exporter>");
  vm::Interpreter interp(vm::compile(*g, opts));
  std::vector<Tensor> in{f32({-4, 3, 5, -1}, {2, 2}), boolean(train)};
  return interp.run(in);
}

}  // namespace

TEST_CASE("exporter ops run end to end in f32 and fp64 reference mode", "[unit][vm][exporter_ops]") {
  for (bool fp64 : {false, true}) {
    INFO("fp64 " << fp64);
    std::vector<Tensor> out = run_graph(false, vm::CompileOptions{fp64});
    REQUIRE(out.size() == 7);
    const DType real = fp64 ? DType::F64 : DType::F32;
    // Pad gives [[9, -4, 3, 9], [9, 5, -1, 9]]; LeakyRelu(0.5) halves negatives; Split halves the columns.
    CHECK(out[0].dtype() == real);
    CHECK(out[0].shape() == canary::Shape{2, 2});
    CHECK(values(out[0]) == std::vector<double>{9, -2, 9, 5});
    CHECK(values(out[1]) == std::vector<double>{3, 9, -0.5, 9});
    CHECK(out[2].dtype() == real);
    CHECK(values(out[2]) == std::vector<double>{0, 0, 0, 0});
    // Range(2, 0, 3) is empty.
    CHECK(out[3].shape() == canary::Shape{0});
    // Mod by 2 with the divisor's sign: -4 -> 0, 3 -> 1, 5 -> 1, -1 -> 1.
    CHECK(values(out[4]) == std::vector<double>{0, 1, 1, 1});
    CHECK(values(out[5]) == std::vector<double>{-4, 3, 5, -1});
    CHECK(values(out[6]) == std::vector<double>{0, 0, 0, 0});
  }
}

TEST_CASE("Dropout in training mode fails at run time naming the node", "[unit][vm][exporter_ops]") {
  try {
    run_graph(true, {});
    FAIL("expected a canary::Error");
  } catch (const canary::Error& e) {
    CHECK(e.kind() == canary::ErrorKind::Input);
    CHECK_THAT(std::string(e.what()), Catch::Matchers::Contains("(Dropout)"));
    CHECK_THAT(std::string(e.what()), Catch::Matchers::Contains("training mode is not supported"));
  }
}
