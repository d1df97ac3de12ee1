// ONNX import of the conv- and recurrent-net ops as torch.onnx.export writes
// them: MaxPool, AveragePool, GlobalAveragePool, BatchNormalization, GRU and
// RNN (activation lists, default-only activation parameters, unsupported outputs).
#include <catch2/catch.hpp>

#include "canary/error.h"
#include "graph/onnx_import.h"
#include "tests/graph/onnx_fixtures.h"
#include "tests/graph/onnx_import_checks.h"

using namespace onnx_fixtures;
using canary::Error;
using canary::ErrorKind;
using canary::graph::Graph;
using canary::graph::import_onnx;
using canary::test::type_text;

namespace {

// The message of the canary::Error importing the model throws, checking its kind.
std::string import_error(const onnx::ModelProto& m, ErrorKind kind) {
  try {
    import_onnx(bytes(m), "nn.onnx");
  } catch (const Error& e) {
    CHECK(e.kind() == kind);
    return e.what();
  }
  FAIL("expected a canary::Error");
  return "";
}

// A conv-net tail: MaxPool (ceil mode) → BatchNormalization → AveragePool → GlobalAveragePool.
onnx::ModelProto conv_tail_model(std::int64_t opset) {
  const std::vector<float> ones{1, 1}, zeros{0, 0};
  auto g = graph("tail",
                 {node("MaxPool", {"x"}, {"mp"},
                       {attr_ints("kernel_shape", {2}), attr_ints("strides", {2}), attr_int("ceil_mode", 1)}, "pool"),
                  node("BatchNormalization", {"mp", "s", "b", "m", "v"}, {"bn"},
                       {attr_float("epsilon", 1e-5f), attr_float("momentum", 0.9f)}, "bn"),
                  node("AveragePool", {"bn"}, {"ap"},
                       {attr_ints("kernel_shape", {3}), attr_ints("pads", {1, 1}), attr_int("count_include_pad", 1)},
                       "avg"),
                  node("GlobalAveragePool", {"ap"}, {"y"}, {}, "gap")},
                 {value("x", kFloat, {std::string("N"), 2, 7})}, {unshaped("y", kFloat)},
                 {f32_tensor("s", {2}, ones), f32_tensor("b", {2}, zeros), f32_tensor("m", {2}, zeros),
                  f32_tensor("v", {2}, ones)});
  return model(g, opset);
}

// A GRU over x [T, 1, 1] with H = 1, the given attributes and outputs.
onnx::ModelProto gru_model(const std::vector<onnx::AttributeProto>& attrs, const std::vector<std::string>& outputs) {
  std::vector<onnx::ValueInfoProto> outs;
  for (const std::string& o : outputs)
    if (!o.empty()) outs.push_back(unshaped(o, kFloat));
  auto g = graph("gru", {node("GRU", {"x", "W", "R"}, outputs, attrs, "gru")},
                 {value("x", kFloat, {std::string("T"), 1, 1})}, outs,
                 {f32_tensor("W", {1, 3, 1}, {0.5f, -0.5f, 1}), f32_tensor("R", {1, 3, 1}, {0, 0, 0})});
  return model(g, 14);
}

// An RNN over x [T, 1, 1] with H = 1 and the given attributes, outputs Y and Y_h.
onnx::ModelProto rnn_model(const std::vector<onnx::AttributeProto>& attrs) {
  auto g = graph("rnn", {node("RNN", {"x", "W", "R"}, {"y", "h"}, attrs, "rnn")},
                 {value("x", kFloat, {std::string("T"), 1, 1})}, {unshaped("y", kFloat), unshaped("h", kFloat)},
                 {f32_tensor("W", {1, 1, 1}, {0.5f}), f32_tensor("R", {1, 1, 1}, {0.25f})});
  return model(g, 14);
}

}  // namespace

TEST_CASE("onnx: a pooling and batch-norm tail imports with symbolic batch", "[unit][onnx][pool]") {
  const std::int64_t opset = GENERATE(13, 15, 17);
  auto g = import_onnx(bytes(conv_tail_model(opset)), "tail.onnx");
  CHECK(type_text(*g, "mp") == "f32[N, 2, 4]");  // ceil((7 - 2) / 2) + 1
  CHECK(type_text(*g, "bn") == "f32[N, 2, 4]");
  CHECK(type_text(*g, "ap") == "f32[N, 2, 4]");
  CHECK(type_text(*g, "y") == "f32[N, 2, 1]");
}

TEST_CASE("onnx: GRU activations become one string; outputs typed", "[unit][onnx][gru]") {
  auto g = import_onnx(bytes(gru_model({attr_int("hidden_size", 1), attr_strings("activations", {"Sigmoid", "Tanh"}),
                                        attr_int("linear_before_reset", 1)},
                                       {"y", "h"})),
                       "gru.onnx");
  const auto& attrs = g->nodes().at(0).attrs;
  CHECK(std::get<std::string>(attrs.at("activations")) == "Sigmoid,Tanh");
  CHECK(std::get<std::int64_t>(attrs.at("linear_before_reset")) == 1);
  CHECK(type_text(*g, "y") == "f32[T, 1, 1, 1]");
  CHECK(type_text(*g, "h") == "f32[1, 1, 1]");
}

TEST_CASE("onnx: GRU rejects other activations and activation parameters", "[unit][onnx][gru]") {
  std::string msg = import_error(
      gru_model({attr_int("hidden_size", 1), attr_strings("activations", {"Relu", "Tanh"})}, {"", "h"}),
      ErrorKind::Model);
  CHECK_THAT(msg, Catch::Contains("unsupported activation 'Relu'"));
  msg = import_error(gru_model({attr_int("hidden_size", 1), attr_floats("activation_alpha", {0.5f})}, {"", "h"}),
                     ErrorKind::Model);
  CHECK_THAT(msg, Catch::Contains("activation_alpha"));
  CHECK_THAT(msg, Catch::Contains("not supported"));
}

TEST_CASE("onnx: RNN activations become one string; other activations and parameters are refused",
          "[unit][onnx][rnn]") {
  auto g = import_onnx(bytes(rnn_model({attr_int("hidden_size", 1), attr_strings("activations", {"Relu"})})),
                       "rnn.onnx");
  CHECK(std::get<std::string>(g->nodes().at(0).attrs.at("activations")) == "Relu");
  CHECK(type_text(*g, "y") == "f32[T, 1, 1, 1]");
  CHECK(type_text(*g, "h") == "f32[1, 1, 1]");
  std::string msg = import_error(
      rnn_model({attr_int("hidden_size", 1), attr_strings("activations", {"Softsign"})}), ErrorKind::Model);
  CHECK_THAT(msg, Catch::Contains("unsupported activation 'Softsign'"));
  msg = import_error(rnn_model({attr_int("hidden_size", 1), attr_floats("activation_beta", {0.5f})}), ErrorKind::Model);
  CHECK_THAT(msg, Catch::Contains("activation_beta"));
  CHECK_THAT(msg, Catch::Contains("not supported"));
}

TEST_CASE("onnx: MaxPool Indices and BatchNormalization training outputs are rejected", "[unit][onnx][pool]") {
  auto pool = graph("p", {node("MaxPool", {"x"}, {"y", "i"}, {attr_ints("kernel_shape", {2})}, "pool")},
                    {value("x", kFloat, {1, 1, 4})}, {unshaped("y", kFloat), unshaped("i", kInt64)});
  std::string msg = import_error(model(pool, 13), ErrorKind::Model);
  CHECK_THAT(msg, Catch::Contains("Indices"));
  CHECK_THAT(msg, Catch::Contains("not supported"));
  auto bn = graph("b",
                  {node("BatchNormalization", {"x", "s", "s", "s", "s"}, {"y"}, {attr_int("training_mode", 1)}, "bn")},
                  {value("x", kFloat, {1, 2, 4})}, {unshaped("y", kFloat)}, {f32_tensor("s", {2}, {1, 1})});
  msg = import_error(model(bn, 15), ErrorKind::Model);
  CHECK_THAT(msg, Catch::Contains("training_mode"));
}
