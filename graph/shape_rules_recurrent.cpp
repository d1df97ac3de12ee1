// Shape-rule checks shared by the recurrent ops (LSTM, GRU and RNN): dtypes,
// scalar attributes, direction, activations and the W/R/B/sequence_lens/
// initial_h shapes tied to hidden_size and the layout.
#include <string>
#include <vector>

#include "graph/shape_rules.h"

namespace canary::graph::rules {
namespace {

// The number of directions named by the `direction` attribute.
int recurrent_directions(const InferContext& ctx) {
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

// Joins activation names as "Sigmoid, Tanh, Tanh".
std::string join_names(const std::vector<const char*>& names) {
  std::string text;
  for (std::size_t k = 0; k < names.size(); ++k) text += (k ? ", " : "") + std::string(names[k]);
  return text;
}

// True when `name` may stand at position k: the op's default there, or one of its alternatives.
bool accepts_activation(const RecurrentRuleSpec& spec, const std::string& name, std::size_t k) {
  if (name == spec.activations[k % spec.activations.size()]) return true;
  for (const char* alternative : spec.alternatives)
    if (name == alternative) return true;
  return false;
}

// What the op supports, for the message of an unsupported activation.
std::string supported_activations(const RecurrentRuleSpec& spec) {
  if (spec.alternatives.empty()) return "only " + join_names(spec.activations) + " per direction is supported";
  std::vector<const char*> all = spec.activations;
  all.insert(all.end(), spec.alternatives.begin(), spec.alternatives.end());
  return "supported are " + join_names(all);
}

// Accepts the op's default activations (or its alternatives), repeated once per direction.
void check_activations(const InferContext& ctx, const RecurrentRuleSpec& spec, int directions) {
  if (!ctx.has_attr("activations")) return;
  std::vector<std::string> names = split_names(ctx.attr_string("activations"));
  const std::size_t per_direction = spec.activations.size();
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (!accepts_activation(spec, names[k], k)) {
      ctx.fail(ErrorKind::Model, "unsupported activation '" + names[k] + "' at position " + std::to_string(k) +
                                     " of attribute 'activations'; " + supported_activations(spec));
    }
  }
  if (names.size() != per_direction * static_cast<std::size_t>(directions)) {
    ctx.fail(ErrorKind::Model, "attribute 'activations' lists " + std::to_string(names.size()) + " functions, expected " +
                                   std::to_string(per_direction * static_cast<std::size_t>(directions)));
  }
}

// Checks the scalar attributes: hidden_size, layout, the op's 0/1 flags and clip.
void check_attributes(const InferContext& ctx, const RecurrentRuleSpec& spec) {
  std::int64_t hidden = ctx.attr_int("hidden_size");
  if (hidden < 1) {
    ctx.fail(ErrorKind::Model, "attribute 'hidden_size' is " + std::to_string(hidden) + ", expected >= 1");
  }
  std::int64_t layout = ctx.attr_int("layout");
  if (layout != 0 && layout != 1) {
    ctx.fail(ErrorKind::Model, "attribute 'layout' is " + std::to_string(layout) + ", expected 0 or 1");
  }
  for (const char* flag : spec.binary_flags) {
    std::int64_t value = ctx.attr_int(flag);
    if (value != 0 && value != 1) {
      ctx.fail(ErrorKind::Model,
               "attribute '" + std::string(flag) + "' is " + std::to_string(value) + ", expected 0 or 1");
    }
  }
  if (ctx.has_attr("clip") && !(ctx.attr_float("clip") > 0.0)) ctx.fail(ErrorKind::Model, "attribute 'clip' must be > 0");
}

// Checks the dtypes of X, the float inputs and sequence_lens.
void check_dtypes(InferContext& ctx, const RecurrentRuleSpec& spec) {
  ctx.expect_dtype(0, {DType::F32, DType::F64});
  DType dtype = ctx.input_type(0).dtype;
  for (int i : spec.float_inputs)
    if (ctx.has_input(i)) ctx.expect_dtype(i, {dtype});
  if (ctx.has_input(4)) ctx.expect_dtype(4, {DType::I32, DType::I64});
}

}  // namespace

// Checks one recurrent input's full shape against the expected dims (absent inputs pass).
void check_recurrent_shape(InferContext& ctx, int i, const DimVector& expected, const char* what) {
  if (!ctx.has_input(i)) return;
  ctx.expect_rank(i, static_cast<int>(expected.size()));
  const DimVector& got = ctx.input_type(i).shape;
  for (std::size_t k = 0; k < expected.size(); ++k) {
    ctx.assert_equal(got[k], expected[k], ctx.describe_input(i) + " (" + what + ") dim " + std::to_string(k));
  }
}

// Runs the checks every recurrent op shares, through initial_h, and returns the derived dims.
RecurrentFrame infer_recurrent_frame(InferContext& ctx, const RecurrentRuleSpec& spec) {
  check_dtypes(ctx, spec);
  check_attributes(ctx, spec);
  RecurrentFrame f;
  f.dtype = ctx.input_type(0).dtype;
  f.hidden = ctx.attr_int("hidden_size");
  f.layout = ctx.attr_int("layout");
  int directions = recurrent_directions(ctx);
  check_activations(ctx, spec, directions);
  ctx.expect_rank(0, 3);
  const DimVector& x = ctx.input_type(0).shape;
  f.t = f.layout == 0 ? x[0] : x[1];
  f.b = f.layout == 0 ? x[1] : x[0];
  std::int64_t bias_length = 0;
  if (__builtin_mul_overflow(f.hidden, spec.bias_gates, &bias_length)) {
    ctx.fail(ErrorKind::Shape, "attribute 'hidden_size' is " + std::to_string(f.hidden) + ": " +
                                   std::to_string(spec.bias_gates) + " * hidden_size (the bias length) overflows int64");
  }
  f.d = Dim(directions);
  f.h = Dim(f.hidden);
  check_recurrent_shape(ctx, 1, {f.d, Dim(spec.gates * f.hidden), x[2]}, "W");
  check_recurrent_shape(ctx, 2, {f.d, Dim(spec.gates * f.hidden), f.h}, "R");
  check_recurrent_shape(ctx, 3, {f.d, Dim(bias_length)}, "B");
  check_recurrent_shape(ctx, 4, {f.b}, "sequence_lens");
  f.state = f.layout == 0 ? DimVector{f.d, f.b, f.h} : DimVector{f.b, f.d, f.h};
  check_recurrent_shape(ctx, 5, f.state, "initial_h");
  return f;
}

// Sets Y (output 0) and the final-state outputs 1..state_outputs from the frame.
void set_recurrent_outputs(InferContext& ctx, const RecurrentFrame& f, int state_outputs) {
  const DimVector y = f.layout == 0 ? DimVector{f.t, f.d, f.b, f.h} : DimVector{f.b, f.t, f.d, f.h};
  ctx.set_output(0, ValueType{f.dtype, y});
  for (int i = 1; i <= state_outputs; ++i) ctx.set_output(i, ValueType{f.dtype, f.state});
}

}  // namespace canary::graph::rules
