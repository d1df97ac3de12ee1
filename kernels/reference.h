// Reference kernels: plain, clear C++ for every op. Each takes tensors and a
// plain parameter struct, computes the output shape from the actual input
// shapes, validates them (throwing canary::Error(Shape) or (Input) with the
// shapes in the message), resets the outputs and fills them.
//
// Every kernel is templated internally on the element type, so a graph whose
// f32 values were promoted to f64 runs in double precision through the same
// code: that is the fp64 reference mode every other tier is measured against.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "canary/tensor.h"

namespace canary::kernels {

enum class UnaryOp { Neg, Abs, Exp, Log, Sqrt, Tanh, Sigmoid, Relu, Gelu, GeluTanh, Erf };
enum class BinaryOp { Add, Sub, Mul, Div, Pow, Max, Min, Equal, Less, Greater };
enum class ReduceOp { Sum, Mean, Max };

// y = op(x); float dtypes (Neg/Abs/Relu also integers).
void unary(UnaryOp op, const Tensor& x, Tensor& y);
// y = op(a, b) with NumPy broadcasting; a and b share a dtype; comparisons give bool.
// Integer Div truncates toward zero like ONNX; Pow needs a float base.
void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& y);
// y = cond ? a : b, three-way broadcasting.
void where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& y);
// y = min(max(x, lo), hi); lo/hi are optional scalars (nullptr: unbounded).
void clip(const Tensor& x, const Tensor* lo, const Tensor* hi, Tensor& y);

// NumPy matmul: 1-D operands promoted and squeezed back, batch dims broadcast.
void matmul(const Tensor& a, const Tensor& b, Tensor& y);
struct GemmParams {
  double alpha = 1.0, beta = 1.0;
  bool trans_a = false, trans_b = false;
};
// y = alpha * op(a) * op(b) + beta * c, a and b 2-D, c unidirectionally broadcast to [M, N].
void gemm(const GemmParams& p, const Tensor& a, const Tensor& b, const Tensor* c, Tensor& y);

enum class AutoPad { NotSet, SameUpper, SameLower, Valid };
struct ConvParams {
  std::vector<std::int64_t> kernel_shape;  // empty: taken from w
  std::vector<std::int64_t> strides;       // empty: all 1
  std::vector<std::int64_t> pads;          // empty: all 0; else begins then ends (2 * spatial)
  std::vector<std::int64_t> dilations;     // empty: all 1
  std::int64_t group = 1;
  AutoPad auto_pad = AutoPad::NotSet;
};
// 1-D (x [N, C, W]) and 2-D (x [N, C, H, W]) convolution, w [M, C/group, k...], b [M].
void conv(const ConvParams& p, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y);

struct ReduceParams {
  ReduceOp op = ReduceOp::Sum;
  std::vector<std::int64_t> axes;  // may be negative; empty: all axes (unless noop_with_empty_axes)
  bool keepdims = true;
  bool noop_with_empty_axes = false;
};
void reduce(const ReduceParams& p, const Tensor& x, Tensor& y);
void softmax(std::int64_t axis, const Tensor& x, Tensor& y);
struct LayerNormParams {
  std::int64_t axis = -1;
  double epsilon = 1e-5;
};
// Normalises over dims [axis, rank); mean and inv_std (optional outputs) have
// the leading dims and 1s after.
void layer_norm(const LayerNormParams& p, const Tensor& x, const Tensor& scale, const Tensor* bias,
                Tensor& y, Tensor* mean, Tensor* inv_std);

// Shape ops. Those that keep the element order return a view sharing x's buffer.
void reshape(const Tensor& x, const Tensor& shape, bool allowzero, Tensor& y);
void transpose(std::span<const std::int64_t> perm, const Tensor& x, Tensor& y);  // empty perm: reverse
void concat(std::int64_t axis, std::span<const Tensor* const> inputs, Tensor& y);
// ONNX Slice: starts/ends/axes/steps are 1-D i64/i32 tensors (axes/steps optional).
void slice(const Tensor& x, const Tensor& starts, const Tensor& ends, const Tensor* axes,
           const Tensor* steps, Tensor& y);
void gather(std::int64_t axis, const Tensor& data, const Tensor& indices, Tensor& y);
void squeeze(const Tensor& x, const Tensor* axes, Tensor& y);
void unsqueeze(const Tensor& x, const Tensor& axes, Tensor& y);
// y = i64 1-D shape of x, dims [start, end) with ONNX clamping; end nullopt: rank.
void shape_of(const Tensor& x, std::int64_t start, std::optional<std::int64_t> end, Tensor& y);
void cast(const Tensor& x, DType to, Tensor& y);
void expand(const Tensor& x, const Tensor& shape, Tensor& y);
void flatten(std::int64_t axis, const Tensor& x, Tensor& y);
void identity(const Tensor& x, Tensor& y);

enum class LstmDirection { Forward, Reverse, Bidirectional };
struct LstmParams {
  std::int64_t hidden_size = 0;
  LstmDirection direction = LstmDirection::Forward;
  std::optional<double> clip;
  bool input_forget = false;
  std::int64_t layout = 0;  // 0: X [T, B, I]; 1: X [B, T, I]
};
// ONNX LSTM with the default activations (sigmoid, tanh, tanh), gates i o f c,
// optional bias B [D, 8H], sequence_lens [B], initial_h/initial_c [D, B, H],
// peepholes P [D, 3H]. Outputs Y [T, D, B, H], Y_h, Y_c [D, B, H] (any may be null).
// Steps past a batch entry's sequence length leave its state unchanged and write zeros to Y.
void lstm(const LstmParams& p, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
          const Tensor* sequence_lens, const Tensor* initial_h, const Tensor* initial_c,
          const Tensor* peepholes, Tensor* y, Tensor* y_h, Tensor* y_c);

// Helpers shared by kernels and the VM.
// NumPy broadcast of two concrete shapes; throws Error(Shape) naming both.
Shape broadcast_shapes(std::span<const std::int64_t> a, std::span<const std::int64_t> b);
// Reads a 1-D (or scalar) i64/i32 tensor as int64 values.
std::vector<std::int64_t> read_int_values(const Tensor& t, const char* what);

}  // namespace canary::kernels
