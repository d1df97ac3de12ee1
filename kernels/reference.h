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

// The unary elementwise ops: the rows of runtime/core/unary_ops.def, then
// Gelu's two forms (its `approximate` attribute picks one).
enum class UnaryOp {
#define CANARY_UNARY_OP(op, ...) op,
#include "runtime/core/unary_ops.def"
#undef CANARY_UNARY_OP
  Gelu,
  GeluTanh,
};
// PRelu: a < 0 ? b * a : a (b is the slope).
enum class BinaryOp { Add, Sub, Mul, Div, Pow, Max, Min, Equal, Less, Greater, PRelu };
enum class ReduceOp { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

// An op's float attributes in the table's order: LeakyRelu's alpha,
// HardSigmoid's alpha and beta, Selu's alpha and gamma, Shrink's bias and
// lambd, ... (unary_ops.def has the defaults).
struct UnaryParams {
  double alpha = 0.0, beta = 0.0;
};
// y = op(x), shaped and typed like x (y may be x); f32 and f64, and every
// numeric dtype for the table's Numeric rows (formulas: reference/unary_formulas.h).
void unary(UnaryOp op, const Tensor& x, Tensor& y, const UnaryParams& p = {});
// The ONNX name of an op ("Sin"; Gelu's tanh form is "Gelu(tanh)").
const char* unary_op_name(UnaryOp op);
// y = op(a, b) with NumPy broadcasting; a and b share a dtype; comparisons give bool.
// Integer Div truncates toward zero like ONNX; Pow needs a float base.
void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& y);
// y = a0 + a1 + ... (mean: divided by the count) with NumPy broadcasting;
// every input shares a numeric dtype (mean: floats only). ONNX Sum and Mean.
void sum_of(std::span<const Tensor* const> inputs, bool mean, Tensor& y);
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
  bool channels_last = false;  // x [N, spatial..., C] and y [N, spatial..., M]; w stays [M, C/group, k...]
};
// 1-D (x [N, C, W]) and 2-D (x [N, C, H, W]) convolution, w [M, C/group, k...], b [M].
void conv(const ConvParams& p, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y);

struct ConvTransposeParams {
  std::vector<std::int64_t> kernel_shape;    // empty: taken from w
  std::vector<std::int64_t> strides;         // empty: all 1
  std::vector<std::int64_t> pads;            // empty: all 0; else begins then ends (2 * spatial)
  std::vector<std::int64_t> dilations;       // empty: all 1
  std::vector<std::int64_t> output_padding;  // empty: all 0; added at the end of each axis
  std::vector<std::int64_t> output_shape;    // empty: from the pads; else spatial lengths (pads derived)
  std::int64_t group = 1;
  AutoPad auto_pad = AutoPad::NotSet;
};
// 1-D to 3-D transposed convolution (conv_transpose_geometry.h): x [N, C,
// spatial...], w [C, M/group, k...], b [M] -> y [N, M, out...].
void conv_transpose(const ConvTransposeParams& p, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y);

struct ReduceParams {
  ReduceOp op = ReduceOp::Sum;
  std::vector<std::int64_t> axes;  // may be negative; empty: all axes (unless noop_with_empty_axes)
  bool keepdims = true;
  bool noop_with_empty_axes = false;
};
// The ReduceX family over numeric dtypes. An empty reduction gives what ONNX
// defines: 0 for the sums (LogSum: -Inf), 1 for Prod, -Inf/+Inf for Max/Min
// (an integer type's lowest/highest), NaN for a float Mean, -Inf for
// LogSumExp. Max and Min propagate NaN. L2, LogSum and LogSumExp compute in
// double; an integer result they cannot represent is an Error(Input).
void reduce(const ReduceParams& p, const Tensor& x, Tensor& y);
// ArgMax / ArgMin: the i64 index of the largest (smallest) element along
// axis, the first of equal ones unless select_last_index. A NaN counts as
// beyond every number for both (NumPy's argmax/argmin): the first NaN (the
// last with select_last_index) wins.
struct ArgReduceParams {
  bool max = true;  // ArgMax; false: ArgMin
  std::int64_t axis = 0;
  bool keepdims = true;
  bool select_last_index = false;
};
void arg_reduce(const ArgReduceParams& p, const Tensor& x, Tensor& y);
void softmax(std::int64_t axis, const Tensor& x, Tensor& y);
// LogSoftmax: x - max - log(sum(exp(x - max))) along axis, in double.
void log_softmax(std::int64_t axis, const Tensor& x, Tensor& y);
// Hardmax (opset 13, reference/hardmax.cpp): 1 at the first largest element
// of each line along axis, 0 elsewhere (floats; a NaN counts as largest, as
// for ArgMax).
void hardmax(std::int64_t axis, const Tensor& x, Tensor& y);
struct CumSumParams {
  bool exclusive = false;  // each sum leaves out its own element
  bool reverse = false;    // sums run from the end of the axis
};
// CumSum (opset 14, reference/cumsum.cpp): running sums of x (f32, f64, i64,
// i32) along the axis held by `axis`, a 0-D i64/i32 tensor read at run time
// (negative from the end). Floats sum in double; integers wrap.
void cumsum(const CumSumParams& p, const Tensor& x, const Tensor& axis, Tensor& y);
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
// GatherElements: y shaped like indices (i64/i32, data's rank, no larger than
// data off the axis), y[i] = data[i with i[axis] = indices[i]]; negative
// indices count from the end, out-of-range ones are an Error(Input).
void gather_elements(std::int64_t axis, const Tensor& data, const Tensor& indices, Tensor& y);
// GatherND (opset 13, reference/gather_nd.cpp): data of rank r, i64
// indices of rank q whose last dim k (in [1, r - b]) is the length of each
// index tuple; the first b = batch_dims dims (b < min(q, r)) of data and
// indices are equal and pair the tuples with their batch. y is
// indices.shape[:-1] + data.shape[b + k:], each tuple's slice of data.
// Negative indices count from the end; out-of-range ones are an Error(Input).
void gather_nd(std::int64_t batch_dims, const Tensor& data, const Tensor& indices, Tensor& y);
// How ScatterND and ScatterElements combine an update with the element it
// lands on (the `reduction` attribute, opsets 16 and 18): None replaces it.
// Integers add and multiply with wraparound; for bool, Add and Max are or,
// Mul and Min are and, as NumPy computes them.
enum class ScatterReduction { None, Add, Mul, Max, Min };
// ScatterND (opset 18, reference/scatter_nd.cpp): y is a copy of data (rank
// r) where each tuple of the i64 indices (last dim k in [1, r]) names a
// slice data.shape[k:] that takes the matching slice of updates (shape
// indices.shape[:-1] + data.shape[k:]), tuples in order, so with None a
// repeated tuple keeps its last update. Max and Min are NumPy's maximum and
// minimum, which keep a NaN from either side, as ONNX's reference does.
void scatter_nd(ScatterReduction reduction, const Tensor& data, const Tensor& indices, const Tensor& updates,
                Tensor& y);
// ScatterElements (opset 18, reference/scatter_elements.cpp): the inverse of
// GatherElements. y is a copy of data where element i of updates (shaped
// like the i64/i32 indices, data's rank, no larger than data off the axis)
// lands on i with i[axis] replaced by indices[i], in row-major order of i.
// Max and Min are Python's max and min, as ONNX's reference uses: an update
// replaces the element only when strictly larger (smaller), so a NaN neither
// replaces nor is replaced.
void scatter_elements(std::int64_t axis, ScatterReduction reduction, const Tensor& data, const Tensor& indices,
                      const Tensor& updates, Tensor& y);
// Trilu (opset 14, reference/trilu.cpp): each matrix of the last two dims
// (rank >= 2, any dtype) keeps element (i, j) where j - i >= k (upper) or
// j - i <= k (lower) and is 0 elsewhere; k is an optional 0-D i64 tensor
// read at run time (nullptr or undefined: 0).
void trilu(bool upper, const Tensor& x, const Tensor* k, Tensor& y);
// DepthToSpace (opset 13, reference/depth_space.cpp): x [N, C, H, W] (any
// dtype) to [N, C/(b*b), H*b, W*b]. DCR takes a pixel's block offset from
// the outer part of the channel index, CRD from the inner part. A rank other
// than 4, b < 1 or a C that b*b does not divide is Error(Shape).
void depth_to_space(std::int64_t blocksize, bool crd, const Tensor& x, Tensor& y);
// SpaceToDepth (opset 13, reference/depth_space.cpp): x [N, C, H, W] to
// [N, C*b*b, H/b, W/b], the inverse of DCR; b must divide H and W.
void space_to_depth(std::int64_t blocksize, const Tensor& x, Tensor& y);
// EyeLike (opset 9, reference/eye_like.cpp): y of 2-D x's shape and of
// `dtype` (nullopt: x's dtype), 1 where column - row == k, 0 elsewhere.
void eye_like(std::optional<DType> dtype, std::int64_t k, const Tensor& x, Tensor& y);
// OneHot (opset 11, reference/one_hot.cpp): y of indices' shape with a new
// axis of `depth` entries at `axis` (in [-r-1, r]), of values' dtype: on
// (values[1]) where the new axis equals the index, off (values[0]) elsewhere.
// indices are f32, f64, i64 or i32 (floats truncated toward zero); negative
// ones count from the end (index + depth); one outside [-depth, depth) gives
// all off. depth: one number (0-D or 1-D), at least 1.
void one_hot(std::int64_t axis, const Tensor& indices, const Tensor& depth, const Tensor& values, Tensor& y);
struct TopKParams {
  std::int64_t axis = -1;
  bool largest = true;
  bool sorted = true;  // false lets any order through; these kernels always sort
};
// TopK (opset 11, reference/top_k.cpp): the k largest (smallest) elements
// of each line along axis of x (f32, f64, i64, i32) and their i64 indices,
// ordered by value; equal values keep the lower index first, as ONNX's
// reference does. A NaN counts as larger than every number (as for ArgMax),
// so NaNs come first with largest and last without. k: a 1-D i64 tensor of
// one element in [0, dim].
void top_k(const TopKParams& p, const Tensor& x, const Tensor& k, Tensor& values, Tensor& indices);
void squeeze(const Tensor& x, const Tensor* axes, Tensor& y);
void unsqueeze(const Tensor& x, const Tensor& axes, Tensor& y);
// y = i64 1-D shape of x, dims [start, end) with ONNX clamping; end nullopt: rank.
void shape_of(const Tensor& x, std::int64_t start, std::optional<std::int64_t> end, Tensor& y);
// y = i64 scalar holding x's element count (any dtype).
void size_of(const Tensor& x, Tensor& y);
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

// --- Ops that ONNX exporters emit for MLPs and conv nets ---------------------
// reference/elementwise_extra.cpp
enum class LogicalOp { And, Or, Xor };
// y = !x on bool tensors.
void logical_not(const Tensor& x, Tensor& y);
// y = isnan(x) (nan), else y = isinf(x) for the signs asked for (IsNaN, IsInf); floats in, bool out.
void float_test(bool nan, bool negative_inf, bool positive_inf, const Tensor& x, Tensor& y);
// y = a op b on bool tensors with NumPy broadcasting.
void logical(LogicalOp op, const Tensor& a, const Tensor& b, Tensor& y);
// ONNX Mod with broadcasting. fmod: C fmod (sign of the dividend); else the
// remainder takes the divisor's sign. Integer mod by zero is Error(Input).
void mod(bool fmod, const Tensor& a, const Tensor& b, Tensor& y);
// Inference-mode Dropout: y = x, mask (optional) all true; a true
// training_mode is Error(Input).
void dropout(const Tensor& x, const Tensor* training_mode, Tensor& y, Tensor* mask);

// reference/resize.cpp
enum class ResizeMode { Nearest, Linear, Cubic };
enum class ResizeCoordinateMode {
  HalfPixel, PytorchHalfPixel, AlignCorners, Asymmetric, TfHalfPixelForNearest, TfCropAndResize
};
enum class ResizeNearestMode { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };
struct ResizeParams {
  ResizeMode mode = ResizeMode::Nearest;
  ResizeCoordinateMode coordinate_mode = ResizeCoordinateMode::HalfPixel;
  ResizeNearestMode nearest_mode = ResizeNearestMode::RoundPreferFloor;
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0.0;  // tf_crop_and_resize, outside the input
};
// ONNX Resize (opset 13) of a float x: by `scales` (f32, one per dim; output
// dims floor(dim * scale)) or to `sizes` (i64, one per dim), exactly one of
// them given and not empty; `roi` (starts then ends, normalised) is read by
// tf_crop_and_resize only. Computed as ONNX's reference implementation does.
void resize(const ResizeParams& p, const Tensor& x, const Tensor* roi, const Tensor* scales, const Tensor* sizes,
            Tensor& y);

// reference/generators.cpp
// y of the shape held by `shape` (1-D i64), filled with value's one element
// (value undefined: f32 0).
void constant_of_shape(const Tensor& shape, const Tensor& value, Tensor& y);
// y = [start, start + delta, ...) up to limit; scalars of one numeric dtype.
void range(const Tensor& start, const Tensor& limit, const Tensor& delta, Tensor& y);

// reference/pad_tile_split.cpp
// y = x repeated repeats[k] times along each dim k (repeats 1-D i64, one per dim).
void tile(const Tensor& x, const Tensor& repeats, Tensor& y);
enum class PadMode { Constant, Reflect, Edge };
// ONNX Pad (opset 13): pads [begin..., end...] (negative crops); value: the
// optional scalar of x's dtype for constant mode (default 0).
void pad(PadMode mode, const Tensor& x, const Tensor& pads, const Tensor* value, Tensor& y);
// ONNX Split (opset 13) into outputs.size() parts along axis: sizes from
// `split` (1-D i64) or equal parts, which must divide the dim.
void split(std::int64_t axis, const Tensor& x, const Tensor* split, std::span<Tensor* const> outputs);

// --- Pooling, normalisation, GRU and RNN (conv and recurrent nets) ----------
// reference/pool.cpp
enum class PoolOp { Max, Average };
struct PoolParams {
  PoolOp op = PoolOp::Max;
  std::vector<std::int64_t> kernel_shape;  // one per spatial axis (required)
  std::vector<std::int64_t> strides;       // empty: all 1
  std::vector<std::int64_t> pads;          // empty: all 0; else begins then ends (2 * spatial)
  std::vector<std::int64_t> dilations;     // empty: all 1
  AutoPad auto_pad = AutoPad::NotSet;
  bool ceil_mode = false;          // output length rounded up; a last window starting in the end padding is dropped
  bool count_include_pad = false;  // Average: divide by the taps inside the padded input, not only the real ones
  bool channels_last = false;      // x and y are [N, spatial..., C]
};
// 1-D (x [N, C, W]) and 2-D (x [N, C, H, W]) max or average pooling. Padding
// never wins a max; an average window without real elements gives NaN.
void pool(const PoolParams& p, const Tensor& x, Tensor& y);
// y [N, C, 1, ...] = mean of x [N, C, spatial...] over the spatial axes (rank >= 3).
void global_average_pool(const Tensor& x, Tensor& y);

// reference/batch_norm.cpp
struct BatchNormParams {
  double epsilon = 1e-5;
};
// Inference-form BatchNormalization over x [N, C, ...] with per-channel
// scale, bias, mean, var [C]: y = (x - mean) / sqrt(var + epsilon) * scale + bias.
void batch_norm(const BatchNormParams& p, const Tensor& x, const Tensor& scale, const Tensor& bias,
                const Tensor& mean, const Tensor& var, Tensor& y);

// reference/gru.cpp
enum class GruDirection { Forward, Reverse, Bidirectional };
struct GruParams {
  std::int64_t hidden_size = 0;
  GruDirection direction = GruDirection::Forward;
  std::optional<double> clip;
  bool linear_before_reset = false;
  std::int64_t layout = 0;  // 0: X [T, B, I]; 1: X [B, T, I]
};
// ONNX GRU with the default activations (sigmoid, tanh), gates z r h, W [D, 3H, I],
// R [D, 3H, H], optional bias B [D, 6H], sequence_lens [B], initial_h [D, B, H].
// Outputs Y [T, D, B, H], Y_h [D, B, H] (layout 1: batch first; either may be null).
// Steps past a batch entry's sequence length leave its state unchanged and write zeros to Y.
void gru(const GruParams& p, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
         const Tensor* sequence_lens, const Tensor* initial_h, Tensor* y, Tensor* y_h);

// reference/rnn.cpp
enum class RnnDirection { Forward, Reverse, Bidirectional };
enum class RnnActivation { Tanh, Relu, Sigmoid };
struct RnnParams {
  std::int64_t hidden_size = 0;
  RnnDirection direction = RnnDirection::Forward;
  std::optional<double> clip;  // bounds the activation's input to [-clip, clip]
  std::int64_t layout = 0;     // 0: X [T, B, I]; 1: X [B, T, I]
  // One per direction, forward first; a single entry serves every direction.
  std::vector<RnnActivation> activations{RnnActivation::Tanh};
};
// ONNX RNN (Elman): h_t = f(W x_t + R h_{t-1} + Wb + Rb) with W [D, H, I],
// R [D, H, H], optional bias B [D, 2H], sequence_lens [B], initial_h [D, B, H].
// Outputs Y [T, D, B, H], Y_h [D, B, H] (layout 1: batch first; either may be null).
// Steps past a batch entry's sequence length leave its state unchanged and write zeros to Y.
void rnn(const RnnParams& p, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
         const Tensor* sequence_lens, const Tensor* initial_h, Tensor* y, Tensor* y_h);

// reference/lrn.cpp
struct LrnParams {
  double alpha = 1e-4;
  double beta = 0.75;
  double bias = 1.0;
  std::int64_t size = 1;  // channels in the window, >= 1
};
// ONNX LRN over x [N, C, spatial...] (rank >= 3): y = x / (bias + alpha / size *
// sum of x^2 over channels [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)]) ^ beta,
// the window clipped to [0, C). Sums in double.
void lrn(const LrnParams& p, const Tensor& x, Tensor& y);

}  // namespace canary::kernels
