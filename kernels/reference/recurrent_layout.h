// Layout, direction, sequence_lens and weight-shape handling shared by the
// reference recurrent kernels (LSTM, GRU and RNN).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

#include "canary/tensor.h"

namespace canary::kernels::recurrent {

// Both F32 and F64 accumulate gate pre-activations in double: the "wide"
// accumulator of each element type. States are stored in the element type.
using Accumulator = double;

// What distinguishes one recurrent op's tensors: its name (the message
// prefix), its gate count (W and R hold gates*H rows) and its bias width
// (B holds bias_gates*H values per direction).
struct RecurrentSpec {
  const char* op = "";
  std::int64_t gates = 0;
  std::int64_t bias_gates = 0;
};

// Dimensions shared by every tensor of one recurrent call.
struct RecurrentDims {
  std::int64_t seq = 0, batch = 0, input = 0, hidden = 0, directions = 1, layout = 0;
};

// The attributes every recurrent op reads the same way.
struct RecurrentAttrs {
  std::int64_t layout = 0;
  bool bidirectional = false;
  std::int64_t hidden_size = 0;
  std::optional<double> clip;
};

// The inputs every recurrent call shares, typed; optional ones are null.
template <typename T>
struct RecurrentInputs {
  const T* x = nullptr;
  const T* w = nullptr;
  const T* r = nullptr;
  const T* b = nullptr;
  const T* h0 = nullptr;
  std::vector<std::int64_t> lens;
};

// Throws Error(Shape) unless t has exactly the expected shape.
void check_shape(const RecurrentSpec& s, const char* name, const Tensor& t, const Shape& want);

// Derives T, B, I, H and D from x, r and the attributes.
RecurrentDims plan_dims(const RecurrentSpec& s, const RecurrentAttrs& a, const Tensor& x, const Tensor& r);

// Checks x's dtype, that every listed input shares it, and the shapes of W, R and B.
void check_weights(const RecurrentSpec& s, const RecurrentDims& d, const Tensor& x, const Tensor& w, const Tensor& r,
                   const Tensor* b, std::initializer_list<std::pair<const char*, const Tensor*>> same_dtype);

// Reads sequence_lens (or T for every entry) and checks each is within [0, T].
std::vector<std::int64_t> read_lengths(const RecurrentSpec& s, const RecurrentDims& d, const Tensor* sequence_lens);

// Shape of the initial and final states for the layout.
Shape state_shape(const RecurrentDims& d);

// Shape of Y for the layout.
Shape output_shape(const RecurrentDims& d);

// Flat index of state [direction, batch, unit] in the layout's state tensor.
inline std::int64_t state_index(const RecurrentDims& d, std::int64_t dir, std::int64_t b, std::int64_t j) {
  return d.layout == 0 ? (dir * d.batch + b) * d.hidden + j : (b * d.directions + dir) * d.hidden + j;
}

// Flat index of Y [t, direction, batch, unit] in the layout's Y tensor.
inline std::int64_t output_index(const RecurrentDims& d, std::int64_t t, std::int64_t dir, std::int64_t b,
                                 std::int64_t j) {
  return d.layout == 0 ? ((t * d.directions + dir) * d.batch + b) * d.hidden + j
                       : ((b * d.seq + t) * d.directions + dir) * d.hidden + j;
}

// Pointer to the input vector x[t, b] in the layout's X tensor.
template <typename T>
const T* input_row(const RecurrentDims& d, const T* x, std::int64_t t, std::int64_t b) {
  return x + (d.layout == 0 ? t * d.batch + b : b * d.seq + t) * d.input;
}

// Logistic sigmoid.
inline Accumulator sigmoid(Accumulator v) { return 1.0 / (1.0 + std::exp(-v)); }

// Clamps a gate pre-activation to [-clip, clip] when clip is set.
inline Accumulator clip_gate(const std::optional<double>& clip, Accumulator v) {
  return clip ? std::clamp(v, -*clip, *clip) : v;
}

// Sizes Y (when requested) and zero-fills it; returns its data or null.
template <typename T>
T* prepare_output(const RecurrentDims& d, DType dt, Tensor* y) {
  if (!y) return nullptr;
  y->reset(dt, output_shape(d));
  T* py = y->data<T>();
  std::fill(py, py + y->numel(), T(0));  // steps past a sequence's length stay zero
  return py;
}

// Sizes a final-state output (when requested); returns its data or null.
template <typename T>
T* prepare_state(const RecurrentDims& d, DType dt, Tensor* state) {
  if (!state) return nullptr;
  state->reset(dt, state_shape(d));
  return state->data<T>();
}

// Typed pointer to an optional input, or null.
template <typename T>
const T* optional_data(const Tensor* t) {
  return t ? t->data<T>() : nullptr;
}

}  // namespace canary::kernels::recurrent
