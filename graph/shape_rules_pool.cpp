// Shape rules of MaxPool, AveragePool and GlobalAveragePool: attribute checks
// and the ONNX pooling output length (floor or ceil mode) as symbolic dims.
#include "graph/shape_rules.h"

namespace canary::graph::rules {
namespace {

// Pooling geometry attributes, filled with defaults and checked.
struct PoolAttrs {
  std::vector<std::int64_t> kernel, strides, dilations, pads;
  std::string auto_pad;
  bool ceil_mode = false;
};

// The dilated kernel extent dilation * (kernel - 1) + 1 of axis s, or Error(Shape) on int64 overflow.
std::int64_t kernel_span(const InferContext& ctx, const PoolAttrs& p, std::size_t s) {
  std::int64_t span = 0;
  if (__builtin_mul_overflow(p.dilations[s], p.kernel[s] - 1, &span) || __builtin_add_overflow(span, 1, &span)) {
    ctx.fail(ErrorKind::Shape, "kernel span dilation " + std::to_string(p.dilations[s]) + " * (kernel " +
                                   std::to_string(p.kernel[s]) + " - 1) + 1 on spatial axis " + std::to_string(s) +
                                   " overflows int64");
  }
  return span;
}

// Checks one axis: kernel, stride, dilation >= 1, pads >= 0 and below the kernel's span.
void check_axis(const InferContext& ctx, const PoolAttrs& p, std::size_t s, std::size_t spatial) {
  if (p.kernel[s] < 1 || p.strides[s] < 1 || p.dilations[s] < 1) {
    ctx.fail(ErrorKind::Model, "kernel_shape, strides and dilations must be >= 1, got kernel " +
                                   std::to_string(p.kernel[s]) + ", stride " + std::to_string(p.strides[s]) +
                                   ", dilation " + std::to_string(p.dilations[s]) + " on spatial axis " +
                                   std::to_string(s));
  }
  const std::int64_t span = kernel_span(ctx, p, s);
  const std::int64_t begin = p.pads[s], end = p.pads[s + spatial];
  if (begin < 0 || end < 0 || begin >= span || end >= span) {
    ctx.fail(ErrorKind::Model, "pads " + std::to_string(begin) + " and " + std::to_string(end) + " on spatial axis " +
                                   std::to_string(s) + " must be >= 0 and smaller than the kernel span " +
                                   std::to_string(span));
  }
}

// Reads and checks the pooling attributes for `spatial` axes.
PoolAttrs read_pool_attrs(const InferContext& ctx, std::size_t spatial) {
  PoolAttrs p{ctx.attr_ints("kernel_shape"), ints_or(ctx, "strides", spatial, 1), ints_or(ctx, "dilations", spatial, 1),
              ints_or(ctx, "pads", 2 * spatial, 0), ctx.attr_string("auto_pad"), false};
  if (p.kernel.size() != spatial) {
    ctx.fail(ErrorKind::Model, "attribute 'kernel_shape' has " + std::to_string(p.kernel.size()) +
                                   " values, expected " + std::to_string(spatial) + " for input " +
                                   ctx.input_type(0).to_string());
  }
  if (p.auto_pad != "NOTSET" && p.auto_pad != "SAME_UPPER" && p.auto_pad != "SAME_LOWER" && p.auto_pad != "VALID") {
    ctx.fail(ErrorKind::Model,
             "attribute 'auto_pad' is '" + p.auto_pad + "', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  }
  if (p.auto_pad != "NOTSET") p.pads.assign(2 * spatial, 0);  // explicit pads only apply under NOTSET
  std::int64_t ceil_mode = ctx.attr_int("ceil_mode");
  if (ceil_mode != 0 && ceil_mode != 1) {
    ctx.fail(ErrorKind::Model, "attribute 'ceil_mode' is " + std::to_string(ceil_mode) + ", expected 0 or 1");
  }
  p.ceil_mode = ceil_mode == 1;
  for (std::size_t s = 0; s < spatial; ++s) check_axis(ctx, p, s, spatial);
  return p;
}

// The output length of one pooling axis: ceil(in / stride) under SAME;
// otherwise (in + pads - span) / stride + 1 rounded down, or up in ceil mode
// where a last window starting in the end padding is dropped.
Dim pool_output_dim(const InferContext& ctx, const PoolAttrs& p, const Dim& in, std::size_t s) {
  const std::int64_t stride = p.strides[s];
  if (p.auto_pad == "SAME_UPPER" || p.auto_pad == "SAME_LOWER") return ceil_div(in, Dim(stride));
  const std::size_t spatial = p.kernel.size();
  const std::int64_t span = kernel_span(ctx, p, s);
  const std::int64_t begin = p.pads[s], end = p.pads[s + spatial];
  const Dim room = in + Dim(begin - span + end);  // 0 <= begin, end < span: no overflow
  if (room.is_constant() && room.value() < 0) {
    ctx.fail(ErrorKind::Shape, "spatial axis " + std::to_string(s) + " of length " + in.to_string() + " plus pads " +
                                   std::to_string(begin) + "+" + std::to_string(end) +
                                   " is shorter than the kernel span " + std::to_string(span));
  }
  if (!p.ceil_mode) return floor_div(room, Dim(stride)) + Dim(1);
  Dim out = ceil_div(room, Dim(stride)) + Dim(1);
  // A window can start in the end padding only when stride > span - end pad.
  if (stride > span - end) out = min(out, floor_div(in + Dim(begin - 1), Dim(stride)) + Dim(1));
  return out;
}

}  // namespace

// MaxPool / AveragePool: [N, C, spatial...] with 1 or 2 spatial axes → [N, C, out...].
void infer_pool(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::F32, DType::F64});
  const ValueType& x = ctx.input_type(0);
  if (x.rank() != 3 && x.rank() != 4) {
    ctx.fail(ErrorKind::Shape, ctx.describe_input(0) + " expected rank 3 or 4 (1-D or 2-D pooling), got " +
                                   x.to_string());
  }
  if (ctx.node().op == OpKind::MaxPool) {
    if (ctx.has_output(1)) ctx.fail(ErrorKind::Model, "output 1 (Indices) is not supported");
    if (ctx.attr_int("storage_order") != 0) {
      ctx.fail(ErrorKind::Model, "attribute 'storage_order' is " + std::to_string(ctx.attr_int("storage_order")) +
                                     ", only 0 is supported");
    }
  }
  const std::size_t spatial = static_cast<std::size_t>(x.rank() - 2);
  PoolAttrs p = read_pool_attrs(ctx, spatial);
  // channels_last: x and y are [N, spatial..., C].
  const bool channels_last = ctx.attr_int("channels_last") != 0;
  const DimVector in = channels_last ? channels_first(x.shape) : x.shape;
  DimVector out{in[0], in[1]};
  for (std::size_t s = 0; s < spatial; ++s) out.push_back(pool_output_dim(ctx, p, in[s + 2], s));
  ctx.set_output(0, ValueType{x.dtype, channels_last ? channels_last_of(out) : out});
}

// GlobalAveragePool: [N, C, spatial...] (rank >= 3) → [N, C, 1, ...].
void infer_global_pool(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::F32, DType::F64});
  const ValueType& x = ctx.input_type(0);
  if (x.rank() < 3) {
    ctx.fail(ErrorKind::Shape, ctx.describe_input(0) + " expected rank >= 3 [N, C, spatial...], got " + x.to_string());
  }
  DimVector out(x.shape.size(), Dim(1));
  out[0] = x.shape[0];
  out[1] = x.shape[1];
  ctx.set_output(0, ValueType{x.dtype, out});
}

}  // namespace canary::graph::rules
