// Reference LSTM kernel: ONNX semantics (gates i o f c), both layouts, all directions, sequence_lens.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/reference.h"
#include "kernels/reference/recurrent_layout.h"
#include "kernels/reference/wide_sums.h"

namespace canary::kernels {
namespace {

using namespace recurrent;

// LSTM holds 4 gates in W and R and 8H bias values (Wb then Rb) per direction.
constexpr RecurrentSpec kLstm{"LSTM", 4, 8};

// The inputs of one LSTM call, typed: the shared ones plus peepholes and initial_c.
template <typename T>
struct LstmInputs : RecurrentInputs<T> {
  const T* p = nullptr;
  const T* c0 = nullptr;
};

// Validates every input's shape and dtype against the derived dims.
void check_inputs(const RecurrentDims& d, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
                  const Tensor* h0, const Tensor* c0, const Tensor* p) {
  check_weights(kLstm, d, x, w, r, b, {{"W", &w}, {"R", &r}, {"B", b}, {"initial_h", h0}, {"initial_c", c0}, {"P", p}});
  if (p) check_shape(kLstm, "P", *p, Shape{d.directions, 3 * d.hidden});
  if (h0) check_shape(kLstm, "initial_h", *h0, state_shape(d));
  if (c0) check_shape(kLstm, "initial_c", *c0, state_shape(d));
}

// One direction's W and R transposed to [input][4H] and [hidden][4H], so
// that one input or state element scales a contiguous run of gate rows.
template <typename T>
struct GateWeights {
  std::vector<T> w_t, r_t;
  const T* bias = nullptr;  // Wb then Rb (8H values), or null
};

template <typename T>
GateWeights<T> transpose_weights(const RecurrentDims& d, const LstmInputs<T>& in, std::int64_t dir) {
  const std::int64_t rows = 4 * d.hidden;
  GateWeights<T> g;
  g.w_t.resize(static_cast<std::size_t>(d.input * rows));
  g.r_t.resize(static_cast<std::size_t>(d.hidden * rows));
  const T* w = in.w + dir * rows * d.input;
  const T* r = in.r + dir * rows * d.hidden;
  for (std::int64_t row = 0; row < rows; ++row) {
    for (std::int64_t k = 0; k < d.input; ++k) g.w_t[static_cast<std::size_t>(k * rows + row)] = w[row * d.input + k];
    for (std::int64_t k = 0; k < d.hidden; ++k) g.r_t[static_cast<std::size_t>(k * rows + row)] = r[row * d.hidden + k];
  }
  g.bias = in.b ? in.b + dir * 8 * d.hidden : nullptr;
  return g;
}

// Pre-activations of all 4H gate rows: W x + R h + (Wb + Rb). Each row sums
// its products in double in the order x[0..I), h[0..H), then the bias pair;
// the loops run across rows (reference/wide_sums.h).
template <typename T>
void gate_inputs(const RecurrentDims& d, const GateWeights<T>& g, const T* x_row, const T* h, Accumulator* acc) {
  const std::int64_t rows = 4 * d.hidden;
  std::fill(acc, acc + rows, Accumulator(0));
  for (std::int64_t k = 0; k < d.input; ++k)
    reference::accumulate_scaled(acc, g.w_t.data() + k * rows, rows, 1, Accumulator(x_row[k]));
  for (std::int64_t k = 0; k < d.hidden; ++k)
    reference::accumulate_scaled(acc, g.r_t.data() + k * rows, rows, 1, Accumulator(h[k]));
  if (g.bias)
    for (std::int64_t row = 0; row < rows; ++row)
      acc[row] += Accumulator(g.bias[row]) + Accumulator(g.bias[4 * d.hidden + row]);
}

// Scratch of one direction's steps: gate pre-activations and the new states.
template <typename T>
struct StepScratch {
  std::vector<Accumulator> gates;
  std::vector<T> h_new, c_new;
};

// One time step of one batch entry: updates h and c (length H) in place from x_row.
template <typename T>
void step_cell(const LstmParams& p, const RecurrentDims& d, const LstmInputs<T>& in, const GateWeights<T>& g,
               std::int64_t dir, const T* x_row, std::vector<T>& h, std::vector<T>& c, StepScratch<T>& s) {
  const std::int64_t H = d.hidden;
  const T* peep = in.p ? in.p + dir * 3 * H : nullptr;  // order i, o, f
  gate_inputs(d, g, x_row, h.data(), s.gates.data());
  const Accumulator* gi = s.gates.data();  // rows: i [0, H), o [H, 2H), f [2H, 3H), c [3H, 4H)
  for (std::int64_t j = 0; j < H; ++j) {
    const Accumulator c_prev = c[j];
    const Accumulator pi = peep ? Accumulator(peep[j]) * c_prev : 0;
    const Accumulator pf = peep ? Accumulator(peep[2 * H + j]) * c_prev : 0;
    const Accumulator i = sigmoid(clip_gate(p.clip, gi[j] + pi));
    const Accumulator f = p.input_forget ? 1.0 - i : sigmoid(clip_gate(p.clip, gi[2 * H + j] + pf));
    const Accumulator gc = std::tanh(clip_gate(p.clip, gi[3 * H + j]));
    const Accumulator cell = f * c_prev + i * gc;
    const Accumulator po = peep ? Accumulator(peep[H + j]) * cell : 0;
    const Accumulator o = sigmoid(clip_gate(p.clip, gi[H + j] + po));
    s.c_new[j] = T(cell);
    s.h_new[j] = T(o * std::tanh(cell));
  }
  h.swap(s.h_new);
  c.swap(s.c_new);
}

// Runs one direction over every batch entry, writing Y (if any) and the final states.
template <typename T>
void run_direction(const LstmParams& p, const RecurrentDims& d, const LstmInputs<T>& in, std::int64_t dir,
                   bool reverse, T* y, T* y_h, T* y_c) {
  const std::size_t H = static_cast<std::size_t>(d.hidden);
  const GateWeights<T> g = transpose_weights(d, in, dir);
  StepScratch<T> s{std::vector<Accumulator>(4 * H), std::vector<T>(H), std::vector<T>(H)};
  for (std::int64_t b = 0; b < d.batch; ++b) {
    std::vector<T> h(H, T(0)), c(H, T(0));
    for (std::int64_t j = 0; j < d.hidden; ++j) {
      if (in.h0) h[j] = in.h0[state_index(d, dir, b, j)];
      if (in.c0) c[j] = in.c0[state_index(d, dir, b, j)];
    }
    const std::int64_t len = in.lens[b];
    for (std::int64_t step = 0; step < len; ++step) {
      const std::int64_t t = reverse ? len - 1 - step : step;
      step_cell(p, d, in, g, dir, input_row(d, in.x, t, b), h, c, s);
      if (y)
        for (std::int64_t j = 0; j < d.hidden; ++j) y[output_index(d, t, dir, b, j)] = h[j];
    }
    for (std::int64_t j = 0; j < d.hidden; ++j) {
      if (y_h) y_h[state_index(d, dir, b, j)] = h[j];
      if (y_c) y_c[state_index(d, dir, b, j)] = c[j];
    }
  }
}

// Sizes the outputs, zero-fills Y and runs each direction.
template <typename T>
void run_lstm(const LstmParams& p, const RecurrentDims& d, const LstmInputs<T>& in, DType dt, Tensor* y, Tensor* y_h,
              Tensor* y_c) {
  T* py = prepare_output<T>(d, dt, y);
  T* ph = prepare_state<T>(d, dt, y_h);
  T* pc = prepare_state<T>(d, dt, y_c);
  for (std::int64_t dir = 0; dir < d.directions; ++dir) {
    const bool reverse = p.direction == LstmDirection::Reverse || dir == 1;
    run_direction(p, d, in, dir, reverse, py, ph, pc);
  }
}

// Gathers typed input pointers and runs the LSTM in element type T.
template <typename T>
void dispatch_lstm(const LstmParams& p, const RecurrentDims& d, const Tensor& x, const Tensor& w, const Tensor& r,
                   const Tensor* b, std::vector<std::int64_t> lens, const Tensor* h0, const Tensor* c0,
                   const Tensor* peep, Tensor* y, Tensor* y_h, Tensor* y_c) {
  LstmInputs<T> in{{x.data<T>(), w.data<T>(), r.data<T>(), optional_data<T>(b), optional_data<T>(h0), std::move(lens)},
                    optional_data<T>(peep),
                    optional_data<T>(c0)};
  run_lstm(p, d, in, x.dtype(), y, y_h, y_c);
}

}  // namespace

// ONNX LSTM with default activations over x, writing whichever of Y, Y_h, Y_c are requested.
void lstm(const LstmParams& p, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
          const Tensor* sequence_lens, const Tensor* initial_h, const Tensor* initial_c, const Tensor* peepholes,
          Tensor* y, Tensor* y_h, Tensor* y_c) {
  const RecurrentAttrs attrs{p.layout, p.direction == LstmDirection::Bidirectional, p.hidden_size, p.clip};
  const RecurrentDims d = plan_dims(kLstm, attrs, x, r);
  check_inputs(d, x, w, r, b, initial_h, initial_c, peepholes);
  std::vector<std::int64_t> lens = read_lengths(kLstm, d, sequence_lens);
  if (x.dtype() == DType::F32)
    dispatch_lstm<float>(p, d, x, w, r, b, std::move(lens), initial_h, initial_c, peepholes, y, y_h, y_c);
  else
    dispatch_lstm<double>(p, d, x, w, r, b, std::move(lens), initial_h, initial_c, peepholes, y, y_h, y_c);
}

}  // namespace canary::kernels
