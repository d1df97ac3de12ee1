// oneDNN lstm_forward (inference) for the ONNX LSTM op in f32.
//
// Mapping: ONNX gates i, o, f, c are permuted to oneDNN's i, f, c~, o; W
// [D, 4H, I] and R [D, 4H, H] are transposed into plain ldigo weights; the
// bias is Wb + Rb in ldgo. X and Y use tnc (layout 0) or ntc (layout 1)
// strides directly where the buffers match; otherwise (bidirectional Y in
// layout 0, bidirectional states in layout 1) values go through a per-thread
// scratch buffer. Absent initial states and bias are zeros.
//
// The weights (a copy of D * 4H * (I + H) floats) are converted on every call
// unless the caller marks them constant: then the conversion is kept in the
// per-thread LSTM weight cache (kernels/onednn/lstm_weight_cache.h), keyed by
// the source buffers, which each entry holds so they stay unchanged and their
// addresses cannot be reused while it exists.
//
// Cases oneDNN cannot express exactly return false so the reference kernel
// runs: peepholes, clip, input_forget, any sequence length below T, and every
// shape or dtype the reference kernel would reject.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/onednn.h"
#include "kernels/onednn/engine.h"
#include "kernels/onednn/lstm_weight_cache.h"
#include "kernels/onednn/plain_layout.h"
#include "kernels/onednn/primitive_cache.h"
#include "kernels/onednn/scratch_limit.h"
#include "kernels/onednn/threading.h"

namespace canary::kernels {
namespace {

using onednn::CachedPrimitive;
using onednn::LstmWeights;
using onednn::PrimitiveKey;
using onednn::PrimitiveKind;

// For each oneDNN gate (i, f, c~, o), the ONNX gate index (ONNX order i, o, f, c).
constexpr std::array<std::int64_t, 4> kOnnxGate = {0, 2, 3, 1};

// Dimensions of one LSTM call.
struct LstmPlan {
  std::int64_t seq = 0, batch = 0, input = 0, hidden = 0, directions = 1, layout = 0;
  LstmDirection direction = LstmDirection::Forward;

  // Bidirectional layout-1 states [B, 2, H] differ from oneDNN's ldnc [1, 2, B, H].
  bool states_transposed() const { return layout == 1 && directions == 2; }
  // Bidirectional layout-0 Y [T, 2, B, H] differs from oneDNN's concatenated [T, B, 2H].
  bool y_transposed() const { return layout == 0 && directions == 2; }
  std::int64_t state_size() const { return directions * batch * hidden; }
  // Flops of one step's recurrent product (4 gates): the serial part, which
  // decides whether a second thread pays.
  double step_flops() const { return 8.0 * static_cast<double>(directions * batch) * static_cast<double>(hidden * hidden); }
};

// Per-thread buffers for per-call converted weights, zero states and transposed values.
struct LstmScratch {
  LstmWeights weights;
  std::vector<float> h0, c0, y, y_h, y_c;
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

// Derives the dims and checks every input; false where oneDNN cannot run the case exactly.
bool plan_lstm(const LstmParams& p, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
               const Tensor* lens, const Tensor* h0, const Tensor* c0, const Tensor* peep, LstmPlan& g) {
  if (peep != nullptr || p.clip || p.input_forget || (p.layout != 0 && p.layout != 1)) return false;
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
      !optional_f32_of_shape(c0, state))
    return false;
  const std::int64_t y_dims[3] = {g.seq, g.batch, D * H};
  return onednn::dense_size_fits(y_dims) && full_lengths(lens, g);
}

// The oneDNN direction of an ONNX direction.
dnnl::rnn_direction rnn_direction_of(LstmDirection d) {
  switch (d) {
    case LstmDirection::Forward: return dnnl::rnn_direction::unidirectional_left2right;
    case LstmDirection::Reverse: return dnnl::rnn_direction::unidirectional_right2left;
    case LstmDirection::Bidirectional: break;
  }
  return dnnl::rnn_direction::bidirectional_concat;
}

// A [T, B, C] descriptor laid out as tnc (layout 0) or ntc (layout 1).
dnnl::memory::desc sequence_desc(const LstmPlan& g, std::int64_t channels) {
  const std::int64_t dims[3] = {g.seq, g.batch, channels};
  if (g.layout == 0) return onednn::row_major_desc(dims);
  const std::int64_t strides[3] = {channels, g.seq * channels, 1};
  return onednn::strided_desc(dims, strides);
}

// Creates the lstm_forward primitive with plain ldigo weights and ldnc states.
CachedPrimitive make_lstm(const LstmPlan& g) {
  const std::int64_t D = g.directions, H = g.hidden;
  const std::int64_t state_dims[4] = {1, D, g.batch, H};
  const std::int64_t wl_dims[5] = {1, D, g.input, 4, H};
  const std::int64_t wi_dims[5] = {1, D, H, 4, H};
  const std::int64_t bias_dims[4] = {1, D, 4, H};
  const dnnl::memory::desc src_md = sequence_desc(g, g.input), dst_md = sequence_desc(g, D * H);
  const dnnl::memory::desc state_md = onednn::row_major_desc(state_dims);
  const dnnl::memory::desc wl_md = onednn::row_major_desc(wl_dims), wi_md = onednn::row_major_desc(wi_dims);
  const dnnl::memory::desc bias_md = onednn::row_major_desc(bias_dims);
  const dnnl::lstm_forward::desc desc(dnnl::prop_kind::forward_inference, rnn_direction_of(g.direction), src_md,
                                      state_md, state_md, wl_md, wi_md, bias_md, dst_md, state_md, state_md);
  const dnnl::lstm_forward::primitive_desc pd(desc, onednn::cpu_engine());
  CachedPrimitive entry{dnnl::lstm_forward(pd)};
  entry.add_argument(DNNL_ARG_SRC_LAYER, src_md);
  entry.add_argument(DNNL_ARG_SRC_ITER, state_md);
  entry.add_argument(DNNL_ARG_SRC_ITER_C, state_md);
  entry.add_argument(DNNL_ARG_WEIGHTS_LAYER, wl_md);
  entry.add_argument(DNNL_ARG_WEIGHTS_ITER, wi_md);
  entry.add_argument(DNNL_ARG_BIAS, bias_md);
  entry.add_argument(DNNL_ARG_DST_LAYER, dst_md);
  entry.add_argument(DNNL_ARG_DST_ITER, state_md);
  entry.add_argument(DNNL_ARG_DST_ITER_C, state_md);
  return entry;
}

// Transposes ONNX weights [D, 4H, K] (gates i o f c) into oneDNN ldigo [1, D, K, 4, H] (gates i f c~ o).
// Works on blocks of 16 output units so that both reads and writes stay sequential.
void convert_weights(const float* src, std::int64_t D, std::int64_t H, std::int64_t K, std::vector<float>& dst) {
  constexpr std::int64_t kBlock = 16;
  dst.resize(static_cast<std::size_t>(D * K * 4 * H));
  for (std::int64_t d = 0; d < D; ++d)
    for (std::int64_t gate = 0; gate < 4; ++gate) {
      const float* rows = src + (d * 4 * H + kOnnxGate[gate] * H) * K;
      float* cols = dst.data() + d * K * 4 * H + gate * H;
      for (std::int64_t o0 = 0; o0 < H; o0 += kBlock) {
        const std::int64_t n = std::min(kBlock, H - o0);
        for (std::int64_t k = 0; k < K; ++k)
          for (std::int64_t o = o0; o < o0 + n; ++o) cols[k * 4 * H + o] = rows[o * K + k];
      }
    }
}

// oneDNN bias [1, D, 4, H] = Wb + Rb from ONNX B [D, 8H], gates permuted; zeros when absent.
void convert_bias(const Tensor* b, std::int64_t D, std::int64_t H, std::vector<float>& dst) {
  dst.assign(static_cast<std::size_t>(D * 4 * H), 0.0f);
  if (b == nullptr) return;
  const float* pb = b->data<float>();
  for (std::int64_t d = 0; d < D; ++d)
    for (std::int64_t gate = 0; gate < 4; ++gate)
      for (std::int64_t o = 0; o < H; ++o) {
        const float* wb = pb + d * 8 * H + kOnnxGate[gate] * H + o;
        dst[static_cast<std::size_t>((d * 4 + gate) * H + o)] = wb[0] + wb[4 * H];
      }
}

// Converts W, R and B into oneDNN's layouts.
void convert_all(const LstmPlan& g, const Tensor& w, const Tensor& r, const Tensor* b, LstmWeights& out) {
  convert_weights(w.data<float>(), g.directions, g.hidden, g.input, out.layer);
  convert_weights(r.data<float>(), g.directions, g.hidden, g.hidden, out.iter);
  convert_bias(b, g.directions, g.hidden, out.bias);
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

// Copies [A, B, H] into [B, A, H] (swaps the two leading dims).
void swap_leading(const float* src, std::int64_t a, std::int64_t b, std::int64_t h, float* dst) {
  for (std::int64_t i = 0; i < a; ++i)
    for (std::int64_t j = 0; j < b; ++j) std::copy_n(src + (i * b + j) * h, h, dst + (j * a + i) * h);
}

// The ldnc buffer for an initial state: the input itself, a transposed copy, or zeros.
const float* initial_state(const LstmPlan& g, const Tensor* t, std::vector<float>& scratch) {
  if (t != nullptr && !g.states_transposed()) return t->data<float>();
  scratch.resize(static_cast<std::size_t>(g.state_size()));
  if (t == nullptr) std::fill(scratch.begin(), scratch.end(), 0.0f);
  else swap_leading(t->data<float>(), g.batch, g.directions, g.hidden, scratch.data());
  return scratch.data();
}

// The ldnc buffer oneDNN writes a final state to: the output itself or scratch.
float* final_state(const LstmPlan& g, Tensor* t, std::vector<float>& scratch) {
  if (t != nullptr && !g.states_transposed()) return t->data<float>();
  scratch.resize(static_cast<std::size_t>(g.state_size()));
  return scratch.data();
}

// Copies a final state from scratch into a layout-1 bidirectional output.
void finish_state(const LstmPlan& g, Tensor* t, const std::vector<float>& scratch) {
  if (t != nullptr && g.states_transposed())
    swap_leading(scratch.data(), g.directions, g.batch, g.hidden, t->data<float>());
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

// Runs the primitive on the converted weights and the inputs and writes the outputs.
void execute_lstm(CachedPrimitive& prim, const LstmPlan& g, const LstmWeights& weights, const Tensor& x,
                  const Tensor* h0, const Tensor* c0, Tensor* y, Tensor* y_h, Tensor* y_c) {
  LstmScratch& s = thread_scratch();
  const std::int64_t D = g.directions, H = g.hidden;
  reset_outputs(g, y, y_h, y_c);
  float* dst = y && !g.y_transposed() ? y->data<float>() : nullptr;
  if (dst == nullptr) {
    s.y.resize(static_cast<std::size_t>(g.seq * g.batch * D * H));
    dst = s.y.data();
  }
  const std::array<const void*, 9> buffers{x.raw(),
                                           initial_state(g, h0, s.h0),
                                           initial_state(g, c0, s.c0),
                                           weights.layer.data(),
                                           weights.iter.data(),
                                           weights.bias.data(),
                                           dst,
                                           final_state(g, y_h, s.y_h),
                                           final_state(g, y_c, s.y_c)};
  prim.execute(buffers);
  if (y && g.y_transposed())
    for (std::int64_t t = 0; t < g.seq; ++t)
      swap_leading(dst + t * g.batch * D * H, g.batch, D, H, y->data<float>() + t * D * g.batch * H);
  finish_state(g, y_h, s.y_h);
  finish_state(g, y_c, s.y_c);
  onednn::release_large_scratch({&s.y, &s.h0, &s.c0, &s.y_h, &s.y_c});
}

}  // namespace

// oneDNN LSTM into whichever of y, y_h, y_c are requested, or false when the case does not apply.
bool onednn_lstm(const LstmParams& p, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
                 const Tensor* sequence_lens, const Tensor* initial_h, const Tensor* initial_c,
                 const Tensor* peepholes, Tensor* y, Tensor* y_h, Tensor* y_c, bool weights_are_constant) {
  onednn::thread_primitive_cache().count_call();
  LstmPlan g;
  if (!plan_lstm(p, x, w, r, b, sequence_lens, initial_h, initial_c, peepholes, g)) return false;
  if (outputs_alias_inputs({&x, &w, &r, b, sequence_lens, initial_h, initial_c}, {y, y_h, y_c})) return false;
  // Without a directly written y the sequence goes to scratch; the reference needs none.
  if (!(y && !g.y_transposed()) && !onednn::scratch_fits_limit({g.seq, g.batch, g.directions, g.hidden}))
    return false;
  const onednn::SerialWhenSmall threads(g.step_flops());
  PrimitiveKey key(PrimitiveKind::Lstm);
  for (std::int64_t v : {g.seq, g.batch, g.input, g.hidden, g.layout, static_cast<std::int64_t>(g.direction)})
    key.push(v);
  try {
    CachedPrimitive& prim = onednn::thread_primitive_cache().find_or_create(key, [&] { return make_lstm(g); });
    const LstmWeights& weights = lstm_weights(g, w, r, b, weights_are_constant);
    execute_lstm(prim, g, weights, x, initial_h, initial_c, y, y_h, y_c);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace canary::kernels
