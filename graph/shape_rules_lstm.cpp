// Shape rule of LSTM (ONNX opset 14): attribute checks, weight shapes tied to
// hidden_size and the input size, outputs Y, Y_h, Y_c.
#include "graph/shape_rules.h"

namespace canary::graph::rules {
namespace {

// The number of directions named by the `direction` attribute.
int lstm_directions(const InferContext& ctx) {
  std::string direction = ctx.attr_string("direction");
  if (direction == "forward" || direction == "reverse") return 1;
  if (direction == "bidirectional") return 2;
  ctx.fail(ErrorKind::Model, "attribute 'direction' is '" + direction + "', expected forward, reverse or bidirectional");
}

// Splits "Sigmoid, Tanh,Tanh" into trimmed names.
std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> names;
  std::string current;
  for (char c : text + ",") {
    if (c == ',') {
      names.push_back(current);
      current.clear();
    } else if (c != ' ') {
      current += c;
    }
  }
  return names;
}

// Accepts only the default activations Sigmoid, Tanh, Tanh per direction.
void check_activations(const InferContext& ctx, int directions) {
  if (!ctx.has_attr("activations")) return;
  std::vector<std::string> names = split_names(ctx.attr_string("activations"));
  static const char* const kDefault[3] = {"Sigmoid", "Tanh", "Tanh"};
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (names[k] != kDefault[k % 3]) {
      ctx.fail(ErrorKind::Model, "unsupported activation '" + names[k] + "' at position " + std::to_string(k) +
                                     " of attribute 'activations'; only Sigmoid, Tanh, Tanh per direction is supported");
    }
  }
  if (names.size() != static_cast<std::size_t>(3 * directions)) {
    ctx.fail(ErrorKind::Model, "attribute 'activations' lists " + std::to_string(names.size()) + " functions, expected " +
                                   std::to_string(3 * directions));
  }
}

// Checks one input's full shape against the expected dims.
void check_shape(InferContext& ctx, int i, const DimVector& expected, const char* what) {
  if (!ctx.has_input(i)) return;
  ctx.expect_rank(i, static_cast<int>(expected.size()));
  const DimVector& got = ctx.input_type(i).shape;
  for (std::size_t k = 0; k < expected.size(); ++k) {
    ctx.assert_equal(got[k], expected[k], ctx.describe_input(i) + " (" + what + ") dim " + std::to_string(k));
  }
}

}  // namespace

// LSTM: X [T, B, I] (layout 0) or [B, T, I] (layout 1); W [D, 4H, I],
// R [D, 4H, H], B [D, 8H]; Y [T, D, B, H] or [B, T, D, H]; Y_h, Y_c [D, B, H]
// or [B, D, H].
void infer_lstm(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::F32, DType::F64});
  DType dtype = ctx.input_type(0).dtype;
  for (int i : {1, 2, 3, 5, 6, 7})
    if (ctx.has_input(i)) ctx.expect_dtype(i, {dtype});
  if (ctx.has_input(4)) ctx.expect_dtype(4, {DType::I32, DType::I64});
  std::int64_t hidden = ctx.attr_int("hidden_size");
  if (hidden < 1) ctx.fail(ErrorKind::Model, "attribute 'hidden_size' is " + std::to_string(hidden) + ", expected >= 1");
  std::int64_t layout = ctx.attr_int("layout");
  if (layout != 0 && layout != 1) ctx.fail(ErrorKind::Model, "attribute 'layout' is " + std::to_string(layout) + ", expected 0 or 1");
  if (ctx.has_attr("clip") && !(ctx.attr_float("clip") > 0.0)) ctx.fail(ErrorKind::Model, "attribute 'clip' must be > 0");
  int directions = lstm_directions(ctx);
  check_activations(ctx, directions);
  ctx.expect_rank(0, 3);
  const DimVector& x = ctx.input_type(0).shape;
  Dim t = layout == 0 ? x[0] : x[1], b = layout == 0 ? x[1] : x[0], in = x[2];
  std::int64_t bias_length = 0;
  if (__builtin_mul_overflow(hidden, 8, &bias_length)) {
    ctx.fail(ErrorKind::Shape, "attribute 'hidden_size' is " + std::to_string(hidden) +
                                   ": 8 * hidden_size (the bias length) overflows int64");
  }
  Dim d(directions), h(hidden);
  check_shape(ctx, 1, {d, Dim(4 * hidden), in}, "W");
  check_shape(ctx, 2, {d, Dim(4 * hidden), h}, "R");
  check_shape(ctx, 3, {d, Dim(8 * hidden)}, "B");
  check_shape(ctx, 4, {b}, "sequence_lens");
  DimVector state = layout == 0 ? DimVector{d, b, h} : DimVector{b, d, h};
  check_shape(ctx, 5, state, "initial_h");
  check_shape(ctx, 6, state, "initial_c");
  check_shape(ctx, 7, {d, Dim(3 * hidden)}, "P");
  ctx.set_output(0, ValueType{dtype, layout == 0 ? DimVector{t, d, b, h} : DimVector{b, t, d, h}});
  ctx.set_output(1, ValueType{dtype, state});
  ctx.set_output(2, ValueType{dtype, state});
}

}  // namespace canary::graph::rules
