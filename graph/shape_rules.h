// Shape-inference rules of every op (internal to canary_graph): the functions
// the schema table in op_registry.cpp points at.
#pragma once

#include <string>

#include "canary/error.h"
#include "graph/op_registry.h"

namespace canary::graph {

// Throws Error(kind) whose message starts "node 'NAME' (Op): ".
[[noreturn]] void fail_node(const Node& node, ErrorKind kind, const std::string& text);

// Infers a subgraph whose structure verify_graph already checked (with its
// enclosing scope): validation and shape inference of every node, in order.
void infer_subgraph(Graph& graph);

namespace rules {

// Helpers shared by several rule files.
// Fresh symbols for a 1-D shape input whose contents are unknown; its length
// must be a constant no larger than kMaxTensorRank (shape_rules_tensor.cpp).
DimVector fresh_dims_for_shape_input(InferContext& ctx, int i);
// An ints attribute of a given length, or `fill` repeated when absent
// (shape_rules_linear.cpp).
std::vector<std::int64_t> ints_or(const InferContext& ctx, std::string_view name, std::size_t length,
                                  std::int64_t fill);
// [N, spatial..., C] as [N, C, spatial...], and back (the channels_last
// attribute of Conv and pooling; shape_rules_linear.cpp).
DimVector channels_first(const DimVector& channels_last);
DimVector channels_last_of(const DimVector& channels_first);

// shape_rules_elementwise.cpp
void infer_arithmetic(InferContext& ctx);   // Add Sub Mul Div
void infer_pow(InferContext& ctx);          // Pow
void infer_variadic(InferContext& ctx);     // Max Min Sum
void infer_float_test(InferContext& ctx);   // IsNaN IsInf: a float in, bool of its shape out
void infer_mean(InferContext& ctx);         // Mean: variadic, floats only
void infer_prelu(InferContext& ctx);        // PRelu: x and its slope, same dtype, broadcast
void infer_comparison(InferContext& ctx);   // Equal Less Greater
void infer_where(InferContext& ctx);        // Where
void infer_unary_float(InferContext& ctx);  // Exp Log Sqrt Tanh Sigmoid Erf
void infer_unary_numeric(InferContext& ctx);  // Neg Abs Relu
void infer_gelu(InferContext& ctx);
void infer_clip(InferContext& ctx);

// shape_rules_linear.cpp
void infer_matmul(InferContext& ctx);
void infer_gemm(InferContext& ctx);
void infer_conv(InferContext& ctx);
void infer_conv_transpose(InferContext& ctx);

// shape_rules_reduce.cpp
void infer_reduce(InferContext& ctx);  // the ReduceX family
void infer_arg_reduce(InferContext& ctx);  // ArgMax ArgMin
void infer_softmax(InferContext& ctx);  // Softmax LogSoftmax Hardmax
void infer_cumsum(InferContext& ctx);
void infer_layer_norm(InferContext& ctx);

// shape_rules_lstm.cpp
void infer_lstm(InferContext& ctx);

// shape_rules_recurrent.cpp: checks shared by LSTM, GRU and RNN (inputs X W R
// B sequence_lens initial_h at 0..5). W and R hold gates*H rows, B bias_gates*H.
struct RecurrentRuleSpec {
  std::int64_t gates = 0;
  std::int64_t bias_gates = 0;
  std::vector<int> float_inputs;           // inputs that must share X's dtype
  std::vector<const char*> activations;    // the defaults of one direction
  std::vector<const char*> binary_flags;   // integer attributes that must be 0 or 1
  std::vector<const char*> alternatives;   // other activations accepted at any position
};
// Dims derived by infer_recurrent_frame: T, B, D, H and the state shape.
struct RecurrentFrame {
  DType dtype = DType::F32;
  std::int64_t hidden = 0, layout = 0;
  Dim t, b, d, h;
  DimVector state;
};
// Checks input i's full shape against expected (an absent input passes).
void check_recurrent_shape(InferContext& ctx, int i, const DimVector& expected, const char* what);
// Runs the checks shared by LSTM, GRU and RNN, through initial_h, and returns the derived dims.
RecurrentFrame infer_recurrent_frame(InferContext& ctx, const RecurrentRuleSpec& spec);
// Sets Y (output 0) and the final states (outputs 1..state_outputs).
void set_recurrent_outputs(InferContext& ctx, const RecurrentFrame& f, int state_outputs);

// shape_rules_pool.cpp
void infer_pool(InferContext& ctx);         // MaxPool AveragePool
void infer_global_pool(InferContext& ctx);  // GlobalAveragePool

// shape_rules_batch_norm.cpp
void infer_batch_norm(InferContext& ctx);  // BatchNormalization (inference form)

// shape_rules_gru.cpp
void infer_gru(InferContext& ctx);

// shape_rules_rnn.cpp
void infer_rnn(InferContext& ctx);

// shape_rules_lrn.cpp
void infer_lrn(InferContext& ctx);

// shape_rules_tensor.cpp
void infer_reshape(InferContext& ctx);
void infer_expand(InferContext& ctx);
void infer_transpose(InferContext& ctx);
void infer_concat(InferContext& ctx);
void infer_flatten(InferContext& ctx);
void infer_identity(InferContext& ctx);
void infer_cast(InferContext& ctx);
void infer_shape(InferContext& ctx);
void infer_size(InferContext& ctx);

// shape_rules_indexing.cpp
void infer_slice(InferContext& ctx);
void infer_gather(InferContext& ctx);
void infer_gather_elements(InferContext& ctx);
void infer_squeeze(InferContext& ctx);
void infer_unsqueeze(InferContext& ctx);
void infer_trilu(InferContext& ctx);

// shape_rules_scatter_gather.cpp
void infer_gather_nd(InferContext& ctx);         // GatherND (opset 13): batch_dims
void infer_scatter_nd(InferContext& ctx);        // ScatterND (opset 18): reduction
void infer_scatter_elements(InferContext& ctx);  // ScatterElements (opset 18): axis, reduction

// shape_rules_layout_index.cpp
void infer_depth_to_space(InferContext& ctx);  // DepthToSpace (opset 13): DCR or CRD
void infer_space_to_depth(InferContext& ctx);  // SpaceToDepth (opset 13)
void infer_eye_like(InferContext& ctx);        // EyeLike (opset 9)
void infer_one_hot(InferContext& ctx);         // OneHot (opset 11)
void infer_top_k(InferContext& ctx);           // TopK (opset 11): Values and Indices

// shape_rules_control.cpp
void infer_loop(InferContext& ctx);
void infer_if(InferContext& ctx);
void infer_scan(InferContext& ctx);

// shape_rules_elementwise_extra.cpp
void infer_not(InferContext& ctx);
void infer_logical(InferContext& ctx);  // And Or
void infer_mod(InferContext& ctx);
void infer_dropout(InferContext& ctx);

// shape_rules_generators.cpp
void infer_constant_of_shape(InferContext& ctx);
void infer_range(InferContext& ctx);

// shape_rules_pad_tile_split.cpp
void infer_tile(InferContext& ctx);
void infer_pad(InferContext& ctx);
void infer_resize(InferContext& ctx);       // Resize (opset 13): by scales or to sizes
void infer_split(InferContext& ctx);

}  // namespace rules
}  // namespace canary::graph
