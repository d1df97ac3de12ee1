// Small-map convolutions as one product of gathered patches (see conv_patches.h).
#include "kernels/onednn/conv_patches.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "kernels/onednn/engine.h"
#include "kernels/onednn/epilogue.h"
#include "kernels/onednn/plain_layout.h"
#include "kernels/onednn/rows_class.h"
#include "kernels/onednn/scratch_buffer.h"
#include "kernels/onednn/weight_copies.h"

namespace canary::kernels::onednn {
namespace {

constexpr std::int64_t kMaxOutputPoints = 16;
constexpr std::int64_t kMinWeightBytes = std::int64_t{4} << 20;
// Marks the patch product's keys apart from the convolution primitives'.
constexpr std::int64_t kPatchProductKey = -11;

// A convolution's dims as the gather reads them. The patch columns run over
// (c, i, j) for channels-first input, matching the weights' own order, and
// over (i, j, c) for channels-last input, where each tap copies C
// contiguous values.
struct PatchGeometry {
  std::int64_t n, c, h, w, m, kh, kw, oh, ow;
  std::int64_t sh, sw, dh, dw, ph, pw;
  bool channels_last;

  explicit PatchGeometry(const BlockedConvShape& s)
      : n(s.src[0]), c(s.src[1]), h(s.src[2]), w(s.src[3]), m(s.weights[0]), kh(s.weights[2]), kw(s.weights[3]),
        oh(s.dst[2]), ow(s.dst[3]), sh(s.strides[0]), sw(s.strides[1]), dh(s.dilations[0] + 1),
        dw(s.dilations[1] + 1), ph(s.pad_l[0]), pw(s.pad_l[1]), channels_last(s.channels_last) {}
  std::int64_t columns() const { return c * kh * kw; }
  std::int64_t points() const { return oh * ow; }
  std::int64_t rows() const { return n * points(); }
};

struct PatchScratch {
  UninitializedBytes patches, product;
};

PatchScratch& thread_patch_scratch() {
  thread_local PatchScratch scratch;
  return scratch;
}

// The weights [M, C, kh, kw] laid out as the product's [columns, M] matrix:
// column-major in M, with the columns in the gather's order.
dnnl::memory::desc transposed_weights_desc(const PatchGeometry& g) {
  const dnnl::memory::dims dims{g.m, g.c, g.kh, g.kw};
  const dnnl::memory::dims strides = g.channels_last
                                         ? dnnl::memory::dims{1, g.m, g.kw * g.c * g.m, g.c * g.m}
                                         : dnnl::memory::dims{1, g.kh * g.kw * g.m, g.kw * g.m, g.m};
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

// Patch rows of channels-last x [N, H, W, C]: one contiguous run of C per tap.
void gather_channels_last(const PatchGeometry& g, const float* x, float* a) {
  const std::size_t run = static_cast<std::size_t>(g.c) * sizeof(float);
  for (std::int64_t n = 0; n < g.n; ++n)
    for (std::int64_t oy = 0; oy < g.oh; ++oy)
      for (std::int64_t ox = 0; ox < g.ow; ++ox) {
        float* row = a + ((n * g.oh + oy) * g.ow + ox) * g.columns();
        for (std::int64_t i = 0; i < g.kh; ++i) {
          const std::int64_t iy = oy * g.sh - g.ph + i * g.dh;
          for (std::int64_t j = 0; j < g.kw; ++j) {
            const std::int64_t ix = ox * g.sw - g.pw + j * g.dw;
            float* tap = row + (i * g.kw + j) * g.c;
            if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) std::memset(tap, 0, run);
            else std::memcpy(tap, x + ((n * g.h + iy) * g.w + ix) * g.c, run);
          }
        }
      }
}

// Patch rows of channels-first x [N, C, H, W].
void gather_channels_first(const PatchGeometry& g, const float* x, float* a) {
  for (std::int64_t n = 0; n < g.n; ++n)
    for (std::int64_t oy = 0; oy < g.oh; ++oy)
      for (std::int64_t ox = 0; ox < g.ow; ++ox) {
        float* row = a + ((n * g.oh + oy) * g.ow + ox) * g.columns();
        for (std::int64_t ch = 0; ch < g.c; ++ch) {
          const float* plane = x + (n * g.c + ch) * g.h * g.w;
          for (std::int64_t i = 0; i < g.kh; ++i) {
            const std::int64_t iy = oy * g.sh - g.ph + i * g.dh;
            const bool row_inside = iy >= 0 && iy < g.h;
            for (std::int64_t j = 0; j < g.kw; ++j) {
              const std::int64_t ix = ox * g.sw - g.pw + j * g.dw;
              *row++ = row_inside && ix >= 0 && ix < g.w ? plane[iy * g.w + ix] : 0.0f;
            }
          }
        }
      }
}

// The product [N*P, M] written back as channels-first y [N, M, P].
void scatter_channels_first(const PatchGeometry& g, const float* product, float* y) {
  const std::int64_t points = g.points();
  for (std::int64_t n = 0; n < g.n; ++n)
    for (std::int64_t p = 0; p < points; ++p) {
      const float* from = product + (n * points + p) * g.m;
      float* to = y + n * g.m * points + p;
      for (std::int64_t o = 0; o < g.m; ++o) to[o * points] = from[o];
    }
}

// The shape class's key: columns, output channels, the column order, the bias and the epilogue.
PrimitiveKey patch_product_key(const PatchGeometry& g, bool has_bias, const Epilogue& epilogue) {
  PrimitiveKey key(PrimitiveKind::Conv);
  for (std::int64_t v : {kPatchProductKey, g.columns(), g.m, std::int64_t(g.channels_last), std::int64_t(has_bias)})
    key.push(v);
  push_epilogue(key, epilogue);
  return key;
}

// [rows, columns] x [columns, M] (+ a bias row), the epilogue as post-ops,
// with the row count bound per call.
RowsClassPrimitive make_patch_product(const PatchGeometry& g, bool has_bias, const Epilogue& epilogue) {
  const dnnl::memory::data_type f32 = dnnl::memory::data_type::f32;
  const std::int64_t k = g.columns();
  std::vector<RowsArgument> args{{DNNL_ARG_SRC, {1, k}, {k, 1}, f32, true},
                                 {DNNL_ARG_WEIGHTS, {k, g.m}, {g.m, 1}, f32, false},
                                 {DNNL_ARG_DST, {1, g.m}, {g.m, 1}, f32, true}};
  dnnl::post_ops ops;
  if (has_bias) {
    args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, {1, g.m}, {g.m, 1}, f32, false});
    ops.append_binary(dnnl::algorithm::binary_add, args.back().class_desc());
  }
  append_epilogue(ops, epilogue);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  const dnnl::matmul::primitive_desc pd(
      dnnl::matmul::desc(args[0].class_desc(), args[1].class_desc(), args[2].class_desc()), attr, cpu_engine());
  return RowsClassPrimitive(dnnl::matmul(pd), std::move(args));
}

}  // namespace

bool patch_product_suits(const BlockedConvShape& s) {
  if (s.src.size() != 4 || s.weights.size() != 4) return false;  // 2-D, one group
  const std::int64_t points = s.dst[2] * s.dst[3];
  std::int64_t weight_bytes = static_cast<std::int64_t>(sizeof(float));
  for (std::int64_t d : s.weights) weight_bytes *= d;
  return points <= kMaxOutputPoints && weight_bytes >= kMinWeightBytes;
}

bool patch_product_conv(const BlockedConvShape& s, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y,
                        bool weights_are_constant) {
  if (!s.operands_finite || !weights_are_constant || !w.owns_storage() || !patch_product_suits(s)) return false;
  const PatchGeometry g(s);
  const PrimitiveKey key = patch_product_key(g, b != nullptr, s.epilogue);
  if (!key.valid()) return false;
  const dnnl::memory& weights =
      thread_weight_copies().copy_of(w, row_major_desc(s.weights), transposed_weights_desc(g));

  PatchScratch& scratch = thread_patch_scratch();
  const auto floats = [](std::int64_t n) { return static_cast<std::size_t>(n) * sizeof(float); };
  auto* patches = static_cast<float*>(scratch.patches.reserve(floats(g.rows() * g.columns())));
  if (g.channels_last) gather_channels_last(g, x.data<float>(), patches);
  else gather_channels_first(g, x.data<float>(), patches);

  if (s.channels_last) y.reset(DType::F32, channels_last_dims(s.dst));
  else y.reset(DType::F32, std::span<const std::int64_t>(s.dst.data(), s.dst.size()));
  float* product = g.channels_last ? y.data<float>()
                                   : static_cast<float*>(scratch.product.reserve(floats(g.rows() * g.m)));
  const std::array<const void*, 4> buffers{patches, weights.get_data_handle(), product, b ? b->raw() : nullptr};
  const bool ran = thread_rows_classes().try_run(key, g.rows(), std::span<const void* const>(buffers.data(), b ? 4 : 3),
                                                 [&] { return make_patch_product(g, b != nullptr, s.epilogue); });
  if (ran && !g.channels_last) scatter_channels_first(g, product, y.data<float>());
  return ran;
}

}  // namespace canary::kernels::onednn
