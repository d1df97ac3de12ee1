// The f32 ONNX LSTM on oneDNN's sgemm and a vectorised cell update, with
// nothing created per shape.
//
// Per direction: one product projects every step's input, G = X W^T (T*B
// rows), then each step adds h R^T onto its rows of G (beta 1) and the cell
// update (kernels/onednn/lstm_cell.h) turns them into the new c and h, which
// also go to Y. sgemm takes every dim per call, so a new batch size or window
// costs what its arithmetic costs. oneDNN's lstm_forward, which this
// replaces, is a primitive per (T, B): on the vehicle model the first call at
// each new shape of a 40-shape stream cost 4.3x a repeat call (7.1 ms against
// 1.6 ms, the primitive's first execution 24 ms against 1.8 ms at T 94, B 52).
//
// Weights: W and R are transposed into [K][4H] per direction (gates kept in
// ONNX order i, o, f, c) and the bias is Wb + Rb. That conversion runs on
// every call unless the caller marks the weights constant: then it is kept in
// the per-thread LSTM weight cache (kernels/onednn/lstm_weight_cache.h),
// keyed by the source buffers, which each entry holds so they stay unchanged
// and their addresses cannot be reused while it exists.
//
// Cases left to the reference kernel (false): any sequence length below T,
// and every shape or dtype the reference kernel would reject.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/onednn.h"
#include "kernels/onednn/lstm_cell.h"
#include "kernels/onednn/lstm_weight_cache.h"
#include "kernels/onednn/primitive_cache.h"
#include "kernels/onednn/scratch_buffer.h"
#include "kernels/onednn/scratch_limit.h"
#include "kernels/onednn/threading.h"

namespace canary::kernels {
namespace {

using onednn::LstmWeights;

// Dimensions of one LSTM call.
struct LstmPlan {
  std::int64_t seq = 0, batch = 0, input = 0, hidden = 0, directions = 1, layout = 0;
  LstmDirection direction = LstmDirection::Forward;

  // Flops of one step's recurrent product (4 gates): the serial part, which
  // decides whether a second thread pays.
  double step_flops() const { return 8.0 * static_cast<double>(batch) * static_cast<double>(hidden * hidden); }
  // Flops of one direction's input projection.
  double projection_flops() const {
    return 8.0 * static_cast<double>(seq * batch) * static_cast<double>(input * hidden);
  }
  // Where step t's gate rows start in G, and the distance between rows: G's
  // rows follow X's, (t, b) in layout 0 and (b, t) in layout 1.
  std::int64_t gate_offset(std::int64_t t) const { return (layout == 0 ? t * batch : t) * 4 * hidden; }
  std::int64_t gate_stride() const { return (layout == 0 ? 1 : seq) * 4 * hidden; }
  // The same for direction d's rows of Y: [T, D, B, H] in layout 0, [B, T, D, H] in layout 1.
  std::int64_t y_offset(std::int64_t t, std::int64_t d) const {
    return (layout == 0 ? (t * directions + d) * batch : t * directions + d) * hidden;
  }
  std::int64_t y_stride() const { return (layout == 0 ? 1 : seq * directions) * hidden; }
  // The same for direction d's rows of a state: [D, B, H] in layout 0, [B, D, H] in layout 1.
  std::int64_t state_offset(std::int64_t d) const { return (layout == 0 ? d * batch : d) * hidden; }
  std::int64_t state_stride() const { return (layout == 0 ? 1 : directions) * hidden; }
};

// Per-thread buffers: per-call converted weights, G, and one direction's states.
struct LstmScratch {
  LstmWeights weights;
  onednn::UninitializedFloats gates;
  std::vector<float> h, c;
};

// The calling thread's scratch buffers.
LstmScratch& thread_scratch() {
  thread_local LstmScratch scratch;
  return scratch;
}

// True when t is null or an f32 tensor of exactly `shape`.
bool optional_f32_of_shape(const Tensor* t, const Shape& shape) {
  return t == nullptr || (t->dtype() == DType::F32 && t->shape() == shape);
}

// True when every sequence length equals T (absent sequence_lens counts as all T).
bool full_lengths(const Tensor* lens, const LstmPlan& g) {
  if (lens == nullptr) return true;
  if ((lens->dtype() != DType::I32 && lens->dtype() != DType::I64) || lens->shape() != Shape{g.batch}) return false;
  for (std::int64_t i = 0; i < g.batch; ++i)
    if (lens->element_as_double(i) != static_cast<double>(g.seq)) return false;
  return true;
}

// Derives the dims and checks every input; false where this kernel does not run the case.
bool plan_lstm(const LstmParams& p, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
               const Tensor* lens, const Tensor* h0, const Tensor* c0, const Tensor* peep, LstmPlan& g) {
  if (p.layout != 0 && p.layout != 1) return false;
  if (x.dtype() != DType::F32 || w.dtype() != DType::F32 || r.dtype() != DType::F32 || x.rank() != 3) return false;
  g.layout = p.layout;
  g.direction = p.direction;
  g.seq = p.layout == 0 ? x.dim(0) : x.dim(1);
  g.batch = p.layout == 0 ? x.dim(1) : x.dim(0);
  g.input = x.dim(2);
  g.directions = p.direction == LstmDirection::Bidirectional ? 2 : 1;
  g.hidden = p.hidden_size > 0 ? p.hidden_size : (r.rank() == 3 ? r.dim(2) : 0);
  if (g.seq <= 0 || g.batch <= 0 || g.input <= 0 || g.hidden <= 0) return false;
  const std::int64_t D = g.directions, H = g.hidden;
  if (H > std::numeric_limits<std::int64_t>::max() / 8) return false;  // keeps 8 * H below in range
  if (w.shape() != Shape{D, 4 * H, g.input} || r.shape() != Shape{D, 4 * H, H}) return false;
  const Shape state = p.layout == 0 ? Shape{D, g.batch, H} : Shape{g.batch, D, H};
  if (!optional_f32_of_shape(b, Shape{D, 8 * H}) || !optional_f32_of_shape(h0, state) ||
      !optional_f32_of_shape(c0, state) || !optional_f32_of_shape(peep, Shape{D, 3 * H}))
    return false;
  return onednn::scratch_fits_limit({g.seq, g.batch, 4, H}) && full_lengths(lens, g);
}

// Transposes ONNX weights [D, 4H, K] into [D][K][4H], so one step's product
// is h [B, K] times a plain [K, 4H] matrix. Works on blocks of 16 gate rows so
// that both reads and writes stay sequential.
void transpose_weights(const float* src, std::int64_t D, std::int64_t H, std::int64_t K, std::vector<float>& dst) {
  constexpr std::int64_t kBlock = 16;
  const std::int64_t rows = 4 * H;
  dst.resize(static_cast<std::size_t>(D * K * rows));
  for (std::int64_t d = 0; d < D; ++d) {
    const float* in = src + d * rows * K;
    float* out = dst.data() + d * K * rows;
    for (std::int64_t o0 = 0; o0 < rows; o0 += kBlock) {
      const std::int64_t end = std::min(rows, o0 + kBlock);
      for (std::int64_t k = 0; k < K; ++k)
        for (std::int64_t o = o0; o < end; ++o) out[k * rows + o] = in[o * K + k];
    }
  }
}

// Bias [D][4H] = Wb + Rb from ONNX B [D, 8H]; zeros when absent.
void sum_bias(const Tensor* b, std::int64_t D, std::int64_t H, std::vector<float>& dst) {
  dst.assign(static_cast<std::size_t>(D * 4 * H), 0.0f);
  if (b == nullptr) return;
  const float* pb = b->data<float>();
  for (std::int64_t d = 0; d < D; ++d)
    for (std::int64_t k = 0; k < 4 * H; ++k) dst[static_cast<std::size_t>(d * 4 * H + k)] = pb[d * 8 * H + k] + pb[d * 8 * H + 4 * H + k];
}

// Converts W, R and B.
void convert_all(const LstmPlan& g, const Tensor& w, const Tensor& r, const Tensor* b, LstmWeights& out) {
  transpose_weights(w.data<float>(), g.directions, g.hidden, g.input, out.layer);
  transpose_weights(r.data<float>(), g.directions, g.hidden, g.hidden, out.iter);
  sum_bias(b, g.directions, g.hidden, out.bias);
}

// The converted weights for this call: from the thread's weight cache when the
// caller marks them constant and they are Canary-owned, else converted into scratch.
const LstmWeights& lstm_weights(const LstmPlan& g, const Tensor& w, const Tensor& r, const Tensor* b,
                                bool weights_are_constant) {
  if (weights_are_constant && onednn::LstmWeightCache::cacheable(w, r, b)) {
    onednn::LstmWeightCache& cache = onednn::thread_lstm_weight_cache();
    const onednn::LstmWeightsKey key{w.raw(), r.raw(), b ? b->raw() : nullptr, g.directions,
                                     g.hidden, g.input, static_cast<std::int64_t>(g.direction)};
    if (const LstmWeights* hit = cache.find(key, w, r, b)) return *hit;
    LstmWeights converted;
    convert_all(g, w, r, b, converted);
    return cache.insert(key, w, r, b, std::move(converted));
  }
  LstmWeights& scratch = thread_scratch().weights;
  convert_all(g, w, r, b, scratch);
  return scratch;
}

// C [M, N] (row stride ldc) = A [M, K] (row stride lda) B [K, N] + beta C, row-major, on oneDNN's sgemm.
void gemm(std::int64_t M, std::int64_t N, std::int64_t K, const float* A, std::int64_t lda, const float* B,
          float beta, float* C, std::int64_t ldc) {
  dnnl::error::wrap_c_api(dnnl_sgemm('N', 'N', M, N, K, 1.0f, A, lda, B, N, beta, C, ldc), "could not run sgemm");
}

// Copies `rows` rows of H floats between a strided and a dense layout.
void copy_rows(const float* src, std::int64_t src_stride, std::int64_t rows, std::int64_t H, float* dst,
               std::int64_t dst_stride) {
  for (std::int64_t b = 0; b < rows; ++b) std::copy_n(src + b * src_stride, H, dst + b * dst_stride);
}

// Runs direction d over all steps: writes its rows of Y and its final states.
void run_direction(const LstmParams& p, const LstmPlan& g, const LstmWeights& weights, std::int64_t d,
                   const Tensor& x, const Tensor* peep, const Tensor* h0, const Tensor* c0, Tensor* y, Tensor* y_h,
                   Tensor* y_c) {
  LstmScratch& s = thread_scratch();
  const std::int64_t B = g.batch, H = g.hidden, rows = 4 * H;
  float* all_gates = s.gates.reserve(static_cast<std::size_t>(g.seq * B * rows));
  s.h.assign(static_cast<std::size_t>(B * H), 0.0f);
  s.c.assign(static_cast<std::size_t>(B * H), 0.0f);
  if (h0) copy_rows(h0->data<float>() + g.state_offset(d), g.state_stride(), B, H, s.h.data(), H);
  if (c0) copy_rows(c0->data<float>() + g.state_offset(d), g.state_stride(), B, H, s.c.data(), H);
  {
    const onednn::SerialWhenSmall threads(g.projection_flops());
    gemm(g.seq * B, rows, g.input, x.data<float>(), g.input, weights.layer.data() + d * g.input * rows, 0.0f,
         all_gates, rows);
  }
  onednn::LstmCellRows cell;
  cell.gates_stride = g.gate_stride();
  cell.bias = weights.bias.data() + d * rows;
  cell.peepholes = peep ? peep->data<float>() + d * 3 * H : nullptr;
  cell.clip = p.clip ? static_cast<float>(*p.clip) : std::numeric_limits<float>::infinity();
  cell.input_forget = p.input_forget;
  cell.y_stride = g.y_stride();
  cell.hidden = H;
  const bool reverse = g.direction == LstmDirection::Reverse || d == 1;
  const float* r_t = weights.iter.data() + d * H * rows;
  // Batch entries never meet, so each thread runs a block of them through every step.
  onednn::for_row_blocks(B, g.step_flops() * static_cast<double>(g.seq), [&](std::int64_t b0, std::int64_t b1) {
    const onednn::SerialWhenSmall small_steps(g.step_flops());  // when all rows run here
    onednn::LstmCellRows step = cell;
    step.rows = b1 - b0;
    step.c = s.c.data() + b0 * H;
    step.h = s.h.data() + b0 * H;
    for (std::int64_t i = 0; i < g.seq; ++i) {
      const std::int64_t t = reverse ? g.seq - 1 - i : i;
      float* gates = all_gates + g.gate_offset(t) + b0 * g.gate_stride();
      gemm(step.rows, rows, H, step.h, H, r_t, 1.0f, gates, g.gate_stride());
      step.gates = gates;
      step.y = y ? y->data<float>() + g.y_offset(t, d) + b0 * g.y_stride() : nullptr;
      onednn::lstm_cell_rows(step);
    }
  });
  if (y_h) copy_rows(s.h.data(), H, B, H, y_h->data<float>() + g.state_offset(d), g.state_stride());
  if (y_c) copy_rows(s.c.data(), H, B, H, y_c->data<float>() + g.state_offset(d), g.state_stride());
}

// Sizes the requested outputs like the reference kernel.
void reset_outputs(const LstmPlan& g, Tensor* y, Tensor* y_h, Tensor* y_c) {
  const std::int64_t D = g.directions, B = g.batch, H = g.hidden;
  const Shape state = g.layout == 0 ? Shape{D, B, H} : Shape{B, D, H};
  if (y) y->reset(DType::F32, g.layout == 0 ? Shape{g.seq, D, B, H} : Shape{B, g.seq, D, H});
  if (y_h) y_h->reset(DType::F32, state);
  if (y_c) y_c->reset(DType::F32, state);
}

// True when any output tensor is also one of the inputs.
bool outputs_alias_inputs(std::initializer_list<const Tensor*> inputs, std::initializer_list<const Tensor*> outputs) {
  for (const Tensor* o : outputs)
    if (o && std::find(inputs.begin(), inputs.end(), o) != inputs.end()) return true;
  return false;
}

}  // namespace

// The LSTM into whichever of y, y_h, y_c are requested, or false when the case does not apply.
bool onednn_lstm(const LstmParams& p, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
                 const Tensor* sequence_lens, const Tensor* initial_h, const Tensor* initial_c,
                 const Tensor* peepholes, Tensor* y, Tensor* y_h, Tensor* y_c, bool weights_are_constant) {
  onednn::thread_primitive_cache().count_call();
  LstmPlan g;
  if (!plan_lstm(p, x, w, r, b, sequence_lens, initial_h, initial_c, peepholes, g)) return false;
  if (outputs_alias_inputs({&x, &w, &r, b, sequence_lens, initial_h, initial_c, peepholes}, {y, y_h, y_c}))
    return false;
  try {
    const LstmWeights& weights = lstm_weights(g, w, r, b, weights_are_constant);
    reset_outputs(g, y, y_h, y_c);
    for (std::int64_t d = 0; d < g.directions; ++d)
      run_direction(p, g, weights, d, x, peepholes, initial_h, initial_c, y, y_h, y_c);
  } catch (const dnnl::error&) {
    return false;
  }
  LstmScratch& s = thread_scratch();
  s.gates.release_if_large();
  onednn::release_large_scratch({&s.h, &s.c});
  return true;
}

}  // namespace canary::kernels
