// Reference MatMul (NumPy semantics, batch broadcasting) and Gemm (ONNX) kernels.
#include <string>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"

namespace canary::kernels {
namespace {

// Both F32 and F64 accumulate dot products in double: the "wide" accumulator
// of each element type, so f32 graphs lose precision only when storing.
using Accumulator = double;

// Throws Error(Input) naming the op and the unsupported dtype.
[[noreturn]] void throw_unsupported_dtype(const char* op, DType dtype) {
  throw Error(ErrorKind::Input,
              std::string(op) + ": unsupported dtype " + std::string(dtype_name(dtype)) + " (expected f32 or f64)");
}

// Throws Error(Input) when a and b do not share a dtype.
void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype())
    throw Error(ErrorKind::Input,
                std::string(op) + ": operands have different dtypes " + a.type_string() + " and " + b.type_string());
}

// Row-major strides of a shape, with stride 0 on dims of size 1 that are
// broadcast against a larger dim of `target` (shape right-aligned to target).
std::vector<std::int64_t> broadcast_strides(const Shape& shape, const Shape& target) {
  std::vector<std::int64_t> strides(target.size(), 0);
  std::int64_t stride = 1;
  const std::size_t offset = target.size() - shape.size();
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i + offset] = (shape[i] == 1 && target[i + offset] != 1) ? 0 : stride;
    stride *= shape[i];
  }
  return strides;
}

// The operands of one matmul after 1-D promotion, split into batch and matrix dims.
struct MatmulGeometry {
  Shape batch;                                                 // broadcast batch dims
  std::vector<std::int64_t> a_batch_strides, b_batch_strides;  // in matrices, not elements
  std::int64_t m = 0, k = 0, n = 0;
  Shape out_shape;
};

// Promotes 1-D operands, checks K and broadcasts the batch dims.
MatmulGeometry plan_matmul(const Tensor& a, const Tensor& b) {
  if (a.rank() == 0 || b.rank() == 0)
    throw Error(ErrorKind::Shape, "MatMul: operands must have rank >= 1, got " + shape_to_string(a.shape()) + " and " +
                                      shape_to_string(b.shape()));
  Shape as = a.shape(), bs = b.shape();
  if (a.rank() == 1) as.insert(as.begin(), 1);
  if (b.rank() == 1) bs.push_back(1);
  MatmulGeometry g;
  g.m = as[as.size() - 2];
  g.k = as.back();
  g.n = bs.back();
  if (bs[bs.size() - 2] != g.k)
    throw Error(ErrorKind::Shape, "MatMul: inner dimensions differ: a " + shape_to_string(a.shape()) + " and b " +
                                      shape_to_string(b.shape()));
  const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  g.batch = broadcast_shapes(a_batch, b_batch);
  g.a_batch_strides = broadcast_strides(a_batch, g.batch);
  g.b_batch_strides = broadcast_strides(b_batch, g.batch);
  g.out_shape = g.batch;
  if (a.rank() != 1) g.out_shape.push_back(g.m);
  if (b.rank() != 1) g.out_shape.push_back(g.n);
  return g;
}

// Offset (in matrices) of batch index `flat` in an operand with the given strides.
std::int64_t batch_offset(const Shape& batch, const std::vector<std::int64_t>& strides, std::int64_t flat) {
  std::int64_t offset = 0;
  for (std::size_t i = batch.size(); i-- > 0;) {
    offset += (flat % batch[i]) * strides[i];
    flat /= batch[i];
  }
  return offset;
}

// y[m, n] = sum_k a[m, k] * b[k, n] for one row-major matrix pair.
template <typename T>
void multiply_matrices(const T* a, const T* b, T* y, std::int64_t m, std::int64_t k, std::int64_t n) {
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      Accumulator acc = 0;
      for (std::int64_t p = 0; p < k; ++p) acc += Accumulator(a[i * k + p]) * Accumulator(b[p * n + j]);
      y[i * n + j] = T(acc);
    }
}

// Runs every batch matrix product of a planned matmul.
template <typename T>
void run_matmul(const MatmulGeometry& g, const Tensor& a, const Tensor& b, Tensor& y) {
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* py = y.data<T>();
  const std::int64_t batches = checked_numel(g.batch);
  for (std::int64_t i = 0; i < batches; ++i) {
    const T* ma = pa + batch_offset(g.batch, g.a_batch_strides, i) * g.m * g.k;
    const T* mb = pb + batch_offset(g.batch, g.b_batch_strides, i) * g.k * g.n;
    multiply_matrices(ma, mb, py + i * g.m * g.n, g.m, g.k, g.n);
  }
}

// How c is read when broadcast to [M, N]: strides per row and per column.
struct GemmBias {
  std::int64_t row_stride = 0, col_stride = 0;
};

// Checks that c broadcasts unidirectionally to [m, n] and returns its strides.
GemmBias plan_gemm_bias(const Tensor& c, std::int64_t m, std::int64_t n) {
  const Shape& cs = c.shape();
  const Shape target{m, n};
  bool ok = cs.size() <= 2;
  for (std::size_t i = 0; ok && i < cs.size(); ++i) {
    const std::int64_t want = target[2 - cs.size() + i];
    ok = cs[i] == want || cs[i] == 1;
  }
  if (!ok)
    throw Error(ErrorKind::Shape, "Gemm: input 'C' " + shape_to_string(cs) +
                                      " does not broadcast to the output shape " + shape_to_string(target));
  const std::vector<std::int64_t> strides = broadcast_strides(cs, target);
  return GemmBias{strides[0], strides[1]};
}

// y = alpha * op(a) * op(b) + beta * c with the dims already checked.
template <typename T>
void run_gemm(const GemmParams& p, const Tensor& a, const Tensor& b, const Tensor* c, const GemmBias& bias,
              std::int64_t m, std::int64_t k, std::int64_t n, Tensor& y) {
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  const T* pc = c ? c->data<T>() : nullptr;
  T* py = y.data<T>();
  const std::int64_t lda = a.dim(1), ldb = b.dim(1);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      Accumulator acc = 0;
      for (std::int64_t q = 0; q < k; ++q) {
        const T av = p.trans_a ? pa[q * lda + i] : pa[i * lda + q];
        const T bv = p.trans_b ? pb[j * ldb + q] : pb[q * ldb + j];
        acc += Accumulator(av) * Accumulator(bv);
      }
      Accumulator out = p.alpha * acc;
      if (pc) out += p.beta * Accumulator(pc[i * bias.row_stride + j * bias.col_stride]);
      py[i * n + j] = T(out);
    }
}

}  // namespace

// NumPy matmul of a and b into y.
void matmul(const Tensor& a, const Tensor& b, Tensor& y) {
  check_same_dtype("MatMul", a, b);
  if (!is_floating(a.dtype())) throw_unsupported_dtype("MatMul", a.dtype());
  const MatmulGeometry g = plan_matmul(a, b);
  y.reset(a.dtype(), g.out_shape);
  // An empty result (m or n is 0) may still have 2^62 batches to walk.
  if (y.numel() == 0) return;
  if (a.dtype() == DType::F32)
    run_matmul<float>(g, a, b, y);
  else
    run_matmul<double>(g, a, b, y);
}

// ONNX Gemm of 2-D a and b with optional c broadcast to [M, N].
void gemm(const GemmParams& p, const Tensor& a, const Tensor& b, const Tensor* c, Tensor& y) {
  check_same_dtype("Gemm", a, b);
  if (c) check_same_dtype("Gemm", a, *c);
  if (!is_floating(a.dtype())) throw_unsupported_dtype("Gemm", a.dtype());
  if (a.rank() != 2 || b.rank() != 2)
    throw Error(ErrorKind::Shape, "Gemm: inputs 'A' and 'B' must be 2-D, got " + shape_to_string(a.shape()) + " and " +
                                      shape_to_string(b.shape()));
  const std::int64_t m = p.trans_a ? a.dim(1) : a.dim(0);
  const std::int64_t k = p.trans_a ? a.dim(0) : a.dim(1);
  const std::int64_t kb = p.trans_b ? b.dim(1) : b.dim(0);
  const std::int64_t n = p.trans_b ? b.dim(0) : b.dim(1);
  if (k != kb)
    throw Error(ErrorKind::Shape, "Gemm: inner dimensions differ: A " + shape_to_string(a.shape()) +
                                      (p.trans_a ? " (transposed)" : "") + " and B " + shape_to_string(b.shape()) +
                                      (p.trans_b ? " (transposed)" : ""));
  const GemmBias bias = c ? plan_gemm_bias(*c, m, n) : GemmBias{};
  const Shape out_shape{m, n};
  y.reset(a.dtype(), out_shape);
  if (a.dtype() == DType::F32)
    run_gemm<float>(p, a, b, c, bias, m, k, n, y);
  else
    run_gemm<double>(p, a, b, c, bias, m, k, n, y);
}

}  // namespace canary::kernels
