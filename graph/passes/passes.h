// The passes of the graph optimizer (optimizer.h). Each reads the graph
// through its GraphEdit, records its rewrites there and one line per rewrite
// in `details`; the pipeline rebuilds and re-infers the graph after it.
#pragma once

#include <string>
#include <vector>

#include "graph/passes/graph_edit.h"
#include "graph/passes/optimizer.h"

namespace canary::graph::passes {

struct PassContext {
  GraphEdit& edit;
  const OptimizerOptions& options;
  std::vector<std::string>& details;
};

// Identity, inference Dropout, Cast to the same dtype, shape ops that keep the shape (remove_no_ops.cpp).
void remove_no_ops(PassContext& ctx);
// Pow by a constant 2 as Mul(x, x) (reduce_strength.cpp).
void reduce_strength(PassContext& ctx);
// Nodes whose inputs are all constants, and integer values known from shapes (fold_constants.cpp).
void fold_constants(PassContext& ctx);
// Nodes computing what an earlier node already computed (common_subexpressions.cpp).
void eliminate_common_subexpressions(PassContext& ctx);
// BatchNormalization into the Conv/Gemm before it, or into a per-channel multiply-add (fold_batch_norm.cpp).
void fold_batch_norm(PassContext& ctx);
// A zero constant-mode Pad of spatial dims that only Convs read, into their pads (fold_pad_into_conv.cpp).
void fold_pad_into_conv(PassContext& ctx);
// MatMul of a 2-D input by a constant matrix, then Add of a bias row, as one Gemm (fuse_matmul_add.cpp).
void fuse_matmul_add(PassContext& ctx);
// Layer normalisation written as ReduceMean, Sub, square, ReduceMean, Add, Sqrt, Div (and a
// per-feature scale and shift) as one LayerNormalization (fuse_layer_norm.cpp).
void fuse_layer_norm(PassContext& ctx);
// 2-D f32 convolution chains in [N, H, W, C], transposes only at their edges (channels_last.cpp).
void convert_to_channels_last(PassContext& ctx);

}  // namespace canary::graph::passes
