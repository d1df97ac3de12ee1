// oneDNN-backed f32 kernels for MatMul, Gemm, Conv, LSTM, GRU, Softmax,
// LayerNormalization, BatchNormalization and pooling, with plain types only
// (no oneDNN headers leak out of kernels/onednn/).
//
// Each kernel returns false, leaving y untouched or reset, when its case does
// not apply: a dtype other than f32, invalid shapes or attributes (so the
// reference kernel reports the error with its own message), a case oneDNN
// cannot express, or any oneDNN error. The caller then runs the reference
// kernel, which stays the oracle and the only path for f64. On success the
// output shape is exactly the reference kernel's.
//
// Primitives are kept in a per-thread LRU cache keyed by op kind, shapes and
// attributes (kernels/onednn/primitive_cache.h); the functions below read and
// control the calling thread's cache.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "canary/tensor.h"
#include "kernels/reference.h"

namespace canary::kernels {

// Unary ops a MatMul, Gemm or Conv can apply to its result before storing it
// (oneDNN eltwise post-ops), so an elementwise op after the contraction costs
// no pass over memory of its own. Each gives the reference kernel's result
// of the same op, NaN and infinities included; Tanh and Sigmoid to a few ulp
// (tests/kernels/test_onednn_epilogue.cpp). oneDNN 2.6 turns NaN into 0 in
// Relu and into the lower bound in Clip, so with either of those in an
// epilogue the kernels first check that the contraction cannot produce a NaN
// (finite operands no larger than 2^100, whose products summed before any
// scale stay below 2^100) and return false otherwise. Signed zeros may come
// out with the other sign (Relu of -0 gives +0, the reference keeps -0).
// Exp, Log, Softplus and GELU are not offered: oneDNN's versions give Inf for
// NaN or err by far more than the reference kernels. (The JIT plans only
// Relu, LeakyRelu, Clip and Abs epilogues: the Tanh, Sigmoid and Sqrt
// post-ops slow the contraction by more than a fused kernel after it costs.)
enum class EpilogueOp : std::uint8_t {
  Relu,       // v < 0 ? 0 : v
  LeakyRelu,  // v < 0 ? alpha * v : v (alpha != 0)
  Clip,       // clamp(v, alpha, beta), alpha <= beta
  Abs,
  Sqrt,
  Tanh,
  Sigmoid,
};
std::string_view epilogue_op_name(EpilogueOp op);

struct EpilogueStep {
  EpilogueOp op = EpilogueOp::Relu;
  float alpha = 0.0f, beta = 0.0f;
};

// The ops applied in order to every element of the result; empty: none.
struct Epilogue {
  static constexpr std::size_t kMaxSteps = 4;
  std::array<EpilogueStep, kMaxSteps> steps{};
  std::size_t size = 0;

  bool empty() const { return size == 0; }
  // Appends a step; false (and unchanged) when kMaxSteps are taken.
  bool append(EpilogueStep step);
};

// NumPy matmul of f32 a and b (batch broadcasting, 1-D operands) into y,
// then the epilogue.
bool onednn_matmul(const Tensor& a, const Tensor& b, Tensor& y, const Epilogue& epilogue = {});
// matmul(a, b) + addend, then the epilogue, in one call (a binary post-op):
// a MatMul with its bias or residual Add. The addend (f32) broadcasts into
// the product's shape (NumPy, right-aligned, each dim equal or 1; never the
// other way); a and b are at least 2-D. False where that does not hold, or
// where the epilogue needs a finite result it cannot be sure of.
bool onednn_matmul_add(const Tensor& a, const Tensor& b, const Tensor& addend, Tensor& y,
                       const Epilogue& epilogue = {});
// ONNX Gemm of f32 a, b and optional c into y, then the epilogue.
bool onednn_gemm(const GemmParams& p, const Tensor& a, const Tensor& b, const Tensor* c, Tensor& y,
                 const Epilogue& epilogue = {});
// 1-D or 2-D f32 convolution with optional bias into y, then the epilogue.
// 1-D convolutions with stride 1 and one group run on channels-last kernels
// through one primitive for every batch and width (kernels/onednn/conv_tiled.h).
// weights_are_constant: as for onednn_lstm (the blocked weight copy is kept).
bool onednn_conv(const ConvParams& p, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y,
                 bool weights_are_constant = false, const Epilogue& epilogue = {});
// ConvTranspose (same arguments as kernels::conv_transpose) on oneDNN's f32
// deconvolution, the batch in power-of-two chunks like pooling
// (kernels/onednn/conv_transpose.cpp). Does not apply to other dtypes or
// to a derived negative begin padding.
bool onednn_conv_transpose(const ConvTransposeParams& p, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y);
// ONNX LSTM (same arguments as kernels::lstm) on oneDNN's sgemm and a
// vectorised cell update (kernels/onednn/lstm.cpp): nothing is created per
// shape. Does not apply to a sequence_lens entry < T.
// weights_are_constant: the caller guarantees that w, r and b (when present)
// are never written while any tensor shares their buffers (model constants);
// their transposed copy is then kept in the calling thread's LSTM weight
// cache instead of being redone on every call. Otherwise, or for
// wrapped (caller-owned) buffers, the weights are converted per call.
bool onednn_lstm(const LstmParams& p, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
                 const Tensor* sequence_lens, const Tensor* initial_h, const Tensor* initial_c,
                 const Tensor* peepholes, Tensor* y, Tensor* y_h, Tensor* y_c, bool weights_are_constant = false);
// Softmax of f32 x along axis (any axis) into y.
bool onednn_softmax(std::int64_t axis, const Tensor& x, Tensor& y);
// LayerNormalization of f32 x over dims [axis, rank), same arguments as
// kernels::layer_norm. Does not apply when scale or bias broadcast (fewer
// elements than the normalised dims).
bool onednn_layer_norm(const LayerNormParams& p, const Tensor& x, const Tensor& scale, const Tensor* bias, Tensor& y,
                       Tensor* mean, Tensor* inv_std);
// 1-D or 2-D f32 MaxPool / AveragePool into y (kernels/onednn/pool.cpp). Does
// not apply when a window holds no real input element, or when a ceil_mode
// window reaches past the end padding of a count_include_pad average. Max
// pooling of NaN inputs follows oneDNN, which need not propagate the NaN.
bool onednn_pool(const PoolParams& p, const Tensor& x, Tensor& y);
// f32 Transpose as a oneDNN reorder (kernels/onednn/transpose.cpp): a strided
// view of x copied into y's dense layout. False for other dtypes, ranks
// above DNNL_MAX_NDIMS, empty tensors and perms the reference rejects.
bool onednn_transpose(std::span<const std::int64_t> perm, const Tensor& x, Tensor& y);
// f32 ReduceSum / ReduceMean into y (kernels/onednn/reduce.cpp), summed in
// f32 by oneDNN, when the reduced dims end the shape once adjacent kept and
// reduced dims are merged (a mean over H and W of [N, C, H, W]); false
// otherwise, for ReduceMax (NaN propagation), empty tensors and axes the
// reference rejects.
bool onednn_reduce(const ReduceParams& p, const Tensor& x, Tensor& y);
// GlobalAveragePool of f32 x [N, C, spatial...] into y [N, C, 1, ...].
bool onednn_global_average_pool(const Tensor& x, Tensor& y);
// Inference BatchNormalization of f32 x [N, C, ...], same arguments as kernels::batch_norm.
bool onednn_batch_norm(const BatchNormParams& p, const Tensor& x, const Tensor& scale, const Tensor& bias,
                       const Tensor& mean, const Tensor& var, Tensor& y);
// ONNX GRU (same arguments as kernels::gru) on oneDNN's sgemm and a
// vectorised cell update (kernels/onednn/gru.cpp): nothing is created per
// shape and the weights are read in place. Does not apply to a
// sequence_lens entry < T.
bool onednn_gru(const GruParams& p, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
                const Tensor* sequence_lens, const Tensor* initial_h, Tensor* y, Tensor* y_h);

// While alive, the onednn_* kernels are used (enabled) or skipped (disabled:
// the callers run the reference kernels) on the constructing thread; the
// destructor restores the previous state. Options::use_onednn sets it per call.
class OnednnEnabledScope {
 public:
  explicit OnednnEnabledScope(bool enabled);
  ~OnednnEnabledScope();
  OnednnEnabledScope(const OnednnEnabledScope&) = delete;
  OnednnEnabledScope& operator=(const OnednnEnabledScope&) = delete;

 private:
  bool previous_;
};
// True unless an OnednnEnabledScope(false) is alive on the calling thread.
bool onednn_enabled();

// While alive, oneDNN kernels called on the constructing thread run on
// `threads` OpenMP threads (0: leave the current setting, by default
// OMP_NUM_THREADS or the core count); the destructor restores the previous
// setting. Other threads are unaffected. Primitives are cached per thread
// count, so changing it costs a primitive creation per shape.
class OnednnThreadScope {
 public:
  explicit OnednnThreadScope(int threads);
  ~OnednnThreadScope();
  OnednnThreadScope(const OnednnThreadScope&) = delete;
  OnednnThreadScope& operator=(const OnednnThreadScope&) = delete;

 private:
  int previous_;
  bool changed_;
};

// Counters of the calling thread's primitive cache.
struct OnednnCacheStats {
  std::uint64_t calls = 0;  // oneDNN kernel calls, whether they applied or not
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t evictions = 0;
  std::size_t size = 0;
  std::size_t capacity = 0;
  // The tiled channels-last 1-D convolutions (kernels/onednn/conv_tiled.h),
  // which keep their own shape-independent primitives outside the LRU.
  std::uint64_t tiled_conv_calls = 0;
  std::uint64_t tiled_conv_geometries = 0;  // created on this thread
  // Convolutions on oneDNN's blocked layouts, reordered at the op's edges
  // (kernels/onednn/conv_blocked.h), also kept outside the LRU.
  std::uint64_t blocked_conv_calls = 0;
  std::uint64_t blocked_conv_shapes = 0;  // created on this thread
  std::uint64_t winograd_conv_calls = 0;  // of blocked_conv_calls, run as Winograd
  // Gemm/MatMul calls run on a shape-class primitive whose row count is
  // bound per call (kernels/onednn/rows_class.h). Those primitives live
  // outside the LRU (capacity and evictions are the LRU's) but count in
  // hits, misses and size.
  std::uint64_t shape_class_calls = 0;
};

// Default number of primitives each thread keeps.
inline constexpr std::size_t kOnednnCacheCapacity = 256;

OnednnCacheStats onednn_cache_stats();
// Sets the calling thread's capacity (at least 1), evicting least recently used entries.
void onednn_set_cache_capacity(std::size_t capacity);
// Drops every primitive of the calling thread's cache and zeroes its counters (calls included).
void onednn_clear_cache();

// Generates the oneDNN gemm kernels that shape-class products
// (kernels/onednn/rows_class.h) run on: about 40 ms of one core, once per
// process, lazily on their first execution otherwise, which would land on
// the first call at a new batch size. Idempotent and thread-safe; errors
// are ignored (the first real call then pays, as it would have).
void onednn_warm_up_shape_classes();

// Counters of the calling thread's cache of converted constant LSTM weights.
struct OnednnLstmWeightCacheStats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;  // lookups of constant weights not yet converted
  std::uint64_t evictions = 0;
  std::size_t size = 0;
  std::size_t capacity = 0;
};

// Default number of converted LSTM weight sets each thread keeps.
inline constexpr std::size_t kOnednnLstmWeightCacheCapacity = 16;

OnednnLstmWeightCacheStats onednn_lstm_weight_cache_stats();
// Sets the calling thread's weight cache capacity (at least 1), evicting least recently used entries.
void onednn_set_lstm_weight_cache_capacity(std::size_t capacity);
// Drops every converted weight set of the calling thread (releasing the source
// tensors the entries hold) and zeroes its counters.
void onednn_clear_lstm_weight_cache();

}  // namespace canary::kernels
