// The f32 ONNX GRU on oneDNN's sgemm and a vectorised cell update, with
// nothing created per shape (the same scheme as kernels/onednn/lstm.cpp).
//
// Per direction: one product projects every step's input, G = X W^T (T*B
// rows, gates z, r, h), then each step multiplies the state by R^T into a
// small buffer S and the cell update (kernels/onednn/gru_cell.h) combines
// the two with the bias. With linear_before_reset 1 (what PyTorch exports)
// one product per step serves all three gates; with 0 the h gate's product
// takes r * h, so the step runs z and r first, then that product, then the
// rest. oneDNN's gru_forward, which this replaces, is a primitive per (T, B),
// whose first execution at a new shape cost several times a repeat.
//
// W and R are read in place (sgemm transposes them on the fly), so nothing
// is converted per call but the bias: [D][4H] = (Wbz + Rbz, Wbr + Rbr, Wbh,
// Rbh).
//
// Cases left to the reference kernel (false): any sequence length below T,
// and every shape or dtype the reference kernel would reject.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/onednn.h"
#include "kernels/onednn/gru_cell.h"
#include "kernels/onednn/primitive_cache.h"
#include "kernels/onednn/scratch_buffer.h"
#include "kernels/onednn/scratch_limit.h"
#include "kernels/onednn/threading.h"

namespace canary::kernels {
namespace {

// Dimensions of one GRU call and where each step's rows live (see LstmPlan).
struct GruPlan {
  std::int64_t seq = 0, batch = 0, input = 0, hidden = 0, directions = 1, layout = 0;
  GruDirection direction = GruDirection::Forward;
  bool linear_before_reset = false;

  // Flops of one step's recurrent product (3 gates): the serial part, which
  // decides whether a second thread pays.
  double step_flops() const { return 6.0 * static_cast<double>(batch) * static_cast<double>(hidden * hidden); }
  double projection_flops() const {
    return 6.0 * static_cast<double>(seq * batch) * static_cast<double>(input * hidden);
  }
  std::int64_t gate_offset(std::int64_t t) const { return (layout == 0 ? t * batch : t) * 3 * hidden; }
  std::int64_t gate_stride() const { return (layout == 0 ? 1 : seq) * 3 * hidden; }
  std::int64_t y_offset(std::int64_t t, std::int64_t d) const {
    return (layout == 0 ? (t * directions + d) * batch : t * directions + d) * hidden;
  }
  std::int64_t y_stride() const { return (layout == 0 ? 1 : seq * directions) * hidden; }
  std::int64_t state_offset(std::int64_t d) const { return (layout == 0 ? d * batch : d) * hidden; }
  std::int64_t state_stride() const { return (layout == 0 ? 1 : directions) * hidden; }
};

// Per-thread buffers: G, the step's recurrent products, the state, r * h and the bias.
struct GruScratch {
  onednn::UninitializedFloats gates;
  std::vector<float> recurrent, h, reset_hidden, bias;
};

GruScratch& thread_scratch() {
  thread_local GruScratch scratch;
  return scratch;
}

// True when t is null or an f32 tensor of exactly `shape`.
bool optional_f32_of_shape(const Tensor* t, const Shape& shape) {
  return t == nullptr || (t->dtype() == DType::F32 && t->shape() == shape);
}

// True when every sequence length equals T (absent sequence_lens counts as all T).
bool full_lengths(const Tensor* lens, const GruPlan& g) {
  if (lens == nullptr) return true;
  if ((lens->dtype() != DType::I32 && lens->dtype() != DType::I64) || lens->shape() != Shape{g.batch}) return false;
  for (std::int64_t i = 0; i < g.batch; ++i)
    if (lens->element_as_double(i) != static_cast<double>(g.seq)) return false;
  return true;
}

// Derives the dims and checks every input; false where this kernel does not run the case.
bool plan_gru(const GruParams& p, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
              const Tensor* lens, const Tensor* h0, GruPlan& g) {
  if (p.layout != 0 && p.layout != 1) return false;
  if (x.dtype() != DType::F32 || w.dtype() != DType::F32 || r.dtype() != DType::F32 || x.rank() != 3) return false;
  g.layout = p.layout;
  g.direction = p.direction;
  g.linear_before_reset = p.linear_before_reset;
  g.seq = p.layout == 0 ? x.dim(0) : x.dim(1);
  g.batch = p.layout == 0 ? x.dim(1) : x.dim(0);
  g.input = x.dim(2);
  g.directions = p.direction == GruDirection::Bidirectional ? 2 : 1;
  g.hidden = p.hidden_size > 0 ? p.hidden_size : (r.rank() == 3 ? r.dim(2) : 0);
  if (g.seq <= 0 || g.batch <= 0 || g.input <= 0 || g.hidden <= 0) return false;
  const std::int64_t D = g.directions, H = g.hidden;
  if (H > std::numeric_limits<std::int64_t>::max() / 8) return false;  // keeps 6 * H below in range
  if (w.shape() != Shape{D, 3 * H, g.input} || r.shape() != Shape{D, 3 * H, H}) return false;
  const Shape state = p.layout == 0 ? Shape{D, g.batch, H} : Shape{g.batch, D, H};
  if (!optional_f32_of_shape(b, Shape{D, 6 * H}) || !optional_f32_of_shape(h0, state)) return false;
  return onednn::scratch_fits_limit({g.seq, g.batch, 3, H}) && full_lengths(lens, g);
}

// Bias [D][4H] = (Wbz + Rbz, Wbr + Rbr, Wbh, Rbh) from ONNX B [D, 6H]; zeros when absent.
void split_bias(const GruPlan& g, const Tensor* b, std::vector<float>& dst) {
  const std::int64_t D = g.directions, H = g.hidden;
  dst.assign(static_cast<std::size_t>(D * 4 * H), 0.0f);
  if (b == nullptr) return;
  for (std::int64_t d = 0; d < D; ++d) {
    const float* wb = b->data<float>() + d * 6 * H;
    const float* rb = wb + 3 * H;
    float* out = dst.data() + d * 4 * H;
    for (std::int64_t i = 0; i < 2 * H; ++i) out[i] = wb[i] + rb[i];
    std::copy_n(wb + 2 * H, H, out + 2 * H);
    std::copy_n(rb + 2 * H, H, out + 3 * H);
  }
}

// C [M, N] (row stride ldc) = A [M, K] (row stride lda) times B^T, B given as
// [N, K] rows (an ONNX weight block), row-major, on oneDNN's sgemm.
void gemm_bt(std::int64_t M, std::int64_t N, std::int64_t K, const float* A, std::int64_t lda, const float* B,
             float* C, std::int64_t ldc) {
  dnnl::error::wrap_c_api(dnnl_sgemm('N', 'T', M, N, K, 1.0f, A, lda, B, K, 0.0f, C, ldc), "could not run sgemm");
}

// Copies `rows` rows of H floats between a strided and a dense layout.
void copy_rows(const float* src, std::int64_t src_stride, std::int64_t rows, std::int64_t H, float* dst,
               std::int64_t dst_stride) {
  for (std::int64_t b = 0; b < rows; ++b) std::copy_n(src + b * src_stride, H, dst + b * dst_stride);
}

// Runs direction d over all steps: writes its rows of Y and its final state.
void run_direction(const GruParams& p, const GruPlan& g, std::int64_t d, const Tensor& x, const Tensor& w,
                   const Tensor& r, const Tensor* h0, Tensor* y, Tensor* y_h) {
  GruScratch& s = thread_scratch();
  const std::int64_t B = g.batch, H = g.hidden, rows = 3 * H;
  float* all_gates = s.gates.reserve(static_cast<std::size_t>(g.seq * B * rows));
  s.recurrent.resize(static_cast<std::size_t>(B * rows));
  s.h.assign(static_cast<std::size_t>(B * H), 0.0f);
  s.reset_hidden.resize(static_cast<std::size_t>(B * H));
  if (h0) copy_rows(h0->data<float>() + g.state_offset(d), g.state_stride(), B, H, s.h.data(), H);
  const float* w_d = w.data<float>() + d * rows * g.input;
  const float* r_d = r.data<float>() + d * rows * H;
  {
    const onednn::SerialWhenSmall threads(g.projection_flops());
    gemm_bt(g.seq * B, rows, g.input, x.data<float>(), g.input, w_d, all_gates, rows);
  }
  onednn::GruCellRows cell;
  cell.gates_stride = g.gate_stride();
  cell.bias = s.bias.data() + d * 4 * H;
  cell.clip = p.clip ? static_cast<float>(*p.clip) : std::numeric_limits<float>::infinity();
  cell.y_stride = g.y_stride();
  cell.hidden = H;
  const bool reverse = g.direction == GruDirection::Reverse || d == 1;
  // Batch entries never meet, so each thread runs a block of them through every step.
  onednn::for_row_blocks(B, g.step_flops() * static_cast<double>(g.seq), [&](std::int64_t b0, std::int64_t b1) {
    const onednn::SerialWhenSmall small_steps(g.step_flops());  // when all rows run here
    onednn::GruCellRows step = cell;
    step.rows = b1 - b0;
    step.recurrent = s.recurrent.data() + b0 * rows;
    step.h = s.h.data() + b0 * H;
    step.reset_hidden = s.reset_hidden.data() + b0 * H;
    for (std::int64_t i = 0; i < g.seq; ++i) {
      const std::int64_t t = reverse ? g.seq - 1 - i : i;
      step.gates = all_gates + g.gate_offset(t) + b0 * g.gate_stride();
      step.y = y ? y->data<float>() + g.y_offset(t, d) + b0 * g.y_stride() : nullptr;
      if (g.linear_before_reset) {
        gemm_bt(step.rows, rows, H, step.h, H, r_d, step.recurrent, rows);
        onednn::gru_cell_rows_linear_before_reset(step);
      } else {
        gemm_bt(step.rows, 2 * H, H, step.h, H, r_d, step.recurrent, rows);
        onednn::gru_reset_gate_rows(step);
        gemm_bt(step.rows, H, H, step.reset_hidden, H, r_d + 2 * H * H, step.recurrent + 2 * H, rows);
        onednn::gru_cell_rows_after_reset(step);
      }
    }
  });
  if (y_h) copy_rows(s.h.data(), H, B, H, y_h->data<float>() + g.state_offset(d), g.state_stride());
}

// True when any output tensor is also one of the inputs.
bool outputs_alias_inputs(std::initializer_list<const Tensor*> inputs, std::initializer_list<const Tensor*> outputs) {
  for (const Tensor* o : outputs)
    if (o && std::find(inputs.begin(), inputs.end(), o) != inputs.end()) return true;
  return false;
}

}  // namespace

// The GRU into whichever of y, y_h are requested, or false when the case does not apply.
bool onednn_gru(const GruParams& p, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
                const Tensor* sequence_lens, const Tensor* initial_h, Tensor* y, Tensor* y_h) {
  onednn::thread_primitive_cache().count_call();
  GruPlan g;
  if (!plan_gru(p, x, w, r, b, sequence_lens, initial_h, g)) return false;
  if (outputs_alias_inputs({&x, &w, &r, b, sequence_lens, initial_h}, {y, y_h})) return false;
  GruScratch& s = thread_scratch();
  try {
    split_bias(g, b, s.bias);
    const std::int64_t D = g.directions, B = g.batch, H = g.hidden;
    if (y) y->reset(DType::F32, g.layout == 0 ? Shape{g.seq, D, B, H} : Shape{B, g.seq, D, H});
    if (y_h) y_h->reset(DType::F32, g.layout == 0 ? Shape{D, B, H} : Shape{B, D, H});
    for (std::int64_t d = 0; d < D; ++d) run_direction(p, g, d, x, w, r, initial_h, y, y_h);
  } catch (const dnnl::error&) {
    return false;
  }
  s.gates.release_if_large();
  onednn::release_large_scratch({&s.recurrent, &s.h, &s.reset_hidden});
  return true;
}

}  // namespace canary::kernels
