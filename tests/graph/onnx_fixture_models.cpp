// Small ONNX models for the importer's tests, one per feature (see the
// comments in onnx_fixtures.h for what each computes).
#include "tests/graph/onnx_fixtures.h"

namespace onnx_fixtures {

// relu(x @ W + b) with a dim_param that is not an identifier.
onnx::ModelProto mlp_model() {
  auto g =
      graph("mlp",
            {node("MatMul", {"x", "W"}, {"xw"}, {}, "matmul"), node("Add", {"xw", "b"}, {"z"}, {}, "add"),
             node("Relu", {"z"}, {"y"}, {}, "relu")},
            {value("x", kFloat, {std::string("batch size"), 2})}, {value("y", kFloat, {std::string("batch size"), 3})},
            {f32_tensor("W", {2, 3}, {1, 0, -1, 2, 1, 0.5f}), f32_tensor("b", {3}, {0.5f, -1, 0})});
  return model(g);
}

// Conv1d with pads 1 keeps the length T.
onnx::ModelProto conv1d_model() {
  auto g = graph("conv1d",
                 {node("Conv", {"x", "K", "B"}, {"y"},
                       {attr_ints("kernel_shape", {3}), attr_ints("pads", {1, 1}), attr_ints("strides", {1})}, "conv")},
                 {value("x", kFloat, {1, 1, std::string("T")})}, {value("y", kFloat, {1, 1, std::string("T")})},
                 {f32_tensor("K", {1, 1, 3}, {1, 0, -1}), f32_tensor("B", {1}, {0.5f})});
  return model(g);
}

// Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
onnx::ModelProto shape_chain_model() {
  auto g =
      graph("shape_chain",
            {node("Shape", {"x"}, {"s"}), node("Gather", {"s", "zero"}, {"n"}, {attr_int("axis", 0)}),
             node("Unsqueeze", {"n", "axes"}, {"n1"}), node("Concat", {"n1", "c24"}, {"target"}, {attr_int("axis", 0)}),
             node("Reshape", {"x", "target"}, {"y"}, {}, "reshape")},
            {value("x", kFloat, {std::string("N"), 4, 6})}, {value("y", kFloat, {std::string("N"), 24})},
            {i64_tensor("zero", {}, {0}), i64_tensor("axes", {1}, {0}), i64_tensor("c24", {1}, {24})});
  return model(g);
}

// Loop body: s_next = s + x, where x is the main graph's input.
onnx::ModelProto loop_model() {
  auto body = graph("loop_body", {node("Add", {"s", "x"}, {"s_next"}, {}, "accumulate")},
                    {unshaped("iter", kInt64), unshaped("cond", kBool), unshaped("s", kFloat)},
                    {unshaped("cond", kBool), unshaped("s_next", kFloat), unshaped("s_next", kFloat)});
  auto g =
      graph("loop", {node("Loop", {"trip", "keep", "s0"}, {"s_final", "s_all"}, {attr_graph("body", body)}, "loop")},
            {value("x", kFloat, {2})}, {value("s_final", kFloat, {2}), value("s_all", kFloat, {3, 2})},
            {i64_tensor("trip", {}, {3}), bool_tensor("keep", {}, {1}), f32_tensor("s0", {2}, {10, 20})});
  return model(g);
}

// Branches read the outer x and a constant of their own.
onnx::ModelProto if_model() {
  auto then_g =
      graph("then", {node("Add", {"x", "one"}, {"t"})}, {}, {unshaped("t", kFloat)}, {f32_tensor("one", {}, {1})});
  auto else_g =
      graph("else", {node("Mul", {"x", "two"}, {"e"})}, {}, {unshaped("e", kFloat)}, {f32_tensor("two", {}, {2})});
  auto g = graph(
      "if", {node("If", {"c"}, {"y"}, {attr_graph("then_branch", then_g), attr_graph("else_branch", else_g)}, "if")},
      {value("c", kBool, {}), value("x", kFloat, {3})}, {value("y", kFloat, {3})});
  return model(g);
}

// Running sum over the rows of xs.
onnx::ModelProto scan_model() {
  auto body = graph("scan_body", {node("Add", {"s", "row"}, {"s_next"}), node("Identity", {"s_next"}, {"partial"})},
                    {unshaped("s", kFloat), unshaped("row", kFloat)},
                    {unshaped("s_next", kFloat), unshaped("partial", kFloat)});
  auto g = graph("scan",
                 {node("Scan", {"s0", "xs"}, {"total", "partials"},
                       {attr_graph("body", body), attr_int("num_scan_inputs", 1)}, "scan")},
                 {value("xs", kFloat, {std::string("T"), 2})},
                 {value("total", kFloat, {2}), value("partials", kFloat, {std::string("T"), 2})},
                 {f32_tensor("s0", {2}, {0, 0})});
  return model(g);
}

// LSTM whose only nonzero weight feeds x into the cell gate.
onnx::ModelProto lstm_model() {
  auto g = graph("lstm",
                 {node("LSTM", {"x", "W", "R"}, {"", "h", "c"},
                       {attr_int("hidden_size", 1), attr_strings("activations", {"Sigmoid", "Tanh", "Tanh"})}, "lstm")},
                 {value("x", kFloat, {std::string("T"), 1, 1})},
                 {value("h", kFloat, {1, 1, 1}), value("c", kFloat, {1, 1, 1})},
                 {f32_tensor("W", {1, 4, 1}, {0, 0, 0, 1}), f32_tensor("R", {1, 4, 1}, {0, 0, 0, 0})});
  return model(g);
}

// Each level's then branch holds the next level; else branches are leaves.
onnx::ModelProto nested_if_model(int depth) {
  auto leaf = [](const std::string& out) {
    return graph("leaf_" + out, {node("Identity", {"x"}, {out})}, {}, {unshaped(out, kFloat)});
  };
  onnx::GraphProto inner = leaf("y" + std::to_string(depth));
  for (int level = depth - 1; level >= 1; --level) {
    std::string out = "y" + std::to_string(level);
    inner = graph(
        "level" + std::to_string(level),
        {node("If", {"c"}, {out}, {attr_graph("then_branch", inner), attr_graph("else_branch", leaf("e" + out))})}, {},
        {unshaped(out, kFloat)});
  }
  auto g = graph(
      "nested",
      {node("If", {"c"}, {"y0"}, {attr_graph("then_branch", inner), attr_graph("else_branch", leaf("e0"))}, "top")},
      {value("c", kBool, {}), value("x", kFloat, {2})}, {value("y0", kFloat, {2})});
  return model(g);
}

}  // namespace onnx_fixtures
