// The GRU cell update of one time step over a block of batch rows, given
// the products the step's sgemm calls left in two buffers.
#pragma once

#include <cstdint>

namespace canary::kernels::onednn {

// One step's rows, gates in ONNX order (z, r, h). Row b's input projection
// X W^T is gates[b * gates_stride + k] and its recurrent product h R^T is
// recurrent[b * 3H + k], both without bias; the hidden state is dense [rows][H].
struct GruCellRows {
  const float* gates = nullptr;
  std::int64_t gates_stride = 0;
  float* recurrent = nullptr;
  const float* bias = nullptr;  // [4H]: Wbz + Rbz, Wbr + Rbr, Wbh, Rbh
  float clip = 0.0f;            // pre-activations clamped to [-clip, clip]; infinity for none
  float* h = nullptr;           // [rows][H]: the previous hidden state, replaced by the new one
  float* reset_hidden = nullptr;  // [rows][H]: r * h_prev, written by gru_reset_gate_rows
  float* y = nullptr;           // the new hidden state's row b also goes to y[b * y_stride], when set
  std::int64_t y_stride = 0;
  std::int64_t rows = 0, hidden = 0;
};

// linear_before_reset = 1, the whole step: h~ = tanh(Xh + Wbh + r * (Rh h + Rbh)).
void gru_cell_rows_linear_before_reset(const GruCellRows& step);

// linear_before_reset = 0, in two halves around the h gate's product, which
// needs r first: h~ = tanh(Xh + (r * h) Rh^T + Wbh + Rbh).
// First half: z and r from the z and r products; writes r * h_prev to
// reset_hidden and keeps z in the recurrent buffer's z slots.
void gru_reset_gate_rows(const GruCellRows& step);
// Second half, once the caller has put (r * h) Rh^T into the recurrent buffer's h slots.
void gru_cell_rows_after_reset(const GruCellRows& step);

}  // namespace canary::kernels::onednn
