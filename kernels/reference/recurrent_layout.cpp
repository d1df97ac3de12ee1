// Validation and layout shapes shared by the reference recurrent kernels (LSTM, GRU and RNN).
#include "kernels/reference/recurrent_layout.h"

#include <string>

#include "canary/error.h"
#include "kernels/reference.h"

namespace canary::kernels::recurrent {
namespace {

// Throws Error(Input) when an optional float input does not share x's dtype.
void check_dtype(const RecurrentSpec& s, const char* name, const Tensor* t, DType want) {
  if (t && t->dtype() != want)
    throw Error(ErrorKind::Input, std::string(s.op) + ": input '" + name + "' expected dtype " +
                                      std::string(dtype_name(want)) + ", got " + t->type_string());
}

}  // namespace

// Throws Error(Shape) unless t has exactly the expected shape.
void check_shape(const RecurrentSpec& s, const char* name, const Tensor& t, const Shape& want) {
  if (t.shape() != want)
    throw Error(ErrorKind::Shape, std::string(s.op) + ": input '" + name + "' expected shape " +
                                      shape_to_string(want) + ", got " + shape_to_string(t.shape()));
}

// Derives T, B, I, H and D from x, r and the attributes.
RecurrentDims plan_dims(const RecurrentSpec& s, const RecurrentAttrs& a, const Tensor& x, const Tensor& r) {
  const std::string op(s.op);
  if (a.layout != 0 && a.layout != 1)
    throw Error(ErrorKind::Model, op + ": layout must be 0 or 1, got " + std::to_string(a.layout));
  if (x.rank() != 3)
    throw Error(ErrorKind::Shape, op + ": input 'X' expected rank 3, got " + shape_to_string(x.shape()));
  RecurrentDims d;
  d.layout = a.layout;
  d.seq = a.layout == 0 ? x.dim(0) : x.dim(1);
  d.batch = a.layout == 0 ? x.dim(1) : x.dim(0);
  d.input = x.dim(2);
  d.directions = a.bidirectional ? 2 : 1;
  d.hidden = a.hidden_size;
  if (d.hidden <= 0 && r.rank() == 3) d.hidden = r.dim(2);  // hidden_size is optional in ONNX
  if (d.hidden <= 0) throw Error(ErrorKind::Model, op + ": hidden_size must be > 0");
  if (a.clip && !(*a.clip >= 0))
    throw Error(ErrorKind::Model, op + ": clip must be >= 0, got " + std::to_string(*a.clip));
  return d;
}

// Checks x's dtype, that every listed input shares it, and the shapes of W, R and B.
void check_weights(const RecurrentSpec& s, const RecurrentDims& d, const Tensor& x, const Tensor& w, const Tensor& r,
                   const Tensor* b, std::initializer_list<std::pair<const char*, const Tensor*>> same_dtype) {
  const DType dt = x.dtype();
  if (!is_floating(dt))
    throw Error(ErrorKind::Input,
                std::string(s.op) + ": unsupported dtype " + std::string(dtype_name(dt)) + " (expected f32 or f64)");
  for (auto [name, t] : same_dtype) check_dtype(s, name, t, dt);
  const std::int64_t D = d.directions, H = d.hidden;
  std::int64_t bias_length = 0;
  if (__builtin_mul_overflow(H, s.bias_gates, &bias_length))
    throw Error(ErrorKind::Shape, std::string(s.op) + ": hidden_size " + std::to_string(H) + " times " +
                                      std::to_string(s.bias_gates) + " (the bias length) overflows int64");
  check_shape(s, "W", w, Shape{D, s.gates * H, d.input});
  check_shape(s, "R", r, Shape{D, s.gates * H, H});
  if (b) check_shape(s, "B", *b, Shape{D, bias_length});
}

// Reads sequence_lens (or T for every entry) and checks each is within [0, T].
std::vector<std::int64_t> read_lengths(const RecurrentSpec& s, const RecurrentDims& d, const Tensor* sequence_lens) {
  if (!sequence_lens) return std::vector<std::int64_t>(static_cast<std::size_t>(d.batch), d.seq);
  const std::string op(s.op);
  if (sequence_lens->dtype() != DType::I32 && sequence_lens->dtype() != DType::I64)
    throw Error(ErrorKind::Input,
                op + ": input 'sequence_lens' expected dtype i32 or i64, got " + sequence_lens->type_string());
  check_shape(s, "sequence_lens", *sequence_lens, Shape{d.batch});
  const std::string what = op + ": input 'sequence_lens'";
  std::vector<std::int64_t> lens = read_int_values(*sequence_lens, what.c_str());
  for (std::int64_t i = 0; i < d.batch; ++i) {
    if (lens[i] < 0 || lens[i] > d.seq)
      throw Error(ErrorKind::Input, op + ": sequence_lens[" + std::to_string(i) + "] = " + std::to_string(lens[i]) +
                                        " is outside [0, " + std::to_string(d.seq) + "]");
  }
  return lens;
}

// Shape of the initial and final states for the layout.
Shape state_shape(const RecurrentDims& d) {
  return d.layout == 0 ? Shape{d.directions, d.batch, d.hidden} : Shape{d.batch, d.directions, d.hidden};
}

// Shape of Y for the layout.
Shape output_shape(const RecurrentDims& d) {
  return d.layout == 0 ? Shape{d.seq, d.directions, d.batch, d.hidden} : Shape{d.batch, d.seq, d.directions, d.hidden};
}

}  // namespace canary::kernels::recurrent
