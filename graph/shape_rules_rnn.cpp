// Shape rule of RNN (ONNX opset 14): attribute checks, weight shapes tied to
// hidden_size and the input size, outputs Y and Y_h.
#include "graph/shape_rules.h"

namespace canary::graph::rules {

// RNN: X [T, B, I] (layout 0) or [B, T, I] (layout 1); W [D, H, I],
// R [D, H, H], B [D, 2H]; Y [T, D, B, H] or [B, T, D, H]; Y_h [D, B, H] or [B, D, H].
// One activation per direction: Tanh (the default), Relu or Sigmoid.
void infer_rnn(InferContext& ctx) {
  static const RecurrentRuleSpec kRnn{1, 2, {1, 2, 3, 5}, {"Tanh"}, {}, {"Relu", "Sigmoid"}};
  const RecurrentFrame f = infer_recurrent_frame(ctx, kRnn);
  set_recurrent_outputs(ctx, f, 1);
}

}  // namespace canary::graph::rules
