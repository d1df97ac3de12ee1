// Shape rule of GRU (ONNX opset 14): attribute checks, weight shapes tied to
// hidden_size and the input size, outputs Y and Y_h.
#include "graph/shape_rules.h"

namespace canary::graph::rules {

// GRU: X [T, B, I] (layout 0) or [B, T, I] (layout 1); W [D, 3H, I],
// R [D, 3H, H], B [D, 6H]; Y [T, D, B, H] or [B, T, D, H]; Y_h [D, B, H] or [B, D, H].
void infer_gru(InferContext& ctx) {
  static const RecurrentRuleSpec kGru{3, 6, {1, 2, 3, 5}, {"Sigmoid", "Tanh"}, {"linear_before_reset"}, {}};
  const RecurrentFrame f = infer_recurrent_frame(ctx, kGru);
  set_recurrent_outputs(ctx, f, 1);
}

}  // namespace canary::graph::rules
