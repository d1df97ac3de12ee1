// Shape rules of MatMul, Gemm, Conv and ConvTranspose: inner-dim equalities, batch
// broadcasting and convolution output lengths as symbolic expressions.
#include "graph/shape_rules.h"

namespace canary::graph::rules {
namespace {

constexpr std::initializer_list<DType> kNumeric = {DType::F32, DType::F64, DType::I64, DType::I32};

// Requires input i to share input 0's dtype.
void expect_dtype_of_first(const InferContext& ctx, int i) {
  DType want = ctx.input_type(0).dtype;
  DType got = ctx.input_type(i).dtype;
  if (got != want) {
    ctx.fail(ErrorKind::Model, ctx.describe_input(i) + " has dtype " + std::string(dtype_name(got)) + ", expected " +
                                   std::string(dtype_name(want)));
  }
}

// Requires a rank of at least `rank`.
void expect_min_rank(const InferContext& ctx, int i, int rank) {
  const ValueType& t = ctx.input_type(i);
  if (t.rank() < rank) {
    ctx.fail(ErrorKind::Shape, ctx.describe_input(i) + " expected rank >= " + std::to_string(rank) + ", got " +
                                   t.to_string());
  }
}

// The output length of one convolution axis.
Dim conv_output_dim(const std::string& auto_pad, const Dim& in, const Dim& k, std::int64_t stride,
                    std::int64_t dilation, std::int64_t pad_begin, std::int64_t pad_end) {
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return ceil_div(in, Dim(stride));
  Dim span = Dim(dilation) * (k - Dim(1)) + Dim(1);
  if (auto_pad == "VALID") return floor_div(in - span, Dim(stride)) + Dim(1);
  return floor_div(in + Dim(pad_begin + pad_end) - span, Dim(stride)) + Dim(1);
}

// Checks Conv's channel counts: C == group * W[1], M divisible by group.
void check_conv_channels(InferContext& ctx, const DimVector& x, const DimVector& w, std::int64_t group) {
  if (group < 1) ctx.fail(ErrorKind::Model, "attribute 'group' is " + std::to_string(group) + ", expected >= 1");
  Dim expected_c = Dim(group) * w[1];
  if (x[1].is_constant() && expected_c.is_constant() && x[1].value() != expected_c.value()) {
    ctx.fail(ErrorKind::Shape, ctx.describe_input(0) + " has " + x[1].to_string() + " channels, expected group (" +
                                   std::to_string(group) + ") * " + ctx.describe_input(1) + " dim 1 (" +
                                   w[1].to_string() + ") = " + expected_c.to_string());
  }
  ctx.assert_equal(x[1], expected_c, "input channels vs group * weight dim 1");
  if (w[0].is_constant() && w[0].value() % group != 0) {
    ctx.fail(ErrorKind::Shape, "output channels " + w[0].to_string() + " are not divisible by group " +
                                   std::to_string(group));
  }
}

// Conv's geometry attributes, filled with defaults and checked.
struct ConvParams {
  std::vector<std::int64_t> kernel, strides, dilations, pads;
  std::string auto_pad;
};

// Reads and checks Conv's geometry attributes for `spatial` axes.
ConvParams read_conv_params(const InferContext& ctx, std::size_t spatial) {
  ConvParams p{ints_or(ctx, "kernel_shape", spatial, -1), ints_or(ctx, "strides", spatial, 1),
               ints_or(ctx, "dilations", spatial, 1), ints_or(ctx, "pads", 2 * spatial, 0),
               ctx.attr_string("auto_pad")};
  if (p.auto_pad != "NOTSET" && p.auto_pad != "SAME_UPPER" && p.auto_pad != "SAME_LOWER" && p.auto_pad != "VALID") {
    ctx.fail(ErrorKind::Model,
             "attribute 'auto_pad' is '" + p.auto_pad + "', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  }
  for (std::size_t s = 0; s < spatial; ++s) {
    if (p.strides[s] < 1 || p.dilations[s] < 1 || p.pads[s] < 0 || p.pads[s + spatial] < 0) {
      ctx.fail(ErrorKind::Model, "strides and dilations must be >= 1 and pads >= 0");
    }
    std::int64_t pad_sum = 0;
    if (p.auto_pad == "NOTSET" && __builtin_add_overflow(p.pads[s], p.pads[s + spatial], &pad_sum)) {
      ctx.fail(ErrorKind::Shape, "attribute 'pads' holds " + std::to_string(p.pads[s]) + " and " +
                                     std::to_string(p.pads[s + spatial]) + " on spatial axis " + std::to_string(s) +
                                     ": their sum overflows int64");
    }
  }
  return p;
}

}  // namespace

// MatMul: NumPy matmul semantics with 1-D promotion; records K1 == K2.
void infer_matmul(InferContext& ctx) {
  ctx.expect_dtype(0, kNumeric);
  expect_dtype_of_first(ctx, 1);
  expect_min_rank(ctx, 0, 1);
  expect_min_rank(ctx, 1, 1);
  DimVector a = ctx.input_type(0).shape;
  DimVector b = ctx.input_type(1).shape;
  bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), Dim(1));
  if (b_vector) b.push_back(Dim(1));
  ctx.assert_equal(a.back(), b[b.size() - 2], "inner dims of MatMul");
  DimVector batch = ctx.broadcast(DimVector(a.begin(), a.end() - 2), DimVector(b.begin(), b.end() - 2));
  if (!a_vector) batch.push_back(a[a.size() - 2]);
  if (!b_vector) batch.push_back(b.back());
  ctx.set_output(0, ValueType{ctx.input_type(0).dtype, batch});
}

// Gemm: 2-D A and B (optionally transposed), C broadcast to [M, N].
void infer_gemm(InferContext& ctx) {
  ctx.expect_dtype(0, kNumeric);
  expect_dtype_of_first(ctx, 1);
  ctx.expect_rank(0, 2);
  ctx.expect_rank(1, 2);
  const DimVector& a = ctx.input_type(0).shape;
  const DimVector& b = ctx.input_type(1).shape;
  bool ta = ctx.attr_int("transA") != 0, tb = ctx.attr_int("transB") != 0;
  Dim m = ta ? a[1] : a[0], k1 = ta ? a[0] : a[1];
  Dim k2 = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
  ctx.assert_equal(k1, k2, "inner dims of Gemm");
  DimVector out{m, n};
  if (ctx.has_input(2)) {
    expect_dtype_of_first(ctx, 2);
    DimVector c = ctx.broadcast(ctx.input_type(2).shape, out);
    if (c.size() != 2) ctx.fail(ErrorKind::Shape, ctx.describe_input(2) + " has rank > 2");
    out = c;
  }
  ctx.set_output(0, ValueType{ctx.input_type(0).dtype, out});
}

// Conv: 1-D or 2-D, [N, C, spatial...] * [M, C/group, k...] → [N, M, out...].
void infer_conv(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::F32, DType::F64});
  expect_dtype_of_first(ctx, 1);
  expect_min_rank(ctx, 0, 3);
  // channels_last: x and y are [N, spatial..., C]; the rule works on [N, C, spatial...].
  const bool channels_last = ctx.attr_int("channels_last") != 0;
  const DimVector x = channels_last ? channels_first(ctx.input_type(0).shape) : ctx.input_type(0).shape;
  const DimVector& w = ctx.input_type(1).shape;
  int spatial = static_cast<int>(x.size()) - 2;
  if (spatial > 2) {
    ctx.fail(ErrorKind::Model, "only 1-D and 2-D convolution is supported, got " + std::to_string(spatial) +
                                   "-D input " + ctx.input_type(0).to_string());
  }
  ctx.expect_rank(1, spatial + 2);
  ConvParams p = read_conv_params(ctx, static_cast<std::size_t>(spatial));
  check_conv_channels(ctx, x, w, ctx.attr_int("group"));
  DimVector out{x[0], w[0]};
  for (std::size_t s = 0; s < p.strides.size(); ++s) {
    Dim k = w[s + 2];
    if (p.kernel[s] >= 0) {
      ctx.assert_equal(k, Dim(p.kernel[s]), "kernel_shape vs weight dims");
      k = Dim(p.kernel[s]);
    }
    out.push_back(conv_output_dim(p.auto_pad, x[s + 2], k, p.strides[s], p.dilations[s], p.pads[s],
                                  p.pads[s + p.strides.size()]));
  }
  if (ctx.has_input(2)) {
    expect_dtype_of_first(ctx, 2);
    ctx.expect_rank(2, 1);
    ctx.assert_equal(ctx.input_type(2).shape[0], w[0], "bias length vs output channels");
  }
  ctx.set_output(0, ValueType{ctx.input_type(0).dtype, channels_last ? channels_last_of(out) : out});
}

// ConvTranspose: 1-D to 3-D, [N, C, spatial...] * [C, M/group, k...] ->
// [N, M, out...], out = stride * (in - 1) + output_padding + (k - 1) *
// dilation + 1 - pads, or output_shape when given, or in * stride under
// auto_pad SAME_* (kernels/conv_transpose_geometry.h).
void infer_conv_transpose(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::F32, DType::F64});
  expect_dtype_of_first(ctx, 1);
  expect_min_rank(ctx, 0, 3);
  const DimVector& x = ctx.input_type(0).shape;
  const DimVector& w = ctx.input_type(1).shape;
  const int spatial = static_cast<int>(x.size()) - 2;
  if (spatial > 3) {
    ctx.fail(ErrorKind::Model, "only 1-D to 3-D transposed convolution is supported, got " +
                                   std::to_string(spatial) + "-D input " + ctx.input_type(0).to_string());
  }
  ctx.expect_rank(1, spatial + 2);
  const std::size_t n = static_cast<std::size_t>(spatial);
  ConvParams p = read_conv_params(ctx, n);
  const std::vector<std::int64_t> output_padding = ints_or(ctx, "output_padding", n, 0);
  const std::vector<std::int64_t> output_shape = ints_or(ctx, "output_shape", n, -1);
  const std::int64_t group = ctx.attr_int("group");
  if (group < 1) ctx.fail(ErrorKind::Model, "attribute 'group' is " + std::to_string(group) + ", expected >= 1");
  ctx.assert_equal(x[1], w[0], "input channels vs weight dim 0");
  if (w[0].is_constant() && w[0].value() % group != 0) {
    ctx.fail(ErrorKind::Shape, "input channels " + w[0].to_string() + " are not divisible by group " +
                                   std::to_string(group));
  }
  const Dim out_channels = w[1] * Dim(group);
  DimVector out{x[0], out_channels};
  const bool same = p.auto_pad == "SAME_UPPER" || p.auto_pad == "SAME_LOWER";
  for (std::size_t s = 0; s < n; ++s) {
    if (output_padding[s] < 0) ctx.fail(ErrorKind::Model, "attribute 'output_padding' must be >= 0");
    Dim k = w[s + 2];
    if (p.kernel[s] >= 0) {
      ctx.assert_equal(k, Dim(p.kernel[s]), "kernel_shape vs weight dims");
      k = Dim(p.kernel[s]);
    }
    if (ctx.has_attr("output_shape")) {
      if (output_shape[s] < 1) ctx.fail(ErrorKind::Model, "attribute 'output_shape' must hold lengths >= 1");
      out.push_back(Dim(output_shape[s]));
    } else if (same) {
      out.push_back(x[s + 2] * Dim(p.strides[s]));
    } else {
      const std::int64_t pads = p.auto_pad == "VALID" ? 0 : p.pads[s] + p.pads[s + n];  // checked
      std::int64_t offset = 0;
      if (__builtin_add_overflow(output_padding[s], 1, &offset) || __builtin_sub_overflow(offset, pads, &offset))
        ctx.fail(ErrorKind::Shape, "output_padding and pads overflow int64 on spatial axis " + std::to_string(s));
      out.push_back(Dim(p.strides[s]) * (x[s + 2] - Dim(1)) + Dim(p.dilations[s]) * (k - Dim(1)) + Dim(offset));
    }
  }
  if (ctx.has_input(2)) {
    expect_dtype_of_first(ctx, 2);
    ctx.expect_rank(2, 1);
    ctx.assert_equal(ctx.input_type(2).shape[0], out_channels, "bias length vs output channels");
  }
  ctx.set_output(0, ValueType{ctx.input_type(0).dtype, out});
}

DimVector channels_first(const DimVector& d) {
  if (d.size() < 2) return d;
  DimVector out{d.front(), d.back()};
  out.insert(out.end(), d.begin() + 1, d.end() - 1);
  return out;
}

DimVector channels_last_of(const DimVector& d) {
  if (d.size() < 2) return d;
  DimVector out{d.front()};
  out.insert(out.end(), d.begin() + 2, d.end());
  out.push_back(d[1]);
  return out;
}

// An ints attribute of a given length, or `fill` repeated when absent.
std::vector<std::int64_t> ints_or(const InferContext& ctx, std::string_view name, std::size_t length,
                                  std::int64_t fill) {
  if (!ctx.has_attr(name)) return std::vector<std::int64_t>(length, fill);
  std::vector<std::int64_t> v = ctx.attr_ints(name);
  if (v.size() != length) {
    ctx.fail(ErrorKind::Model, "attribute '" + std::string(name) + "' has " + std::to_string(v.size()) +
                                   " values, expected " + std::to_string(length));
  }
  return v;
}

}  // namespace canary::graph::rules
