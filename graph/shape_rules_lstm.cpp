// Shape rule of LSTM (ONNX opset 14): attribute checks, weight shapes tied to
// hidden_size and the input size, outputs Y, Y_h, Y_c.
#include "graph/shape_rules.h"

namespace canary::graph::rules {

// LSTM: X [T, B, I] (layout 0) or [B, T, I] (layout 1); W [D, 4H, I],
// R [D, 4H, H], B [D, 8H]; Y [T, D, B, H] or [B, T, D, H]; Y_h, Y_c [D, B, H]
// or [B, D, H].
void infer_lstm(InferContext& ctx) {
  static const RecurrentRuleSpec kLstm{4, 8, {1, 2, 3, 5, 6, 7}, {"Sigmoid", "Tanh", "Tanh"}, {}, {}};
  const RecurrentFrame f = infer_recurrent_frame(ctx, kLstm);
  check_recurrent_shape(ctx, 6, f.state, "initial_c");
  check_recurrent_shape(ctx, 7, {f.d, Dim(3 * f.hidden)}, "P");
  set_recurrent_outputs(ctx, f, 2);
}

}  // namespace canary::graph::rules
