// PreparedCall: a fused group's or row kernel's call with its inputs
// collapsed, its layout checked and its outputs sized, not yet run. The
// trace driver prepares a step and runs it at once, or, for a device chain,
// prepares every step of the chain before the device runs them together.
#pragma once

#include <cstdint>

#include "jit/fused_kernel.h"
#include "jit/fused_row.h"
#include "jit/plan_fusion.h"

namespace canary::jit {

struct PreparedCall {
  const float* inputs[kMaxFusedInputs] = {};
  float* outputs[kMaxFusedInputs] = {};  // a row kernel has outputs[0] only
  const float* scale = nullptr;          // a row kernel's LayerNorm vectors
  const float* bias = nullptr;
  CollapsedLayout layout;
  bool empty = false;  // no element to compute: nothing runs

  std::int64_t rows() const { return layout.dims[0] * layout.dims[1]; }

  // Arguments over every row, pointing into this call (valid while it lives, unmoved).
  FusedArgs fused_args() const {
    FusedArgs args;
    args.inputs = inputs;
    args.outputs = outputs;
    args.strides = layout.strides;
    for (int d = 0; d < 3; ++d) args.dims[d] = layout.dims[d];
    args.row_begin = 0;
    args.row_end = rows();
    return args;
  }
  RowArgs row_args() const {
    RowArgs args;
    args.inputs = inputs;
    args.strides = layout.strides;
    args.output = outputs[0];
    args.scale = scale;
    args.bias = bias;
    for (int d = 0; d < 3; ++d) args.dims[d] = layout.dims[d];
    args.row_begin = 0;
    args.row_end = rows();
    return args;
  }
};

}  // namespace canary::jit
