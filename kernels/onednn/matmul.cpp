// oneDNN MatMul (NumPy semantics, batch broadcasting) and Gemm (ONNX) for f32.
//
// MatMul pads both operands to one rank (1-D operands become [1, K] / [K, 1],
// missing batch dims become 1) and relies on oneDNN matmul broadcasting size-1
// batch dims. Gemm expresses transposes as strides, alpha as an output scale
// and beta * C as a broadcast binary-add post-op (followed by a linear eltwise
// when beta != 1). An epilogue (EpilogueOp) follows as eltwise post-ops and
// is part of the cache key. Shapes are checked without throwing: anything the
// reference kernel would reject returns false so its error message is kept.
// Under BF16 precision (kernels/onednn/precision.h) A and B are read from
// rounded copies; C, alpha and beta stay f32.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/onednn.h"
#include "kernels/onednn/bf16_operands.h"
#include "kernels/onednn/engine.h"
#include "kernels/onednn/epilogue.h"
#include "kernels/onednn/plain_layout.h"
#include "kernels/onednn/primitive_cache.h"
#include "kernels/onednn/rows_class.h"
#include "kernels/onednn/threading.h"

namespace canary::kernels {
namespace {

using onednn::CachedPrimitive;
using onednn::OperandEncoding;
using onednn::OperandSlot;
using onednn::PrimitiveKey;
using onednn::PrimitiveKind;
using onednn::RowsArgument;
using onednn::RowsClassPrimitive;

constexpr std::size_t kMaxRank = DNNL_MAX_NDIMS;
using Dims = std::array<std::int64_t, kMaxRank>;

// A matmul with both operands padded to `rank` dims, and the NumPy output shape.
struct MatmulPlan {
  std::size_t rank = 0;
  Dims a{}, b{}, y{};
  Dims out{};
  std::size_t out_rank = 0;
  std::int64_t k = 0;

  std::span<const std::int64_t> a_dims() const { return {a.data(), rank}; }
  std::span<const std::int64_t> b_dims() const { return {b.data(), rank}; }
  std::span<const std::int64_t> y_dims() const { return {y.data(), rank}; }
  std::span<const std::int64_t> out_shape() const { return {out.data(), out_rank}; }
  // Multiply-adds of the product, counted twice: every y element sums k products.
  double flops() const {
    double n = 2.0 * static_cast<double>(k);
    for (std::size_t i = 0; i < rank; ++i) n *= static_cast<double>(y[i]);
    return n;
  }
};

// Stands for M in the key of a shape class (dims are never negative).
constexpr std::int64_t kAnyRows = -9;

// Copies `shape` right-aligned into the first `rank` entries of `dims`, padding with 1s.
void pad_dims(std::span<const std::int64_t> shape, std::size_t rank, Dims& dims) {
  std::fill(dims.begin(), dims.begin() + rank, 1);
  std::copy(shape.begin(), shape.end(), dims.begin() + (rank - shape.size()));
}

// Broadcasts one batch dim pair; false when they are incompatible.
bool broadcast_dim(std::int64_t a, std::int64_t b, std::int64_t& out) {
  if (a != b && a != 1 && b != 1) return false;
  out = a == 1 ? b : a;
  return true;
}

// Pads and checks the operands; false where the reference kernel would throw or oneDNN has no room.
bool plan_matmul(const Tensor& a, const Tensor& b, MatmulPlan& p) {
  const std::size_t ra = a.shape().size(), rb = b.shape().size();
  if (ra == 0 || rb == 0) return false;
  p.rank = std::max<std::size_t>({ra, rb, 2});
  if (p.rank > kMaxRank) return false;
  const std::int64_t unit_a[2] = {1, ra == 1 ? a.dim(0) : 0};
  const std::int64_t unit_b[2] = {rb == 1 ? b.dim(0) : 0, 1};
  pad_dims(ra == 1 ? std::span<const std::int64_t>(unit_a) : std::span<const std::int64_t>(a.shape()), p.rank, p.a);
  pad_dims(rb == 1 ? std::span<const std::int64_t>(unit_b) : std::span<const std::int64_t>(b.shape()), p.rank, p.b);
  const std::size_t r = p.rank;
  p.k = p.a[r - 1];
  if (p.b[r - 2] != p.k) return false;
  for (std::size_t i = 0; i + 2 < r; ++i)
    if (!broadcast_dim(p.a[i], p.b[i], p.y[i])) return false;
  p.y[r - 2] = p.a[r - 2];
  p.y[r - 1] = p.b[r - 1];
  p.out_rank = 0;
  for (std::size_t i = 0; i + 2 < r; ++i) p.out[p.out_rank++] = p.y[i];
  if (ra != 1) p.out[p.out_rank++] = p.y[r - 2];
  if (rb != 1) p.out[p.out_rank++] = p.y[r - 1];
  return true;
}

// True when a shape has a zero dim.
bool has_zero_dim(std::span<const std::int64_t> dims) {
  return std::find(dims.begin(), dims.end(), 0) != dims.end();
}

// Creates the matmul primitive for a plan, reading operands of encoding e,
// with the epilogue as post-ops; with `addend` (its dims padded to the
// plan's rank), a broadcast binary add comes first.
CachedPrimitive make_matmul(const MatmulPlan& p, OperandEncoding e, const Epilogue& epilogue,
                            const Dims* addend = nullptr) {
  const dnnl::memory::desc a_md = onednn::operand_desc(onednn::row_major_desc(p.a_dims()), e);
  const dnnl::memory::desc b_md = onednn::operand_desc(onednn::row_major_desc(p.b_dims()), e);
  const dnnl::memory::desc y_md = onednn::row_major_desc(p.y_dims());
  dnnl::memory::desc addend_md;
  dnnl::primitive_attr attr;
  if (addend == nullptr) {
    attr = onednn::epilogue_attributes(epilogue);
  } else {
    addend_md = onednn::row_major_desc(std::span<const std::int64_t>(addend->data(), p.rank));
    dnnl::post_ops ops;
    ops.append_binary(dnnl::algorithm::binary_add, addend_md);
    onednn::append_epilogue(ops, epilogue);
    attr.set_post_ops(ops);
  }
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, y_md), attr, onednn::cpu_engine());
  CachedPrimitive entry{dnnl::matmul(pd)};
  entry.add_argument(DNNL_ARG_SRC, a_md);
  entry.add_argument(DNNL_ARG_WEIGHTS, b_md);
  entry.add_argument(DNNL_ARG_DST, y_md);
  if (addend != nullptr) entry.add_argument(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, addend_md);
  return entry;
}

// The addend's dims padded to the plan's rank when it broadcasts into the
// product (each dim equal to the product's or 1); false otherwise.
bool plan_addend(const MatmulPlan& p, const Tensor& addend, Dims& dims) {
  if (addend.rank() > static_cast<int>(p.rank)) return false;
  pad_dims(addend.shape(), p.rank, dims);
  for (std::size_t i = 0; i < p.rank; ++i)
    if (dims[i] != p.y[i] && dims[i] != 1) return false;
  return true;
}

// The shapes of a Gemm after transposes, and how C is read.
struct GemmPlan {
  std::int64_t m = 0, k = 0, n = 0;
  bool use_c = false;
  std::array<std::int64_t, 2> c_dims{1, 1};
};

// Checks ranks, inner dims and C's unidirectional broadcast like the reference kernel.
bool plan_gemm(const GemmParams& p, const Tensor& a, const Tensor& b, const Tensor* c, GemmPlan& g) {
  if (a.rank() != 2 || b.rank() != 2) return false;
  g.m = p.trans_a ? a.dim(1) : a.dim(0);
  g.k = p.trans_a ? a.dim(0) : a.dim(1);
  g.n = p.trans_b ? b.dim(0) : b.dim(1);
  if ((p.trans_b ? b.dim(1) : b.dim(0)) != g.k) return false;
  if (c == nullptr) return true;
  if (c->rank() > 2) return false;
  const std::int64_t target[2] = {g.m, g.n};
  for (int i = 0; i < c->rank(); ++i) {
    const std::int64_t want = target[2 - c->rank() + i];
    if (c->dim(i) != want && c->dim(i) != 1) return false;
    g.c_dims[2 - c->rank() + i] = c->dim(i);
  }
  g.use_c = p.beta != 0.0;
  return true;
}

// True when v is zero or an f32 scale whose magnitude lies in [2^-24, 2^24]: applied
// to an f32 value it neither overflows nor loses the result to underflow.
bool bounded_scale(double v) {
  const double m = std::fabs(v);
  return m == 0.0 || (m >= 0x1p-24 && m <= 0x1p24);
}

// True when every element of the f32 tensor is finite.
bool all_finite(const Tensor& t) {
  const float* v = t.data<float>();
  return std::all_of(v, v + t.numel(), [](float x) { return std::isfinite(x); });
}

// True when the f32 attributes reproduce the reference's double-precision
// alpha * AB + beta * C. With C, the primitive computes beta * ((alpha / beta) * AB + C),
// so beta and alpha / beta must both be bounded. Without C, or with beta == 0,
// the primitive drops C and alpha only has to be a normal f32 (or zero); the
// reference adds 0 * C, which is NaN for an infinite or NaN element of C, so
// such a C is left to the reference.
bool gemm_scales_supported(const GemmParams& p, const Tensor* c) {
  if (c == nullptr || p.beta == 0.0) {
    const double m = std::fabs(p.alpha);
    const bool normal = m == 0.0 || (m >= std::numeric_limits<float>::min() && m <= std::numeric_limits<float>::max());
    return normal && (c == nullptr || all_finite(*c));
  }
  return bounded_scale(p.beta) && bounded_scale(p.alpha / p.beta);
}

// Output scale and post-ops: alpha * AB + beta * C as beta * ((alpha / beta) * AB + C),
// then the epilogue.
dnnl::primitive_attr gemm_attributes(const GemmParams& p, const GemmPlan& g, const dnnl::memory::desc& c_md,
                                     const Epilogue& epilogue) {
  dnnl::primitive_attr attr;
  const double scale = g.use_c && p.beta != 1.0 ? p.alpha / p.beta : p.alpha;
  if (scale != 1.0) attr.set_output_scales(0, {static_cast<float>(scale)});
  if (!g.use_c && epilogue.empty()) return attr;
  dnnl::post_ops ops;
  if (g.use_c) {
    ops.append_binary(dnnl::algorithm::binary_add, c_md);
    if (p.beta != 1.0) ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, static_cast<float>(p.beta), 0.0f);
  }
  onednn::append_epilogue(ops, epilogue);
  attr.set_post_ops(ops);
  return attr;
}

// Creates the Gemm primitive: transposes as strides, alpha, beta * C and the
// epilogue as attributes, A and B of encoding e.
CachedPrimitive make_gemm(const GemmParams& p, const GemmPlan& g, OperandEncoding e, const Epilogue& epilogue) {
  const std::int64_t a_dims[2] = {g.m, g.k}, b_dims[2] = {g.k, g.n}, y_dims[2] = {g.m, g.n};
  const std::int64_t a_strides[2] = {p.trans_a ? 1 : g.k, p.trans_a ? g.m : 1};
  const std::int64_t b_strides[2] = {p.trans_b ? 1 : g.n, p.trans_b ? g.k : 1};
  const dnnl::memory::desc a_md = onednn::operand_desc(onednn::strided_desc(a_dims, a_strides), e);
  const dnnl::memory::desc b_md = onednn::operand_desc(onednn::strided_desc(b_dims, b_strides), e);
  const dnnl::memory::desc y_md = onednn::row_major_desc(y_dims);
  const dnnl::memory::desc c_md = onednn::row_major_desc(g.c_dims);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, y_md), gemm_attributes(p, g, c_md, epilogue),
                                        onednn::cpu_engine());
  CachedPrimitive entry{dnnl::matmul(pd)};
  entry.add_argument(DNNL_ARG_SRC, a_md);
  entry.add_argument(DNNL_ARG_WEIGHTS, b_md);
  entry.add_argument(DNNL_ARG_DST, y_md);
  if (g.use_c) entry.add_argument(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, c_md);
  return entry;
}

// True when a Gemm can run with its row count bound per call: A not
// transposed (its row stride must not depend on M) and C absent or one row.
bool gemm_rows_class_applies(const GemmParams& p, const GemmPlan& g) {
  return !p.trans_a && (!g.use_c || g.c_dims[0] == 1);
}

// The shape-class primitive of a Gemm (rows_class.h): as make_gemm, with M
// bound per call.
RowsClassPrimitive make_gemm_class(const GemmParams& p, const GemmPlan& g, OperandEncoding e, const Epilogue& epilogue) {
  const dnnl::memory::data_type operand = onednn::operand_data_type(e), f32 = dnnl::memory::data_type::f32;
  std::vector<RowsArgument> args{
      {DNNL_ARG_SRC, {g.m, g.k}, {g.k, 1}, operand, true},
      {DNNL_ARG_WEIGHTS, {g.k, g.n}, {p.trans_b ? 1 : g.n, p.trans_b ? g.k : 1}, operand, false},
      {DNNL_ARG_DST, {g.m, g.n}, {g.n, 1}, f32, true}};
  if (g.use_c) args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, {1, g.n}, {g.n, 1}, f32, false});
  const dnnl::matmul::primitive_desc pd(
      dnnl::matmul::desc(args[0].class_desc(), args[1].class_desc(), args[2].class_desc()),
      gemm_attributes(p, g, onednn::row_major_desc(g.c_dims), epilogue), onednn::cpu_engine());
  return RowsClassPrimitive(dnnl::matmul(pd), std::move(args));
}

// The cache key of a Gemm: encoding, transposes, dims, alpha, beta, C's broadcast shape and the epilogue.
PrimitiveKey gemm_key(const GemmParams& p, const GemmPlan& g, OperandEncoding e, const Epilogue& epilogue) {
  PrimitiveKey key(PrimitiveKind::Gemm, e);
  for (std::int64_t v : {std::int64_t(p.trans_a), std::int64_t(p.trans_b), g.m, g.k, g.n}) key.push(v);
  key.push_double(p.alpha);
  key.push(g.use_c);
  if (g.use_c) {
    key.push_double(p.beta);
    key.push_list(g.c_dims);
  }
  onednn::push_epilogue(key, epilogue);
  return key;
}

// True when a matmul is one 2-D product of A's rows (every dim but the last)
// with a B that does not broadcast: it can then run with its row count
// bound per call.
bool matmul_rows_class_applies(const MatmulPlan& p) {
  for (std::size_t i = 0; i + 2 < p.rank; ++i)
    if (p.b[i] != 1) return false;
  return true;
}

// A's rows: the product of all its dims but the last.
std::int64_t matmul_rows(const MatmulPlan& p) {
  std::int64_t rows = 1;
  for (std::size_t i = 0; i + 1 < p.rank; ++i) rows *= p.a[i];
  return rows;
}

// The shape-class primitive of a matmul (rows_class.h): [rows, K] x [K, N]
// with the row count bound per call.
// With `addend_columns` (1 or N), a row added to every product row first.
RowsClassPrimitive make_matmul_class(const MatmulPlan& p, OperandEncoding e, const Epilogue& epilogue,
                                     std::int64_t addend_columns = 0) {
  const std::int64_t k = p.k, n = p.y[p.rank - 1];
  const dnnl::memory::data_type operand = onednn::operand_data_type(e), f32 = dnnl::memory::data_type::f32;
  std::vector<RowsArgument> args{{DNNL_ARG_SRC, {1, k}, {k, 1}, operand, true},
                                 {DNNL_ARG_WEIGHTS, {k, n}, {n, 1}, operand, false},
                                 {DNNL_ARG_DST, {1, n}, {n, 1}, f32, true}};
  dnnl::primitive_attr attr = onednn::epilogue_attributes(epilogue);
  if (addend_columns > 0) {
    const RowsArgument addend{DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1,
                              {1, addend_columns}, {addend_columns, 1}, f32, false};
    dnnl::post_ops ops;
    ops.append_binary(dnnl::algorithm::binary_add, addend.class_desc());
    onednn::append_epilogue(ops, epilogue);
    attr.set_post_ops(ops);
    args.push_back(addend);
  }
  const dnnl::matmul::primitive_desc pd(
      dnnl::matmul::desc(args[0].class_desc(), args[1].class_desc(), args[2].class_desc()), attr,
      onednn::cpu_engine());
  return RowsClassPrimitive(dnnl::matmul(pd), std::move(args));
}

// The key of a matmul's shape class: K, N, the bias row's width (0: none) and the epilogue.
PrimitiveKey matmul_class_key(const MatmulPlan& p, OperandEncoding e, const Epilogue& epilogue,
                              std::int64_t addend_columns) {
  PrimitiveKey key(PrimitiveKind::MatMul, e);
  for (std::int64_t v : {kAnyRows, p.k, p.y[p.rank - 1], addend_columns}) key.push(v);
  onednn::push_epilogue(key, epilogue);
  return key;
}

// The addend's last dim when it is one row for every product row (all its
// other dims 1), else 0.
std::int64_t addend_row_columns(const MatmulPlan& p, const Dims& dims) {
  for (std::size_t i = 0; i + 1 < p.rank; ++i)
    if (dims[i] != 1) return 0;
  return dims[p.rank - 1];
}

// Runs a planned matmul with operands of encoding e into y; false when its key
// does not fit, throws dnnl::error.
bool run_matmul(const MatmulPlan& p, const Tensor& a, const Tensor& b, Tensor& y, OperandEncoding e,
                const Epilogue& epilogue) {
  y.reset(DType::F32, p.out_shape());
  const std::array<const void*, 3> buffers{onednn::encode_operand(a.data<float>(), a.numel(), e, OperandSlot::Source),
                                           onednn::encode_operand(b.data<float>(), b.numel(), e, OperandSlot::Weights),
                                           y.raw()};
  if (matmul_rows_class_applies(p) &&
      onednn::thread_rows_classes().try_run(matmul_class_key(p, e, epilogue, 0), matmul_rows(p), buffers,
                                            [&] { return make_matmul_class(p, e, epilogue); }))
    return true;
  PrimitiveKey key(PrimitiveKind::MatMul, e);
  key.push_list(p.a_dims());
  key.push_list(p.b_dims());
  onednn::push_epilogue(key, epilogue);
  if (!key.valid()) return false;
  onednn::thread_primitive_cache().find_or_create(key, [&] { return make_matmul(p, e, epilogue); }).execute(buffers);
  return true;
}

// Runs a planned Gemm with A and B of encoding e into y; false when its key
// does not fit, throws dnnl::error.
bool run_gemm(const GemmParams& p, const GemmPlan& g, const Tensor& a, const Tensor& b, const Tensor* c, Tensor& y,
              OperandEncoding e, const Epilogue& epilogue) {
  const std::int64_t out_shape[2] = {g.m, g.n};
  y.reset(DType::F32, out_shape);
  const std::array<const void*, 4> buffers{onednn::encode_operand(a.data<float>(), a.numel(), e, OperandSlot::Source),
                                           onednn::encode_operand(b.data<float>(), b.numel(), e, OperandSlot::Weights),
                                           y.raw(), g.use_c ? c->raw() : nullptr};
  const std::span<const void* const> used(buffers.data(), g.use_c ? 4 : 3);
  if (gemm_rows_class_applies(p, g)) {
    GemmPlan any_rows = g;
    any_rows.m = kAnyRows;
    if (onednn::thread_rows_classes().try_run(gemm_key(p, any_rows, e, epilogue), g.m, used,
                                              [&] { return make_gemm_class(p, g, e, epilogue); }))
      return true;
  }
  const PrimitiveKey key = gemm_key(p, g, e, epilogue);
  if (!key.valid()) return false;
  onednn::thread_primitive_cache().find_or_create(key, [&] { return make_gemm(p, g, e, epilogue); }).execute(used);
  return true;
}

// Runs a planned matmul plus addend (dims from plan_addend) into y; false
// when its key does not fit, throws dnnl::error.
bool run_matmul_add(const MatmulPlan& p, const Tensor& a, const Tensor& b, const Tensor& addend, const Dims& dims,
                    Tensor& y, OperandEncoding e, const Epilogue& epilogue) {
  y.reset(DType::F32, p.out_shape());
  const std::array<const void*, 4> buffers{onednn::encode_operand(a.data<float>(), a.numel(), e, OperandSlot::Source),
                                           onednn::encode_operand(b.data<float>(), b.numel(), e, OperandSlot::Weights),
                                           y.raw(), addend.raw()};
  const std::int64_t columns = addend_row_columns(p, dims);
  if (columns > 0 && matmul_rows_class_applies(p) &&
      onednn::thread_rows_classes().try_run(matmul_class_key(p, e, epilogue, columns), matmul_rows(p), buffers,
                                            [&] { return make_matmul_class(p, e, epilogue, columns); }))
    return true;
  PrimitiveKey key(PrimitiveKind::MatMul, e);
  key.push_list(p.a_dims());
  key.push_list(p.b_dims());
  key.push(-3);  // marks the addend's dims
  key.push_list(std::span<const std::int64_t>(dims.data(), p.rank));
  onednn::push_epilogue(key, epilogue);
  if (!key.valid()) return false;
  onednn::thread_primitive_cache()
      .find_or_create(key, [&] { return make_matmul(p, e, epilogue, &dims); })
      .execute(buffers);
  return true;
}

}  // namespace

// oneDNN matmul plus an addend into y, or false when the case does not apply.
bool onednn_matmul_add(const Tensor& a, const Tensor& b, const Tensor& addend, Tensor& y, const Epilogue& epilogue) {
  onednn::thread_primitive_cache().count_call();
  if (a.dtype() != DType::F32 || b.dtype() != DType::F32 || addend.dtype() != DType::F32) return false;
  if (a.rank() < 2 || b.rank() < 2) return false;  // the product keeps every padded dim
  MatmulPlan p;
  if (!plan_matmul(a, b, p) || !onednn::dense_size_fits(p.y_dims())) return false;
  Dims dims{};
  if (!plan_addend(p, addend, dims)) return false;
  if (has_zero_dim(p.y_dims()) || p.k == 0) return false;  // the reference handles empty products
  // The addend takes C's place in the finiteness check (Relu and Clip post-ops).
  if (!onednn::epilogue_applies(epilogue, {&a, &b, p.k, 1.0, &addend, 1.0})) return false;
  const onednn::SerialWhenSmall threads(p.flops());
  return onednn::run_with_encoding(onednn::current_operand_encoding(), [&](OperandEncoding e) {
    return run_matmul_add(p, a, b, addend, dims, y, e, epilogue);
  });
}

// oneDNN matmul into y, or false when the case does not apply.
bool onednn_matmul(const Tensor& a, const Tensor& b, Tensor& y, const Epilogue& epilogue) {
  onednn::thread_primitive_cache().count_call();
  if (a.dtype() != DType::F32 || b.dtype() != DType::F32) return false;
  MatmulPlan p;
  if (!plan_matmul(a, b, p) || !onednn::dense_size_fits(p.y_dims())) return false;
  if (has_zero_dim(p.y_dims())) {
    y.reset(DType::F32, p.out_shape());
    return true;
  }
  if (p.k == 0) return false;  // all-zero output: the reference fills it
  if (!onednn::epilogue_applies(epilogue, {&a, &b, p.k})) return false;
  const onednn::SerialWhenSmall threads(p.flops());
  return onednn::run_with_encoding(onednn::current_operand_encoding(),
                                   [&](OperandEncoding e) { return run_matmul(p, a, b, y, e, epilogue); });
}

// oneDNN Gemm into y, or false when the case does not apply.
bool onednn_gemm(const GemmParams& p, const Tensor& a, const Tensor& b, const Tensor* c, Tensor& y,
                 const Epilogue& epilogue) {
  onednn::thread_primitive_cache().count_call();
  if (a.dtype() != DType::F32 || b.dtype() != DType::F32 || (c && c->dtype() != DType::F32)) return false;
  GemmPlan g;
  if (!plan_gemm(p, a, b, c, g)) return false;
  if (!gemm_scales_supported(p, c)) return false;
  const std::int64_t out_shape[2] = {g.m, g.n};
  if (g.m == 0 || g.n == 0) {
    y.reset(DType::F32, out_shape);
    return true;
  }
  if (g.k == 0) return false;
  if (!onednn::epilogue_applies(epilogue, {&a, &b, g.k, p.alpha, g.use_c ? c : nullptr, p.beta})) return false;
  const onednn::SerialWhenSmall threads(2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k));
  return onednn::run_with_encoding(onednn::current_operand_encoding(),
                                   [&](OperandEncoding e) { return run_gemm(p, g, a, b, c, y, e, epilogue); });
}

}  // namespace canary::kernels
