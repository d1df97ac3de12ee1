#include "jit/device_matmul.h"

#include <algorithm>
#include <span>

namespace canary::jit {

namespace {

bool usable(const Tensor& t) { return t.defined() && t.dtype() == DType::F32 && t.rank() >= 2; }

// Product of dims, false on overflow (a shape no call could bring, but the
// dims come from tensors, not from the plan).
bool product(std::span<const std::int64_t> dims, std::int64_t& out) {
  out = 1;
  for (std::int64_t d : dims)
    if (__builtin_mul_overflow(out, d, &out)) return false;
  return true;
}

// NumPy MatMul of two operands of rank >= 2: a 2-D B folds A's batch dims
// into its rows; a 2-D A is broadcast over B's batch; otherwise both batch
// shapes must be equal (broadcasting between them stays on the CPU).
bool matmul_call(const Tensor& a, const Tensor& b, MatmulCall& call, Shape& out_shape) {
  const std::span<const std::int64_t> sa = a.shape(), sb = b.shape();
  const std::int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  if (sb[sb.size() - 2] != k) return false;
  const auto batch_a = sa.first(sa.size() - 2), batch_b = sb.first(sb.size() - 2);
  call.m = m;
  call.n = n;
  call.k = k;
  if (batch_b.empty()) {
    std::int64_t rows = 0;
    if (!product(batch_a, rows) || __builtin_mul_overflow(rows, m, &call.m)) return false;
    out_shape.assign(batch_a.begin(), batch_a.end());
  } else if (batch_a.empty() || std::equal(batch_a.begin(), batch_a.end(), batch_b.begin(), batch_b.end())) {
    if (!product(batch_b, call.batch)) return false;
    call.stride_a = batch_a.empty() ? 0 : m * k;
    call.stride_b = k * n;
    out_shape.assign(batch_b.begin(), batch_b.end());
  } else {
    return false;
  }
  out_shape.push_back(m);
  out_shape.push_back(n);
  return true;
}

// Gemm: A and B 2-D, C absent or a row of n floats added once.
bool gemm_call(const kernels::GemmParams& p, const Tensor& a, const Tensor& b, const Tensor* c, MatmulCall& call,
               Shape& out_shape) {
  if (a.rank() != 2 || b.rank() != 2) return false;
  call.trans_a = p.trans_a;
  call.trans_b = p.trans_b;
  call.m = p.trans_a ? a.dim(1) : a.dim(0);
  call.k = p.trans_a ? a.dim(0) : a.dim(1);
  call.n = p.trans_b ? b.dim(0) : b.dim(1);
  if ((p.trans_b ? b.dim(1) : b.dim(0)) != call.k) return false;
  call.alpha = static_cast<float>(p.alpha);  // an ONNX attribute is a float to begin with
  if (c != nullptr && c->defined()) {  // beta 0 too: the CPU's 0 * C keeps C's NaNs
    const bool row = c->dtype() == DType::F32 && c->numel() == call.n &&
                     (c->rank() == 1 || (c->rank() == 2 && c->dim(0) == 1));
    if (!row || p.beta != 1.0) return false;
    call.bias = c->data<float>();
  }
  out_shape = {call.m, call.n};
  return true;
}

}  // namespace

std::optional<vm::ContractionInfo> device_matmul_info(const vm::Instruction& in) {
  std::optional<vm::ContractionInfo> info = vm::contraction_info(in);
  if (info && info->kind == vm::ContractionInfo::Kind::Conv) info.reset();
  return info;
}

bool make_matmul_call(const vm::ContractionInfo& info, const Tensor& a, const Tensor& b, const Tensor* c,
                      MatmulCall& call, Shape& out_shape) {
  call = MatmulCall();
  if (!usable(a) || !usable(b)) return false;
  const bool ok = info.kind == vm::ContractionInfo::Kind::MatMul ? matmul_call(a, b, call, out_shape)
                  : info.kind == vm::ContractionInfo::Kind::Gemm && info.gemm != nullptr
                      ? gemm_call(*info.gemm, a, b, c, call, out_shape)
                      : false;
  if (!ok || call.batch <= 0 || call.m <= 0 || call.n <= 0 || call.k <= 0) return false;
  call.a = a.data<float>();
  call.b = b.data<float>();
  return true;
}

}  // namespace canary::jit
