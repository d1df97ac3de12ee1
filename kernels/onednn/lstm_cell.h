// The LSTM cell update of one time step over a block of batch rows, given
// the gate pre-activations the step's matrix products left in a buffer.
#pragma once

#include <cstdint>

namespace canary::kernels::onednn {

// One step's rows. Row b's pre-activations are gates[b * gates_stride + k]
// for the 4H gate units in ONNX order (i, o, f, c): X W^T + h R^T, without
// the bias. States are dense [rows][H].
struct LstmCellRows {
  const float* gates = nullptr;
  std::int64_t gates_stride = 0;
  const float* bias = nullptr;       // [4H] Wb + Rb
  const float* peepholes = nullptr;  // [3H] (i, o, f), or null
  float clip = 0.0f;                 // pre-activations clamped to [-clip, clip]; infinity for none
  bool input_forget = false;         // f = 1 - i
  float* c = nullptr;                // [rows][H]: the previous cell state, replaced by the new one
  float* h = nullptr;                // [rows][H]: receives the new hidden state
  float* y = nullptr;                // the new hidden state's row b also goes to y[b * y_stride], when set
  std::int64_t y_stride = 0;
  std::int64_t rows = 0, hidden = 0;
};

// c = f * c + i * tanh(g~), h = o * tanh(c), with i, f, o sigmoids of their
// pre-activations (plus peephole terms) as ONNX defines them; vectorised
// for the host's ISA (kernels/host_simd.h).
void lstm_cell_rows(const LstmCellRows& step);

}  // namespace canary::kernels::onednn
