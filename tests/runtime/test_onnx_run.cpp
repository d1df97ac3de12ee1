// ONNX models loaded through the public API (Runtime::load of a .onnx file)
// and run with a Session; outputs checked against hand-computed values.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>

#include "canary/canary.h"
#include "tests/graph/onnx_fixtures.h"

using namespace onnx_fixtures;
using canary::Tensor;

namespace {

// Writes the model to a temp .onnx file and loads it with Runtime::load.
canary::Model load_onnx(const onnx::ModelProto& m, const std::string& stem) {
  std::string path = write_temp_file(stem + ".onnx", bytes(m));
  canary::Runtime rt;
  canary::Model model = rt.load(path);
  std::remove(path.c_str());
  return model;
}

// The f32 elements of a tensor.
std::vector<float> floats(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.numel()); }

}  // namespace

TEST_CASE("onnx run: MLP at two batch sizes", "[unit][onnx]") {
  canary::Model model = load_onnx(mlp_model(), "mlp");
  CHECK(model.inputs().at(0).to_string() == "x: f32[batch_size, 2]");
  auto s = model.session();
  // Rows [1, 2] -> relu([5, 2, 0] + [0.5, -1, 0]) = [5.5, 1, 0]; [-1, 1] -> [1.5, 0, 1.5];
  // [0, -2] -> relu([-4, -2, -1] + b) = [0, 0, 0].
  auto one = s.run({{"x", Tensor::from_vector<float>({1, 2}, {1, 2})}});
  CHECK(one.at("y").shape() == canary::Shape{1, 3});
  CHECK(floats(one.at("y")) == std::vector<float>{5.5f, 1, 0});
  auto three = s.run({{"x", Tensor::from_vector<float>({1, 2, -1, 1, 0, -2}, {3, 2})}});
  CHECK(three.at("y").shape() == canary::Shape{3, 3});
  CHECK(floats(three.at("y")) == std::vector<float>{5.5f, 1, 0, 1.5f, 0, 1.5f, 0, 0, 0});
}

TEST_CASE("onnx run: Conv1d over two lengths", "[unit][onnx]") {
  auto s = load_onnx(conv1d_model(), "conv").session();
  // y[t] = x[t-1] - x[t+1] + 0.5 with zero padding.
  auto a = s.run({{"x", Tensor::from_vector<float>({1, 2, 3, 4}, {1, 1, 4})}});
  CHECK(floats(a.at("y")) == std::vector<float>{-1.5f, -1.5f, -1.5f, 3.5f});
  auto b = s.run({{"x", Tensor::from_vector<float>({2, 0, 1, 0, 0, 5}, {1, 1, 6})}});
  CHECK(floats(b.at("y")) == std::vector<float>{0.5f, 1.5f, 0.5f, 1.5f, -4.5f, 0.5f});
}

TEST_CASE("onnx run: the Shape chain reshapes to [N, 24]", "[unit][onnx]") {
  canary::Model model = load_onnx(shape_chain_model(), "chain");
  CHECK(model.outputs().at(0).to_string() == "y: f32[N, 24]");
  std::vector<float> x(2 * 4 * 6);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  auto out = model.session().run({{"x", Tensor::from_vector<float>(x, {2, 4, 6})}});
  CHECK(out.at("y").shape() == canary::Shape{2, 24});
  CHECK(out.at("y").data<float>()[25] == 25.0f);
}

TEST_CASE("onnx run: Cast with an integer `to`", "[unit][onnx]") {
  auto m = model(graph("g", {node("Cast", {"x"}, {"y"}, {attr_int("to", kInt32)})}, {value("x", kFloat, {3})},
                       {unshaped("y", kInt32)}));
  auto out = load_onnx(m, "cast").session().run({{"x", Tensor::from_vector<float>({1, -2, 40}, {3})}});
  const Tensor& y = out.at("y");
  REQUIRE(y.dtype() == canary::DType::I32);
  CHECK(std::vector<std::int32_t>(y.data<std::int32_t>(), y.data<std::int32_t>() + 3) ==
        std::vector<std::int32_t>{1, -2, 40});
}

TEST_CASE("onnx run: LSTM with an explicit activations list", "[unit][onnx]") {
  auto out = load_onnx(lstm_model(), "lstm").session().run({{"x", Tensor::from_vector<float>({1, 2}, {2, 1, 1})}});
  // Only the cell gate sees x: i = f = o = sigmoid(0) = 0.5, g = tanh(x).
  double c1 = 0.5 * std::tanh(1.0);
  double c2 = 0.5 * c1 + 0.5 * std::tanh(2.0);
  CHECK(out.at("c").data<float>()[0] == Approx(c2).epsilon(1e-6));
  CHECK(out.at("h").data<float>()[0] == Approx(0.5 * std::tanh(c2)).epsilon(1e-6));
}

TEST_CASE("onnx run: If picks a branch reading the outer x", "[unit][onnx]") {
  auto s = load_onnx(if_model(), "if").session();
  Tensor x = Tensor::from_vector<float>({1, 2, 3}, {3});
  CHECK(floats(s.run({{"c", Tensor::scalar<bool>(true)}, {"x", x}}).at("y")) == std::vector<float>{2, 3, 4});
  CHECK(floats(s.run({{"c", Tensor::scalar<bool>(false)}, {"x", x}}).at("y")) == std::vector<float>{2, 4, 6});
}

TEST_CASE("onnx run: Loop adds the outer x three times", "[unit][onnx]") {
  auto out = load_onnx(loop_model(), "loop").session().run({{"x", Tensor::from_vector<float>({1, 2}, {2})}});
  CHECK(floats(out.at("s_final")) == std::vector<float>{13, 26});
  CHECK(out.at("s_all").shape() == canary::Shape{3, 2});
  CHECK(floats(out.at("s_all")) == std::vector<float>{11, 22, 12, 24, 13, 26});
}

TEST_CASE("onnx run: Scan computes running sums", "[unit][onnx]") {
  auto out =
      load_onnx(scan_model(), "scan").session().run({{"xs", Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {3, 2})}});
  CHECK(floats(out.at("total")) == std::vector<float>{9, 12});
  CHECK(floats(out.at("partials")) == std::vector<float>{1, 2, 4, 6, 9, 12});
}

TEST_CASE("onnx run: raw and typed initializers feed the computation", "[unit][onnx]") {
  double wd[] = {0.5, -1};
  std::int32_t wi[] = {3, -4};
  auto m =
      model(graph("g",
                  {node("Mul", {"x", "w_raw"}, {"a"}), node("Add", {"a", "w_typed"}, {"y"}),
                   node("Add", {"k_raw", "k_typed"}, {"k"}), node("Where", {"mask", "y", "zero"}, {"z"})},
                  {value("x", kDouble, {2})}, {unshaped("y", kDouble), unshaped("k", kInt32), unshaped("z", kDouble)},
                  {raw_tensor("w_raw", kDouble, {2}, wd, sizeof wd), f64_tensor("w_typed", {2}, {10, 20}),
                   raw_tensor("k_raw", kInt32, {2}, wi, sizeof wi), i32_tensor("k_typed", {2}, {1, 1}),
                   bool_tensor("mask", {2}, {0, 1}), f64_tensor("zero", {}, {0})}));
  auto out = load_onnx(m, "inits").session().run({{"x", Tensor::from_vector<double>({4, 8}, {2})}});
  CHECK(out.at("y").data<double>()[0] == 12.0);  // 4 * 0.5 + 10
  CHECK(out.at("y").data<double>()[1] == 12.0);  // 8 * -1 + 20
  CHECK(out.at("k").data<std::int32_t>()[0] == 4);
  CHECK(out.at("k").data<std::int32_t>()[1] == -3);
  CHECK(out.at("z").data<double>()[0] == 0.0);
  CHECK(out.at("z").data<double>()[1] == 12.0);
}

TEST_CASE("onnx run: Runtime::load reports a bad .onnx file by path", "[unit][onnx]") {
  std::string path = write_temp_file("bad.onnx", std::string("\x0a\xff\xff\xff", 4));
  canary::Runtime rt;
  try {
    rt.load(path);
    FAIL("expected an error");
  } catch (const canary::Error& e) {
    CHECK(e.kind() == canary::ErrorKind::Model);
    CHECK_THAT(e.what(), Catch::Contains(path));
  }
  std::remove(path.c_str());
}
