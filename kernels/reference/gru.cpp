// Reference GRU kernel: ONNX semantics (gates z r h, linear_before_reset 0
// and 1), both layouts, all directions, sequence_lens, initial_h and clip.
#include <cmath>
#include <vector>

#include "kernels/reference.h"
#include "kernels/reference/recurrent_layout.h"

namespace canary::kernels {
namespace {

using namespace recurrent;

// GRU holds 3 gates in W and R and 6H bias values (Wb then Rb) per direction.
constexpr RecurrentSpec kGru{"GRU", 3, 6};

// A GRU reads only the inputs every recurrent op shares.
template <typename T>
using GruInputs = RecurrentInputs<T>;

// Validates every input's shape and dtype against the derived dims.
void check_inputs(const RecurrentDims& d, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
                  const Tensor* h0) {
  check_weights(kGru, d, x, w, r, b, {{"W", &w}, {"R", &r}, {"B", b}, {"initial_h", h0}});
  if (h0) check_shape(kGru, "initial_h", *h0, state_shape(d));
}

// W x + Wb for gate row `row` (of 3H).
template <typename T>
Accumulator input_part(const RecurrentDims& d, const GruInputs<T>& in, std::int64_t dir, std::int64_t row,
                       const T* x_row) {
  const T* w = in.w + (dir * 3 * d.hidden + row) * d.input;
  Accumulator acc = in.b ? Accumulator(in.b[dir * 6 * d.hidden + row]) : 0;
  for (std::int64_t k = 0; k < d.input; ++k) acc += Accumulator(w[k]) * Accumulator(x_row[k]);
  return acc;
}

// R h + Rb for gate row `row` (of 3H), with h of length H.
template <typename T, typename S>
Accumulator recurrent_part(const RecurrentDims& d, const GruInputs<T>& in, std::int64_t dir, std::int64_t row,
                           const S* h) {
  const T* r = in.r + (dir * 3 * d.hidden + row) * d.hidden;
  Accumulator acc = in.b ? Accumulator(in.b[dir * 6 * d.hidden + 3 * d.hidden + row]) : 0;
  for (std::int64_t k = 0; k < d.hidden; ++k) acc += Accumulator(r[k]) * Accumulator(h[k]);
  return acc;
}

// One time step of one batch entry: updates h (length H) in place from x_row.
// z = σ(Wz x + Rz h + b), r = σ(Wr x + Rr h + b); the candidate is
// tanh(Wh x + Rh (r ⊙ h) + b) or, with linear_before_reset, tanh(Wh x + r ⊙ (Rh h + Rbh) + Wbh);
// h' = (1 - z) ⊙ candidate + z ⊙ h.
template <typename T>
void step_cell(const GruParams& p, const RecurrentDims& d, const GruInputs<T>& in, std::int64_t dir, const T* x_row,
               std::vector<T>& h) {
  const std::size_t H = static_cast<std::size_t>(d.hidden);
  std::vector<Accumulator> z(H), r(H), reset_h(H);
  for (std::int64_t j = 0; j < d.hidden; ++j) {
    z[j] = sigmoid(clip_gate(p.clip, input_part(d, in, dir, j, x_row) + recurrent_part(d, in, dir, j, h.data())));
    const std::int64_t row = d.hidden + j;
    r[j] = sigmoid(clip_gate(p.clip, input_part(d, in, dir, row, x_row) + recurrent_part(d, in, dir, row, h.data())));
    reset_h[j] = r[j] * Accumulator(h[j]);
  }
  std::vector<T> h_new(H);
  for (std::int64_t j = 0; j < d.hidden; ++j) {
    const std::int64_t row = 2 * d.hidden + j;
    const Accumulator rh = p.linear_before_reset ? r[j] * recurrent_part(d, in, dir, row, h.data())
                                                 : recurrent_part(d, in, dir, row, reset_h.data());
    const Accumulator candidate = std::tanh(clip_gate(p.clip, input_part(d, in, dir, row, x_row) + rh));
    h_new[j] = T((1.0 - z[j]) * candidate + z[j] * Accumulator(h[j]));
  }
  h.swap(h_new);
}

// Runs one direction over every batch entry, writing Y (if any) and the final state.
template <typename T>
void run_direction(const GruParams& p, const RecurrentDims& d, const GruInputs<T>& in, std::int64_t dir,
                   bool reverse, T* y, T* y_h) {
  const std::size_t H = static_cast<std::size_t>(d.hidden);
  for (std::int64_t b = 0; b < d.batch; ++b) {
    std::vector<T> h(H, T(0));
    if (in.h0)
      for (std::int64_t j = 0; j < d.hidden; ++j) h[j] = in.h0[state_index(d, dir, b, j)];
    const std::int64_t len = in.lens[b];
    for (std::int64_t s = 0; s < len; ++s) {
      const std::int64_t t = reverse ? len - 1 - s : s;
      step_cell(p, d, in, dir, input_row(d, in.x, t, b), h);
      if (y)
        for (std::int64_t j = 0; j < d.hidden; ++j) y[output_index(d, t, dir, b, j)] = h[j];
    }
    if (y_h)
      for (std::int64_t j = 0; j < d.hidden; ++j) y_h[state_index(d, dir, b, j)] = h[j];
  }
}

// Sizes the outputs, zero-fills Y and runs each direction.
template <typename T>
void run_gru(const GruParams& p, const RecurrentDims& d, const GruInputs<T>& in, DType dt, Tensor* y, Tensor* y_h) {
  T* py = prepare_output<T>(d, dt, y);
  T* ph = prepare_state<T>(d, dt, y_h);
  for (std::int64_t dir = 0; dir < d.directions; ++dir) {
    const bool reverse = p.direction == GruDirection::Reverse || dir == 1;
    run_direction(p, d, in, dir, reverse, py, ph);
  }
}

// Gathers typed input pointers and runs the GRU in element type T.
template <typename T>
void dispatch_gru(const GruParams& p, const RecurrentDims& d, const Tensor& x, const Tensor& w, const Tensor& r,
                  const Tensor* b, std::vector<std::int64_t> lens, const Tensor* h0, Tensor* y, Tensor* y_h) {
  GruInputs<T> in{x.data<T>(), w.data<T>(), r.data<T>(), optional_data<T>(b), optional_data<T>(h0), std::move(lens)};
  run_gru(p, d, in, x.dtype(), y, y_h);
}

}  // namespace

// ONNX GRU with default activations over x, writing whichever of Y, Y_h are requested.
void gru(const GruParams& p, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
         const Tensor* sequence_lens, const Tensor* initial_h, Tensor* y, Tensor* y_h) {
  const RecurrentAttrs attrs{p.layout, p.direction == GruDirection::Bidirectional, p.hidden_size, p.clip};
  const RecurrentDims d = plan_dims(kGru, attrs, x, r);
  check_inputs(d, x, w, r, b, initial_h);
  std::vector<std::int64_t> lens = read_lengths(kGru, d, sequence_lens);
  if (x.dtype() == DType::F32)
    dispatch_gru<float>(p, d, x, w, r, b, std::move(lens), initial_h, y, y_h);
  else
    dispatch_gru<double>(p, d, x, w, r, b, std::move(lens), initial_h, y, y_h);
}

}  // namespace canary::kernels
