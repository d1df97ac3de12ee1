// `canary run` as a subprocess: outputs written, summary numbers, streams, errors.
#include <catch2/catch.hpp>

#include <cmath>

#include "cli/npy.h"
#include "cli_process.h"

using canary::Tensor;
using namespace canary::test;

namespace {

// The stream the JIT tests replay on mlp.cnr: 10 calls of batch 8, 6 of 16, 4 of 32.
const char* const kBatchStream =
    "# batch 8, then 16, then 32\n"
    "x=random:8x4 *10\n"
    "x=random:16x4 *6\n"
    "x=random:32x4 *4\n";

// True when `text` has exactly one line and it starts with "canary: error: ".
bool is_one_line_error(const std::string& text) {
  return text.rfind("canary: error: ", 0) == 0 && line_count(text) == 1;
}

}  // namespace

TEST_CASE("cli run: writes the outputs and prints their shapes and values", "[unit][cli]") {
  ScratchDir dir;
  // x = 0: h = relu(b1) = [0.01, 0, 0]; logits = h w2 + b2 = [0.01, 0.09];
  // softmax gives [1 / (1 + e^0.08), 1 / (1 + e^-0.08)] = [0.480011, 0.519989] per row.
  canary::cli::write_npy(dir.file("x.npy"), Tensor::empty(canary::DType::F32, {2, 4}));
  const CliResult r = run_cli({"run", fixture("mlp.cnr"), "--input", "x=" + dir.file("x.npy"), "--output-dir",
                               dir.file("out")});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Catch::Contains("inputs: x: f32[N, 4]"));
  CHECK_THAT(r.out, Catch::Contains("probs: f32[2, 2]  min 0.480011  max 0.519989  mean 0.5"));
  CHECK_THAT(r.out, Catch::Contains("calls: 1 in "));
  CHECK_THAT(r.out, Catch::Contains("input x: [2, 4] x1"));
  CHECK_THAT(r.out, Catch::Contains("wrote " + dir.file("out/probs.npy")));
  const Tensor probs = canary::cli::read_npy(dir.file("out/probs.npy"));
  REQUIRE(probs.shape() == canary::Shape{2, 2});
  const double p0 = 1.0 / (1.0 + std::exp(0.08));
  for (int row = 0; row < 2; ++row) {
    CHECK(probs.data<float>()[2 * row] == Approx(p0).epsilon(1e-5));
    CHECK(probs.data<float>()[2 * row + 1] == Approx(1.0 - p0).epsilon(1e-5));
  }
}

TEST_CASE("cli run: a folder of inputs and --repeat; an ONNX fixture", "[unit][cli]") {
  ScratchDir dir;
  std::filesystem::create_directories(dir.path() / "in");
  canary::cli::write_npy(dir.file("in/x.npy"), Tensor::empty(canary::DType::F32, {3, 4}));
  const CliResult r = run_cli({"run", fixture("mlp.cnr"), "--inputs", dir.file("in"), "--repeat", "3", "--no-jit"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("calls: 3 in "));
  CHECK_THAT(r.out, Catch::Contains("probs: f32[3, 2]  min 0.480011  max 0.519989"));
  CHECK_THAT(r.out, Catch::Contains("jit off"));
  const CliResult onnx = run_cli({"run", fixture("onnx/torch_conv_net/model.onnx"), "-i", "x=random:2x4x32",
                                  "--output-dir", dir.file("conv")});
  INFO(onnx.err);
  REQUIRE(onnx.status == 0);
  CHECK_THAT(onnx.out, Catch::Contains("y: f32[2, 3]"));
  CHECK(canary::cli::read_npy(dir.file("conv/y.npy")).shape() == canary::Shape{2, 3});
}

TEST_CASE("cli run: a shape stream warms the JIT and the summary counts the tiers", "[unit][cli]") {
  ScratchDir dir;
  write_text(dir.file("s.txt"), kBatchStream);
  // Hot at call 8 (compiled, synchronously); calls 9-10 compiled; calls 11-12
  // fail the x.dim0 == 8 guard (the second failure recompiles with x.dim0
  // symbolic); calls 13-20 compiled: 10 calls of each tier.
  const CliResult r = run_cli({"run", fixture("mlp.cnr"), "--stream", dir.file("s.txt"), "--sync-compile"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("calls: 20 in "));
  CHECK_THAT(r.out, Catch::Contains("interpreter only: 10 calls"));
  CHECK_THAT(r.out, Catch::Contains("compiled code:    10 calls"));
  CHECK_THAT(r.out, Catch::Contains("input x: [8, 4] x10, [16, 4] x6, [32, 4] x4"));
  CHECK_THAT(r.out, Catch::Contains("2 guard failures"));
  CHECK_THAT(r.out, Catch::Contains("2 traces, 2 compiles"));
  CHECK_THAT(r.out, Catch::Contains("outputs of call 20:\n  probs: f32[32, 2]"));
}

TEST_CASE("cli errors: one line naming the problem, non-zero exit", "[unit][cli]") {
  ScratchDir dir;
  const CliResult missing = run_cli({"run", dir.file("nope.onnx"), "-i", "x=random:2x4"});
  CHECK(missing.status != 0);
  CHECK(is_one_line_error(missing.err));
  CHECK_THAT(missing.err, Catch::Contains("nope.onnx") && Catch::Contains("does not exist"));

  write_text(dir.file("bad.npy"), "this is not numpy");
  const CliResult bad = run_cli({"run", fixture("mlp.cnr"), "-i", "x=" + dir.file("bad.npy")});
  CHECK(bad.status != 0);
  CHECK(is_one_line_error(bad.err));
  CHECK_THAT(bad.err, Catch::Contains("bad.npy") && Catch::Contains("magic"));

  const CliResult unknown = run_cli({"run", fixture("mlp.cnr"), "-i", "y=random:2x4"});
  CHECK(unknown.status != 0);
  CHECK(is_one_line_error(unknown.err));
  CHECK_THAT(unknown.err, Catch::Contains("unknown input 'y'") && Catch::Contains("x: f32[N, 4]"));

  const CliResult shape = run_cli({"run", fixture("mlp.cnr"), "-i", "x=random:2x5"});
  CHECK(shape.status != 0);
  CHECK(is_one_line_error(shape.err));

  write_text(dir.file("s.txt"), "x=random:2x4\nx=random:3x7\n");
  const CliResult stream = run_cli({"run", fixture("mlp.cnr"), "--stream", dir.file("s.txt")});
  CHECK(stream.status != 0);
  CHECK(is_one_line_error(stream.err));
  CHECK_THAT(stream.err, Catch::Contains("call 2 (" + dir.file("s.txt") + ":2)"));

  const CliResult none = run_cli({"run", fixture("mlp.cnr")});
  CHECK(none.status != 0);
  CHECK_THAT(none.err, Catch::Contains("no inputs given"));

  const CliResult usage = run_cli({"run"});
  CHECK(usage.status == 2);
  CHECK(is_one_line_error(usage.err));
  const CliResult profile = run_cli({"run", fixture("mlp.cnr"), "-i", "x=random:2x4", "--profile", "fastest"});
  CHECK(profile.status == 2);
  CHECK(is_one_line_error(profile.err));
}
