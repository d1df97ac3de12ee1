// Shape rule of BatchNormalization in its inference form: per-channel
// parameters of length C, one output shaped like X; training mode rejected.
#include "graph/shape_rules.h"

namespace canary::graph::rules {

// BatchNormalization: X [N, C, ...], scale/B/input_mean/input_var [C] → Y like X.
void infer_batch_norm(InferContext& ctx) {
  if (ctx.attr_int("training_mode") != 0) {
    ctx.fail(ErrorKind::Model, "attribute 'training_mode' is " + std::to_string(ctx.attr_int("training_mode")) +
                                   ", only inference (0) is supported");
  }
  if (ctx.has_output(1) || ctx.has_output(2)) {
    ctx.fail(ErrorKind::Model, "outputs running_mean and running_var are not supported (inference form has only Y)");
  }
  ctx.expect_dtype(0, {DType::F32, DType::F64});
  const ValueType& x = ctx.input_type(0);
  if (x.rank() < 2) {
    ctx.fail(ErrorKind::Shape, ctx.describe_input(0) + " expected rank >= 2 [N, C, ...], got " + x.to_string());
  }
  static const char* const kNames[5] = {"X", "scale", "B", "input_mean", "input_var"};
  for (int i = 1; i < 5; ++i) {
    ctx.expect_dtype(i, {x.dtype});
    ctx.expect_rank(i, 1);
    ctx.assert_equal(ctx.input_type(i).shape[0], x.shape[1],
                     ctx.describe_input(i) + " (" + kNames[i] + ") length vs channels of X");
  }
  ctx.set_output(0, ValueType{x.dtype, x.shape});
}

}  // namespace canary::graph::rules
