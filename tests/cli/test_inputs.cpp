// Input sources, stream files, call plans, random tensors and output names.
#include <catch2/catch.hpp>

#include "canary/error.h"
#include "cli/call_inputs.h"
#include "cli/call_plan.h"
#include "cli/npy.h"
#include "cli/output_files.h"
#include "cli/random_tensor.h"
#include "cli/stream_file.h"
#include "cli_process.h"

using canary::DType;
using canary::Shape;
using canary::Tensor;
using namespace canary::cli;

TEST_CASE("inputs: NAME=FILE and NAME=random:DIMS parse", "[unit][cli-inputs]") {
  const InputSource f = parse_input_source("x=data/x.npy", "--input", "/base");
  CHECK(f.name == "x");
  CHECK(f.kind == InputSource::Kind::File);
  CHECK(f.path == "/base/data/x.npy");
  CHECK(parse_input_source("x=/abs/x.npy", "--input", "/base").path == "/abs/x.npy");
  const InputSource r = parse_input_source("h0=random:4x16", "--input", {});
  CHECK(r.kind == InputSource::Kind::Random);
  REQUIRE(r.dims);
  CHECK(*r.dims == Shape{4, 16});
  CHECK_FALSE(parse_input_source("h0=random", "--input", {}).dims);
  CHECK(*parse_input_source("s=random:scalar", "--input", {}).dims == Shape{});
  CHECK(parse_dims("2,3,0", "o") == Shape{2, 3, 0});
  CHECK_THROWS_WITH(parse_input_source("x", "--input x", {}), Catch::Contains("expected NAME=FILE.npy"));
  CHECK_THROWS_WITH(parse_input_source("x=random:4xq", "s.txt:3", {}),
                    Catch::Contains("s.txt:3") && Catch::Contains("bad dims '4xq'"));
  CHECK_THROWS_AS(parse_dims("4x", "o"), canary::Error);
  CHECK_THROWS_AS(parse_dims("-1", "o"), canary::Error);
}

TEST_CASE("inputs: stream lines, comments, repeats and folders", "[unit][cli-inputs]") {
  canary::test::ScratchDir dir;
  std::filesystem::create_directories(dir.path() / "call");
  write_npy(dir.file("call/x.npy"), Tensor::from_vector<float>({1, 2}, {1, 2}));
  write_npy(dir.file("call/h.npy"), Tensor::from_vector<float>({3}, {1}));
  const std::string text =
      "# a stream\n"
      "\n"
      "x=random:8x4 *3   # three calls\n"
      "call h=random:2\n";
  const std::vector<CallSpec> calls = parse_stream(text, "s.txt", dir.path());
  REQUIRE(calls.size() == 4);
  CHECK(calls[0].origin == "s.txt:3");
  CHECK(calls[2].inputs.size() == 1);
  CHECK(*calls[2].inputs[0].dims == Shape{8, 4});
  CHECK(calls[3].origin == "s.txt:4");
  REQUIRE(calls[3].inputs.size() == 2);
  CHECK(calls[3].inputs[0].name == "h");
  CHECK(calls[3].inputs[0].kind == InputSource::Kind::Random);  // the token wins over the folder's h.npy
  CHECK(calls[3].inputs[1].name == "x");
  CHECK(calls[3].inputs[1].path == dir.file("call/x.npy"));
  CHECK_THROWS_WITH(parse_stream("x=random:2 *0\n", "s.txt", {}), Catch::Contains("s.txt:1") && Catch::Contains("*0"));
  CHECK_THROWS_WITH(parse_stream("x=random:2 x=random:3\n", "s.txt", {}), Catch::Contains("given twice"));
  CHECK_THROWS_WITH(parse_stream("\n *2\n", "s.txt", {}), Catch::Contains("s.txt:2"));
  CHECK_THROWS_WITH(read_stream_file(dir.file("none.txt")), Catch::Contains("cannot open stream file"));
}

TEST_CASE("inputs: plans merge the folder, --input and the stream, then repeat", "[unit][cli-inputs]") {
  canary::test::ScratchDir dir;
  write_npy(dir.file("x.npy"), Tensor::from_vector<float>({1}, {1}));
  write_npy(dir.file("b.npy"), Tensor::from_vector<float>({2}, {1}));
  canary::test::write_text(dir.file("s.txt"), "x=random:3\nb=random:2 *2\n");
  InputArgs args;
  args.inputs_dir = dir.path().string();
  args.inputs = {"b=random:5"};
  std::vector<CallSpec> one = plan_calls(args);
  REQUIRE(one.size() == 1);
  REQUIRE(one[0].inputs.size() == 2);
  CHECK(one[0].inputs[0].name == "b");
  CHECK(one[0].inputs[0].kind == InputSource::Kind::Random);
  args.stream = dir.file("s.txt");
  args.repeat = 2;
  const std::vector<CallSpec> calls = plan_calls(args);
  REQUIRE(calls.size() == 6);  // 3 stream calls, twice
  CHECK(*calls[0].inputs[0].dims == Shape{5});  // b from --input
  CHECK(*calls[0].inputs[1].dims == Shape{3});  // x from the line
  CHECK(*calls[1].inputs[0].dims == Shape{2});  // b from the line
  CHECK(calls[1].inputs[1].kind == InputSource::Kind::File);  // x from the folder
  CHECK(plan_calls(InputArgs{}).empty());
}

TEST_CASE("inputs: random tensors are seeded, in range and typed by the model", "[unit][cli-inputs]") {
  const Tensor a = random_tensor(DType::F32, {1000}, 7), b = random_tensor(DType::F32, {1000}, 7);
  const Tensor c = random_tensor(DType::F32, {1000}, 8);
  int same_as_c = 0;
  for (int i = 0; i < 1000; ++i) {
    CHECK(a.data<float>()[i] == b.data<float>()[i]);
    CHECK(a.data<float>()[i] >= -1.0f);
    CHECK(a.data<float>()[i] < 1.0f);
    same_as_c += a.data<float>()[i] == c.data<float>()[i];
  }
  CHECK(same_as_c < 10);
  const Tensor ints = random_tensor(DType::I64, {500}, 1);
  for (int i = 0; i < 500; ++i) CHECK((ints.data<std::int64_t>()[i] >= 0 && ints.data<std::int64_t>()[i] <= 9));
  CHECK(input_seed(0, 1, "x") != input_seed(0, 2, "x"));
  CHECK(input_seed(0, 1, "x") != input_seed(0, 1, "y"));

  CallInputs inputs({{"x", DType::F64, {"N", "4"}}, {"k", DType::I32, {"2", "3"}}}, 0);
  const canary::NamedTensors t = inputs.make({parse_input_source("x=random:5x4", "o", {}),
                                              parse_input_source("k=random", "o", {})}, 1);
  CHECK(t.at("x").type_string() == "f64[5, 4]");
  CHECK(t.at("k").type_string() == "i32[2, 3]");
  CHECK_THROWS_WITH(inputs.make({parse_input_source("x=random", "--input x=random", {})}, 1),
                    Catch::Contains("symbolic shape") && Catch::Contains("x=random:4x16"));
  CHECK_THROWS_WITH(inputs.make({parse_input_source("y=random:2", "--input y=random:2", {})}, 1),
                    Catch::Contains("unknown input 'y'") && Catch::Contains("x: f64[N, 4]"));
}

TEST_CASE("outputs: graph output names become safe file names", "[unit][cli-inputs]") {
  CHECK(output_file_name("probs") == "probs.npy");
  CHECK(output_file_name("onnx::Add/out:0") == "onnx__Add_out_0.npy");
  CHECK(output_file_name("..") == "_...npy");
}
