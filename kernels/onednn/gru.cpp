// oneDNN gru_forward / lbr_gru_forward (inference) for the ONNX GRU op in f32.
//
// Mapping: ONNX gates z, r, h are oneDNN's u, r, o in the same order and with
// the same equations (h_t = u * h_{t-1} + (1 - u) * o), so W [D, 3H, I] and
// R [D, 3H, H] are only transposed, per direction, into plain ldigo weights.
// linear_before_reset 0 uses gru_forward with bias Wb + Rb [D, 3, H];
// linear_before_reset 1 uses lbr_gru_forward with bias [D, 4, H] =
// (Wbz + Rbz, Wbr + Rbr, Wbh, Rbh), Rbh being applied inside r * (...).
// X and Y use tnc (layout 0) or ntc (layout 1) strides directly where the
// buffers match; otherwise values go through a per-thread scratch buffer.
// Weights are converted on every call.
//
// Cases oneDNN cannot express exactly return false so the reference kernel
// runs: clip, any sequence length below T, and every shape or dtype the
// reference kernel would reject.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/onednn.h"
#include "kernels/onednn/engine.h"
#include "kernels/onednn/plain_layout.h"
#include "kernels/onednn/primitive_cache.h"
#include "kernels/onednn/scratch_limit.h"
#include "kernels/onednn/threading.h"

namespace canary::kernels {
namespace {

using onednn::CachedPrimitive;
using onednn::PrimitiveKey;
using onednn::PrimitiveKind;

// Dimensions of one GRU call.
struct GruPlan {
  std::int64_t seq = 0, batch = 0, input = 0, hidden = 0, directions = 1, layout = 0;
  GruDirection direction = GruDirection::Forward;
  bool linear_before_reset = false;

  bool states_transposed() const { return layout == 1 && directions == 2; }
  bool y_transposed() const { return layout == 0 && directions == 2; }
  std::int64_t state_size() const { return directions * batch * hidden; }
  std::int64_t bias_gates() const { return linear_before_reset ? 4 : 3; }
  // Flops of one step's recurrent product (3 gates): the serial part, which
  // decides whether a second thread pays.
  double step_flops() const { return 6.0 * static_cast<double>(directions * batch) * static_cast<double>(hidden * hidden); }
};

// Per-thread buffers for converted weights, zero states and transposed values.
struct GruScratch {
  std::vector<float> layer, iter, bias, h0, y, y_h;
};

// The calling thread's scratch buffers.
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

// Derives the dims and checks every input; false where oneDNN cannot run the case exactly.
bool plan_gru(const GruParams& p, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
              const Tensor* lens, const Tensor* h0, GruPlan& g) {
  if (p.clip || (p.layout != 0 && p.layout != 1)) return false;
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
  const std::int64_t y_dims[3] = {g.seq, g.batch, D * H};
  return onednn::dense_size_fits(y_dims) && full_lengths(lens, g);
}

// The oneDNN direction of an ONNX direction.
dnnl::rnn_direction rnn_direction_of(GruDirection d) {
  switch (d) {
    case GruDirection::Forward: return dnnl::rnn_direction::unidirectional_left2right;
    case GruDirection::Reverse: return dnnl::rnn_direction::unidirectional_right2left;
    case GruDirection::Bidirectional: break;
  }
  return dnnl::rnn_direction::bidirectional_concat;
}

// A [T, B, C] descriptor laid out as tnc (layout 0) or ntc (layout 1).
dnnl::memory::desc sequence_desc(const GruPlan& g, std::int64_t channels) {
  const std::int64_t dims[3] = {g.seq, g.batch, channels};
  if (g.layout == 0) return onednn::row_major_desc(dims);
  const std::int64_t strides[3] = {channels, g.seq * channels, 1};
  return onednn::strided_desc(dims, strides);
}

// Builds the primitive of either GRU flavour and registers its arguments.
template <typename Primitive>
CachedPrimitive make_flavour(const GruPlan& g, const dnnl::memory::desc& src_md, const dnnl::memory::desc& state_md,
                             const dnnl::memory::desc& wl_md, const dnnl::memory::desc& wi_md,
                             const dnnl::memory::desc& bias_md, const dnnl::memory::desc& dst_md) {
  const typename Primitive::desc desc(dnnl::prop_kind::forward_inference, rnn_direction_of(g.direction), src_md,
                                      state_md, wl_md, wi_md, bias_md, dst_md, state_md);
  const typename Primitive::primitive_desc pd(desc, onednn::cpu_engine());
  CachedPrimitive entry{Primitive(pd)};
  entry.add_argument(DNNL_ARG_SRC_LAYER, src_md);
  entry.add_argument(DNNL_ARG_SRC_ITER, state_md);
  entry.add_argument(DNNL_ARG_WEIGHTS_LAYER, wl_md);
  entry.add_argument(DNNL_ARG_WEIGHTS_ITER, wi_md);
  entry.add_argument(DNNL_ARG_BIAS, bias_md);
  entry.add_argument(DNNL_ARG_DST_LAYER, dst_md);
  entry.add_argument(DNNL_ARG_DST_ITER, state_md);
  return entry;
}

// Creates the GRU primitive with plain ldigo weights and ldnc states.
CachedPrimitive make_gru(const GruPlan& g) {
  const std::int64_t D = g.directions, H = g.hidden;
  const std::int64_t state_dims[4] = {1, D, g.batch, H};
  const std::int64_t wl_dims[5] = {1, D, g.input, 3, H};
  const std::int64_t wi_dims[5] = {1, D, H, 3, H};
  const std::int64_t bias_dims[4] = {1, D, g.bias_gates(), H};
  const dnnl::memory::desc src_md = sequence_desc(g, g.input), dst_md = sequence_desc(g, D * H);
  const dnnl::memory::desc state_md = onednn::row_major_desc(state_dims);
  const dnnl::memory::desc wl_md = onednn::row_major_desc(wl_dims), wi_md = onednn::row_major_desc(wi_dims);
  const dnnl::memory::desc bias_md = onednn::row_major_desc(bias_dims);
  if (g.linear_before_reset)
    return make_flavour<dnnl::lbr_gru_forward>(g, src_md, state_md, wl_md, wi_md, bias_md, dst_md);
  return make_flavour<dnnl::gru_forward>(g, src_md, state_md, wl_md, wi_md, bias_md, dst_md);
}

// Transposes ONNX weights [D, 3H, K] into oneDNN ldigo [1, D, K, 3, H] (same gate order).
void convert_weights(const float* src, std::int64_t D, std::int64_t H, std::int64_t K, std::vector<float>& dst) {
  const std::int64_t G = 3 * H;
  dst.resize(static_cast<std::size_t>(D * K * G));
  for (std::int64_t d = 0; d < D; ++d)
    for (std::int64_t o = 0; o < G; ++o)
      for (std::int64_t k = 0; k < K; ++k) dst[static_cast<std::size_t>((d * K + k) * G + o)] = src[(d * G + o) * K + k];
}

// oneDNN bias from ONNX B [D, 6H]: [D, 3, H] = Wb + Rb, or for
// linear_before_reset [D, 4, H] = (Wbz + Rbz, Wbr + Rbr, Wbh, Rbh); zeros when absent.
void convert_bias(const GruPlan& g, const Tensor* b, std::vector<float>& dst) {
  const std::int64_t D = g.directions, H = g.hidden, G = g.bias_gates();
  dst.assign(static_cast<std::size_t>(D * G * H), 0.0f);
  if (b == nullptr) return;
  const float* pb = b->data<float>();
  for (std::int64_t d = 0; d < D; ++d) {
    const float* wb = pb + d * 6 * H;
    const float* rb = wb + 3 * H;
    float* out = dst.data() + d * G * H;
    for (std::int64_t i = 0; i < 3 * H; ++i) out[i] = wb[i] + rb[i];
    if (g.linear_before_reset)
      for (std::int64_t j = 0; j < H; ++j) {
        out[2 * H + j] = wb[2 * H + j];
        out[3 * H + j] = rb[2 * H + j];
      }
  }
}

// Copies [A, B, H] into [B, A, H] (swaps the two leading dims).
void swap_leading(const float* src, std::int64_t a, std::int64_t b, std::int64_t h, float* dst) {
  for (std::int64_t i = 0; i < a; ++i)
    for (std::int64_t j = 0; j < b; ++j) std::copy_n(src + (i * b + j) * h, h, dst + (j * a + i) * h);
}

// The ldnc buffer for the initial state: the input itself, a transposed copy, or zeros.
const float* initial_state(const GruPlan& g, const Tensor* t, std::vector<float>& scratch) {
  if (t != nullptr && !g.states_transposed()) return t->data<float>();
  scratch.resize(static_cast<std::size_t>(g.state_size()));
  if (t == nullptr) std::fill(scratch.begin(), scratch.end(), 0.0f);
  else swap_leading(t->data<float>(), g.batch, g.directions, g.hidden, scratch.data());
  return scratch.data();
}

// Runs the primitive on converted weights and writes the requested outputs.
void execute_gru(CachedPrimitive& prim, const GruPlan& g, const Tensor& x, const Tensor& w, const Tensor& r,
                 const Tensor* b, const Tensor* h0, Tensor* y, Tensor* y_h) {
  GruScratch& s = thread_scratch();
  const std::int64_t D = g.directions, B = g.batch, H = g.hidden;
  convert_weights(w.data<float>(), D, H, g.input, s.layer);
  convert_weights(r.data<float>(), D, H, H, s.iter);
  convert_bias(g, b, s.bias);
  const float* init = initial_state(g, h0, s.h0);  // before the outputs are reset
  if (y) y->reset(DType::F32, g.layout == 0 ? Shape{g.seq, D, B, H} : Shape{B, g.seq, D, H});
  if (y_h) y_h->reset(DType::F32, g.layout == 0 ? Shape{D, B, H} : Shape{B, D, H});
  float* dst = y && !g.y_transposed() ? y->data<float>() : nullptr;
  if (dst == nullptr) {
    s.y.resize(static_cast<std::size_t>(g.seq * B * D * H));
    dst = s.y.data();
  }
  float* last = y_h && !g.states_transposed() ? y_h->data<float>() : nullptr;
  if (last == nullptr) {
    s.y_h.resize(static_cast<std::size_t>(g.state_size()));
    last = s.y_h.data();
  }
  const std::array<const void*, 7> buffers{x.raw(), init, s.layer.data(), s.iter.data(), s.bias.data(), dst, last};
  prim.execute(buffers);
  if (y && g.y_transposed())
    for (std::int64_t t = 0; t < g.seq; ++t)
      swap_leading(dst + t * B * D * H, B, D, H, y->data<float>() + t * D * B * H);
  if (y_h && g.states_transposed()) swap_leading(last, D, B, H, y_h->data<float>());
  onednn::release_large_scratch({&s.y, &s.h0, &s.y_h});
}

// True when any output tensor is also one of the inputs.
bool outputs_alias_inputs(std::initializer_list<const Tensor*> inputs, std::initializer_list<const Tensor*> outputs) {
  for (const Tensor* o : outputs)
    if (o && std::find(inputs.begin(), inputs.end(), o) != inputs.end()) return true;
  return false;
}

}  // namespace

// oneDNN GRU into whichever of y, y_h are requested, or false when the case does not apply.
bool onednn_gru(const GruParams& p, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
                const Tensor* sequence_lens, const Tensor* initial_h, Tensor* y, Tensor* y_h) {
  onednn::thread_primitive_cache().count_call();
  GruPlan g;
  if (!plan_gru(p, x, w, r, b, sequence_lens, initial_h, g)) return false;
  if (outputs_alias_inputs({&x, &w, &r, b, sequence_lens, initial_h}, {y, y_h})) return false;
  // Without a directly written y the sequence goes to scratch; the reference needs none.
  if (!(y && !g.y_transposed()) && !onednn::scratch_fits_limit({g.seq, g.batch, g.directions, g.hidden}))
    return false;
  const onednn::SerialWhenSmall threads(g.step_flops());
  PrimitiveKey key(PrimitiveKind::Gru);
  for (std::int64_t v : {g.seq, g.batch, g.input, g.hidden, g.layout, static_cast<std::int64_t>(g.direction),
                         static_cast<std::int64_t>(g.linear_before_reset)})
    key.push(v);
  try {
    CachedPrimitive& prim = onednn::thread_primitive_cache().find_or_create(key, [&] { return make_gru(g); });
    execute_gru(prim, g, x, w, r, b, initial_h, y, y_h);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace canary::kernels
