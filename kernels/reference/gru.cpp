// Reference GRU kernel: ONNX semantics (gates z r h, linear_before_reset 0
// and 1), both layouts, all directions, sequence_lens, initial_h and clip.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"

namespace canary::kernels {
namespace {

// Both F32 and F64 accumulate gate pre-activations in double: the "wide"
// accumulator of each element type. States are stored in the element type.
using Accumulator = double;

// Dimensions shared by every tensor of one GRU call.
struct GruDims {
  std::int64_t seq = 0, batch = 0, input = 0, hidden = 0, directions = 1, layout = 0;
};

// The inputs of one GRU call, typed; optional ones are null.
template <typename T>
struct GruInputs {
  const T* x = nullptr;
  const T* w = nullptr;
  const T* r = nullptr;
  const T* b = nullptr;
  const T* h0 = nullptr;
  std::vector<std::int64_t> lens;
};

// Throws Error(Shape) unless t has exactly the expected shape.
void check_shape(const char* name, const Tensor& t, const Shape& want) {
  if (t.shape() != want)
    throw Error(ErrorKind::Shape, std::string("GRU: input '") + name + "' expected shape " + shape_to_string(want) +
                                      ", got " + shape_to_string(t.shape()));
}

// Throws Error(Input) when an optional float input does not share x's dtype.
void check_dtype(const char* name, const Tensor* t, DType want) {
  if (t && t->dtype() != want)
    throw Error(ErrorKind::Input, std::string("GRU: input '") + name + "' expected dtype " +
                                      std::string(dtype_name(want)) + ", got " + t->type_string());
}

// Derives T, B, I, H and D from x, r and the params.
GruDims plan_dims(const GruParams& p, const Tensor& x, const Tensor& r) {
  if (p.layout != 0 && p.layout != 1)
    throw Error(ErrorKind::Model, "GRU: layout must be 0 or 1, got " + std::to_string(p.layout));
  if (x.rank() != 3) throw Error(ErrorKind::Shape, "GRU: input 'X' expected rank 3, got " + shape_to_string(x.shape()));
  GruDims d;
  d.layout = p.layout;
  d.seq = p.layout == 0 ? x.dim(0) : x.dim(1);
  d.batch = p.layout == 0 ? x.dim(1) : x.dim(0);
  d.input = x.dim(2);
  d.directions = p.direction == GruDirection::Bidirectional ? 2 : 1;
  d.hidden = p.hidden_size;
  if (d.hidden <= 0 && r.rank() == 3) d.hidden = r.dim(2);  // hidden_size is optional in ONNX
  if (d.hidden <= 0) throw Error(ErrorKind::Model, "GRU: hidden_size must be > 0");
  if (p.clip && !(*p.clip >= 0)) throw Error(ErrorKind::Model, "GRU: clip must be >= 0, got " + std::to_string(*p.clip));
  return d;
}

// Shape of initial_h and Y_h for the layout.
Shape state_shape(const GruDims& d) {
  return d.layout == 0 ? Shape{d.directions, d.batch, d.hidden} : Shape{d.batch, d.directions, d.hidden};
}

// Reads sequence_lens (or T for every entry) and checks each is within [0, T].
std::vector<std::int64_t> read_lengths(const GruDims& d, const Tensor* sequence_lens) {
  if (!sequence_lens) return std::vector<std::int64_t>(static_cast<std::size_t>(d.batch), d.seq);
  if (sequence_lens->dtype() != DType::I32 && sequence_lens->dtype() != DType::I64)
    throw Error(ErrorKind::Input,
                "GRU: input 'sequence_lens' expected dtype i32 or i64, got " + sequence_lens->type_string());
  check_shape("sequence_lens", *sequence_lens, Shape{d.batch});
  std::vector<std::int64_t> lens = read_int_values(*sequence_lens, "GRU: input 'sequence_lens'");
  for (std::int64_t i = 0; i < d.batch; ++i) {
    if (lens[i] < 0 || lens[i] > d.seq)
      throw Error(ErrorKind::Input, "GRU: sequence_lens[" + std::to_string(i) + "] = " + std::to_string(lens[i]) +
                                        " is outside [0, " + std::to_string(d.seq) + "]");
  }
  return lens;
}

// Validates every input's shape and dtype against the derived dims.
void check_inputs(const GruDims& d, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
                  const Tensor* h0) {
  const DType dt = x.dtype();
  if (!is_floating(dt))
    throw Error(ErrorKind::Input, "GRU: unsupported dtype " + std::string(dtype_name(dt)) + " (expected f32 or f64)");
  for (auto [name, t] : {std::pair{"W", &w}, {"R", &r}, {"B", b}, {"initial_h", h0}}) check_dtype(name, t, dt);
  const std::int64_t D = d.directions, H = d.hidden;
  std::int64_t gate_rows = 0;
  if (__builtin_mul_overflow(H, 6, &gate_rows))
    throw Error(ErrorKind::Shape,
                "GRU: hidden_size " + std::to_string(H) + " times 6 (the bias length) overflows int64");
  check_shape("W", w, Shape{D, 3 * H, d.input});
  check_shape("R", r, Shape{D, 3 * H, H});
  if (b) check_shape("B", *b, Shape{D, 6 * H});
  if (h0) check_shape("initial_h", *h0, state_shape(d));
}

// Flat index of state [direction, batch, unit] in the layout's state tensor.
std::int64_t state_index(const GruDims& d, std::int64_t dir, std::int64_t b, std::int64_t j) {
  return d.layout == 0 ? (dir * d.batch + b) * d.hidden + j : (b * d.directions + dir) * d.hidden + j;
}

// Flat index of Y [t, direction, batch, unit] in the layout's Y tensor.
std::int64_t output_index(const GruDims& d, std::int64_t t, std::int64_t dir, std::int64_t b, std::int64_t j) {
  return d.layout == 0 ? ((t * d.directions + dir) * d.batch + b) * d.hidden + j
                       : ((b * d.seq + t) * d.directions + dir) * d.hidden + j;
}

// Pointer to the input vector x[t, b] in the layout's X tensor.
template <typename T>
const T* input_row(const GruDims& d, const T* x, std::int64_t t, std::int64_t b) {
  return x + (d.layout == 0 ? t * d.batch + b : b * d.seq + t) * d.input;
}

// Logistic sigmoid.
Accumulator sigmoid(Accumulator v) { return 1.0 / (1.0 + std::exp(-v)); }

// Clamps a gate pre-activation to [-clip, clip] when clip is set.
Accumulator clip_gate(const GruParams& p, Accumulator v) { return p.clip ? std::clamp(v, -*p.clip, *p.clip) : v; }

// W x + Wb for gate row `row` (of 3H).
template <typename T>
Accumulator input_part(const GruDims& d, const GruInputs<T>& in, std::int64_t dir, std::int64_t row, const T* x_row) {
  const T* w = in.w + (dir * 3 * d.hidden + row) * d.input;
  Accumulator acc = in.b ? Accumulator(in.b[dir * 6 * d.hidden + row]) : 0;
  for (std::int64_t k = 0; k < d.input; ++k) acc += Accumulator(w[k]) * Accumulator(x_row[k]);
  return acc;
}

// R h + Rb for gate row `row` (of 3H), with h of length H.
template <typename T, typename S>
Accumulator recurrent_part(const GruDims& d, const GruInputs<T>& in, std::int64_t dir, std::int64_t row, const S* h) {
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
void step_cell(const GruParams& p, const GruDims& d, const GruInputs<T>& in, std::int64_t dir, const T* x_row,
               std::vector<T>& h) {
  const std::size_t H = static_cast<std::size_t>(d.hidden);
  std::vector<Accumulator> z(H), r(H), reset_h(H);
  for (std::int64_t j = 0; j < d.hidden; ++j) {
    z[j] = sigmoid(clip_gate(p, input_part(d, in, dir, j, x_row) + recurrent_part(d, in, dir, j, h.data())));
    const std::int64_t row = d.hidden + j;
    r[j] = sigmoid(clip_gate(p, input_part(d, in, dir, row, x_row) + recurrent_part(d, in, dir, row, h.data())));
    reset_h[j] = r[j] * Accumulator(h[j]);
  }
  std::vector<T> h_new(H);
  for (std::int64_t j = 0; j < d.hidden; ++j) {
    const std::int64_t row = 2 * d.hidden + j;
    const Accumulator rh = p.linear_before_reset ? r[j] * recurrent_part(d, in, dir, row, h.data())
                                                 : recurrent_part(d, in, dir, row, reset_h.data());
    const Accumulator candidate = std::tanh(clip_gate(p, input_part(d, in, dir, row, x_row) + rh));
    h_new[j] = T((1.0 - z[j]) * candidate + z[j] * Accumulator(h[j]));
  }
  h.swap(h_new);
}

// Runs one direction over every batch entry, writing Y (if any) and the final state.
template <typename T>
void run_direction(const GruParams& p, const GruDims& d, const GruInputs<T>& in, std::int64_t dir, bool reverse, T* y,
                   T* y_h) {
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
void run_gru(const GruParams& p, const GruDims& d, const GruInputs<T>& in, DType dt, Tensor* y, Tensor* y_h) {
  const Shape y_shape =
      d.layout == 0 ? Shape{d.seq, d.directions, d.batch, d.hidden} : Shape{d.batch, d.seq, d.directions, d.hidden};
  T* py = nullptr;
  if (y) {
    y->reset(dt, y_shape);
    py = y->data<T>();
    std::fill(py, py + y->numel(), T(0));  // steps past a sequence's length stay zero
  }
  if (y_h) y_h->reset(dt, state_shape(d));
  T* ph = y_h ? y_h->data<T>() : nullptr;
  for (std::int64_t dir = 0; dir < d.directions; ++dir) {
    const bool reverse = p.direction == GruDirection::Reverse || dir == 1;
    run_direction(p, d, in, dir, reverse, py, ph);
  }
}

// Typed pointer to an optional input, or null.
template <typename T>
const T* optional_data(const Tensor* t) {
  return t ? t->data<T>() : nullptr;
}

// Gathers typed input pointers and runs the GRU in element type T.
template <typename T>
void dispatch_gru(const GruParams& p, const GruDims& d, const Tensor& x, const Tensor& w, const Tensor& r,
                  const Tensor* b, std::vector<std::int64_t> lens, const Tensor* h0, Tensor* y, Tensor* y_h) {
  GruInputs<T> in{x.data<T>(), w.data<T>(), r.data<T>(), optional_data<T>(b), optional_data<T>(h0), std::move(lens)};
  run_gru(p, d, in, x.dtype(), y, y_h);
}

}  // namespace

// ONNX GRU with default activations over x, writing whichever of Y, Y_h are requested.
void gru(const GruParams& p, const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
         const Tensor* sequence_lens, const Tensor* initial_h, Tensor* y, Tensor* y_h) {
  const GruDims d = plan_dims(p, x, r);
  check_inputs(d, x, w, r, b, initial_h);
  std::vector<std::int64_t> lens = read_lengths(d, sequence_lens);
  if (x.dtype() == DType::F32)
    dispatch_gru<float>(p, d, x, w, r, b, std::move(lens), initial_h, y, y_h);
  else
    dispatch_gru<double>(p, d, x, w, r, b, std::move(lens), initial_h, y, y_h);
}

}  // namespace canary::kernels
