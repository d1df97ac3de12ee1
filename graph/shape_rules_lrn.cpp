// Shape rule of LRN (local response normalisation across channels): a float
// X of rank >= 3 and a window of at least one channel; Y is shaped like X.
#include "graph/shape_rules.h"

namespace canary::graph::rules {

// LRN: X [N, C, spatial...] -> Y like X.
void infer_lrn(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::F32, DType::F64});
  const ValueType& x = ctx.input_type(0);
  if (x.rank() < 3) {
    ctx.fail(ErrorKind::Shape, ctx.describe_input(0) + " expected rank >= 3 [N, C, spatial...], got " + x.to_string());
  }
  const std::int64_t size = ctx.attr_int("size");
  if (size < 1) ctx.fail(ErrorKind::Model, "attribute 'size' is " + std::to_string(size) + ", expected >= 1");
  ctx.set_output(0, ValueType{x.dtype, x.shape});
}

}  // namespace canary::graph::rules
