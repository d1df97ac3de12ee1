// Reference RNN kernel (the Elman cell of ONNX RNN): both layouts, all
// directions, sequence_lens, initial_h, clip and the activations Tanh, Relu
// and Sigmoid, one per direction.
#include <cmath>
#include <string>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/recurrent_layout.h"

namespace canary::kernels {
namespace {

using namespace recurrent;

// RNN holds 1 gate in W and R and 2H bias values (Wb then Rb) per direction.
constexpr RecurrentSpec kRnn{"RNN", 1, 2};

// Validates every input's shape and dtype against the derived dims.
void check_inputs(const RecurrentDims& d, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
                  const Tensor* h0) {
  check_weights(kRnn, d, x, w, r, b, {{"W", &w}, {"R", &r}, {"B", b}, {"initial_h", h0}});
  if (h0) check_shape(kRnn, "initial_h", *h0, state_shape(d));
}

// The activation of direction `dir`: its own entry, or the single shared one.
RnnActivation activation_of(const RnnParams& p, const RecurrentDims& d, std::int64_t dir) {
  const std::size_t count = p.activations.size();
  if (count != 1 && count != static_cast<std::size_t>(d.directions))
    throw Error(ErrorKind::Model, "RNN: " + std::to_string(count) + " activations given for " +
                                      std::to_string(d.directions) +
                                      " direction(s), expected one per direction or a single shared one");
  return p.activations[count == 1 ? 0 : static_cast<std::size_t>(dir)];
}

// f(v) for the direction's activation.
Accumulator activate(RnnActivation f, Accumulator v) {
  switch (f) {
    case RnnActivation::Relu: return v > 0 ? v : 0;
    case RnnActivation::Sigmoid: return sigmoid(v);
    case RnnActivation::Tanh: break;
  }
  return std::tanh(v);
}

// W x + Wb + R h + Rb for hidden unit j, summed in double.
template <typename T>
Accumulator pre_activation(const RecurrentDims& d, const RecurrentInputs<T>& in, std::int64_t dir, std::int64_t j,
                           const T* x_row, const std::vector<T>& h) {
  const T* w = in.w + (dir * d.hidden + j) * d.input;
  const T* r = in.r + (dir * d.hidden + j) * d.hidden;
  Accumulator acc = 0;
  if (in.b) acc = Accumulator(in.b[dir * 2 * d.hidden + j]) + Accumulator(in.b[dir * 2 * d.hidden + d.hidden + j]);
  for (std::int64_t k = 0; k < d.input; ++k) acc += Accumulator(w[k]) * Accumulator(x_row[k]);
  for (std::int64_t k = 0; k < d.hidden; ++k) acc += Accumulator(r[k]) * Accumulator(h[k]);
  return acc;
}

// One time step of one batch entry: h' = f(clip(W x + R h + Wb + Rb)), in place.
template <typename T>
void step_cell(const RnnParams& p, RnnActivation f, const RecurrentDims& d, const RecurrentInputs<T>& in,
               std::int64_t dir, const T* x_row, std::vector<T>& h) {
  std::vector<T> h_new(h.size());
  for (std::int64_t j = 0; j < d.hidden; ++j)
    h_new[j] = T(activate(f, clip_gate(p.clip, pre_activation(d, in, dir, j, x_row, h))));
  h.swap(h_new);
}

// Runs one direction over every batch entry, writing Y (if any) and the final state.
template <typename T>
void run_direction(const RnnParams& p, const RecurrentDims& d, const RecurrentInputs<T>& in, std::int64_t dir,
                   bool reverse, T* y, T* y_h) {
  const RnnActivation f = activation_of(p, d, dir);
  for (std::int64_t b = 0; b < d.batch; ++b) {
    std::vector<T> h(static_cast<std::size_t>(d.hidden), T(0));
    if (in.h0)
      for (std::int64_t j = 0; j < d.hidden; ++j) h[j] = in.h0[state_index(d, dir, b, j)];
    const std::int64_t len = in.lens[b];
    for (std::int64_t s = 0; s < len; ++s) {
      // A reverse pass starts at the entry's own last step, not at T - 1.
      const std::int64_t t = reverse ? len - 1 - s : s;
      step_cell(p, f, d, in, dir, input_row(d, in.x, t, b), h);
      if (y)
        for (std::int64_t j = 0; j < d.hidden; ++j) y[output_index(d, t, dir, b, j)] = h[j];
    }
    if (y_h)
      for (std::int64_t j = 0; j < d.hidden; ++j) y_h[state_index(d, dir, b, j)] = h[j];
  }
}

// Gathers typed input pointers, sizes the outputs (Y zero-filled) and runs each direction in element type T.
template <typename T>
void dispatch_rnn(const RnnParams& p, const RecurrentDims& d, const Tensor& x, const Tensor& w, const Tensor& r,
                  const Tensor* b, std::vector<std::int64_t> lens, const Tensor* h0, Tensor* y, Tensor* y_h) {
  const RecurrentInputs<T> in{x.data<T>(), w.data<T>(), r.data<T>(), optional_data<T>(b), optional_data<T>(h0),
                              std::move(lens)};
  T* py = prepare_output<T>(d, x.dtype(), y);
  T* ph = prepare_state<T>(d, x.dtype(), y_h);
  for (std::int64_t dir = 0; dir < d.directions; ++dir) {
    const bool reverse = p.direction == RnnDirection::Reverse || dir == 1;
    run_direction(p, d, in, dir, reverse, py, ph);
  }
}

}  // namespace

// ONNX RNN over x, writing whichever of Y, Y_h are requested.
void rnn(const RnnParams& p, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
         const Tensor* sequence_lens, const Tensor* initial_h, Tensor* y, Tensor* y_h) {
  const RecurrentAttrs attrs{p.layout, p.direction == RnnDirection::Bidirectional, p.hidden_size, p.clip};
  const RecurrentDims d = plan_dims(kRnn, attrs, x, r);
  activation_of(p, d, 0);  // a bad activation count fails before any output is sized
  check_inputs(d, x, w, r, b, initial_h);
  std::vector<std::int64_t> lens = read_lengths(kRnn, d, sequence_lens);
  if (x.dtype() == DType::F32)
    dispatch_rnn<float>(p, d, x, w, r, b, std::move(lens), initial_h, y, y_h);
  else
    dispatch_rnn<double>(p, d, x, w, r, b, std::move(lens), initial_h, y, y_h);
}

}  // namespace canary::kernels
