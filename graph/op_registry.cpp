// The op schema table: arity from op_kinds.def, attributes with types and
// defaults, and the shape-inference rule of every op.
#include "graph/op_registry.h"


#include "graph/shape_rules.h"

namespace canary::graph {
namespace {

using Attrs = std::vector<AttrSpec>;

// An attribute with a default value.
AttrSpec opt(std::string_view name, AttrType type, AttrValue def) {
  return AttrSpec{name, type, std::move(def), false};
}

// An optional attribute without a default (absent unless given).
AttrSpec absent(std::string_view name, AttrType type) { return AttrSpec{name, type, std::nullopt, false}; }

// A required attribute.
AttrSpec req(std::string_view name, AttrType type) { return AttrSpec{name, type, std::nullopt, true}; }

// An attribute only graph passes set (AttrSpec::internal), with a default.
AttrSpec internal(std::string_view name, AttrType type, AttrValue def) {
  return AttrSpec{name, type, std::move(def), false, true};
}

// channels_last = 1: the data input and output are [N, spatial..., C]
// instead of [N, C, spatial...] (graph/passes/channels_last.cpp).
AttrSpec channels_last() { return internal("channels_last", AttrType::Int, std::int64_t{0}); }

using I = std::int64_t;

// The float attributes of a unary_ops.def row ("" names an unused slot).
Attrs unary_attrs(std::string_view attr0, double default0, std::string_view attr1, double default1) {
  Attrs attrs;
  if (!attr0.empty()) attrs.push_back(opt(attr0, AttrType::Float, default0));
  if (!attr1.empty()) attrs.push_back(opt(attr1, AttrType::Float, default1));
  return attrs;
}

// Domains of unary_ops.def rows, named as the table names them.
namespace unary_domain {
enum Domain { Numeric, Float };
}

// The attributes of an op.
Attrs attrs_of(OpKind op) {
  switch (op) {
#define CANARY_UNARY_OP(o, domain, attr0, default0, attr1, default1) \
  case OpKind::o: return unary_attrs(attr0, default0, attr1, default1);
#include "runtime/core/unary_ops.def"
#undef CANARY_UNARY_OP
    case OpKind::Gelu: return {opt("approximate", AttrType::String, std::string("none"))};
    case OpKind::Gemm:
      return {opt("alpha", AttrType::Float, 1.0), opt("beta", AttrType::Float, 1.0),
              opt("transA", AttrType::Int, I{0}), opt("transB", AttrType::Int, I{0})};
    case OpKind::Conv:
      return {absent("kernel_shape", AttrType::Ints), absent("strides", AttrType::Ints),
              absent("pads", AttrType::Ints),         absent("dilations", AttrType::Ints),
              opt("group", AttrType::Int, I{1}),      opt("auto_pad", AttrType::String, std::string("NOTSET")),
              channels_last()};
    case OpKind::ConvTranspose:
      return {absent("kernel_shape", AttrType::Ints),   absent("strides", AttrType::Ints),
              absent("pads", AttrType::Ints),           absent("dilations", AttrType::Ints),
              absent("output_padding", AttrType::Ints), absent("output_shape", AttrType::Ints),
              opt("group", AttrType::Int, I{1}),        opt("auto_pad", AttrType::String, std::string("NOTSET"))};
    case OpKind::MaxPool:
      return {req("kernel_shape", AttrType::Ints),         absent("strides", AttrType::Ints),
              absent("pads", AttrType::Ints),              absent("dilations", AttrType::Ints),
              opt("auto_pad", AttrType::String, std::string("NOTSET")), opt("ceil_mode", AttrType::Int, I{0}),
              opt("storage_order", AttrType::Int, I{0}), channels_last()};
    case OpKind::AveragePool:
      return {req("kernel_shape", AttrType::Ints),         absent("strides", AttrType::Ints),
              absent("pads", AttrType::Ints),              absent("dilations", AttrType::Ints),
              opt("auto_pad", AttrType::String, std::string("NOTSET")), opt("ceil_mode", AttrType::Int, I{0}),
              opt("count_include_pad", AttrType::Int, I{0}), channels_last()};
    case OpKind::ReduceSum:
      return {opt("keepdims", AttrType::Int, I{1}), opt("noop_with_empty_axes", AttrType::Int, I{0})};
    case OpKind::ReduceMean:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
    case OpKind::ReduceProd:
    case OpKind::ReduceL1:
    case OpKind::ReduceL2:
    case OpKind::ReduceSumSquare:
    case OpKind::ReduceLogSum:
    case OpKind::ReduceLogSumExp: return {absent("axes", AttrType::Ints), opt("keepdims", AttrType::Int, I{1})};
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
    case OpKind::Hardmax: return {opt("axis", AttrType::Int, I{-1})};
    case OpKind::CumSum: return {opt("exclusive", AttrType::Int, I{0}), opt("reverse", AttrType::Int, I{0})};
    case OpKind::ArgMax:
    case OpKind::ArgMin:
      return {opt("axis", AttrType::Int, I{0}), opt("keepdims", AttrType::Int, I{1}),
              opt("select_last_index", AttrType::Int, I{0})};
    case OpKind::LayerNormalization:
      return {opt("axis", AttrType::Int, I{-1}), opt("epsilon", AttrType::Float, 1e-5),
              opt("stash_type", AttrType::Int, I{1})};
    case OpKind::BatchNormalization:
      return {opt("epsilon", AttrType::Float, 1e-5), opt("momentum", AttrType::Float, 0.9),
              opt("training_mode", AttrType::Int, I{0})};
    case OpKind::LRN:
      return {opt("alpha", AttrType::Float, 1e-4), opt("beta", AttrType::Float, 0.75),
              opt("bias", AttrType::Float, 1.0), req("size", AttrType::Int)};
    case OpKind::Reshape: return {opt("allowzero", AttrType::Int, I{0})};
    case OpKind::Transpose: return {absent("perm", AttrType::Ints)};
    case OpKind::Concat: return {req("axis", AttrType::Int)};
    case OpKind::Gather:
    case OpKind::GatherElements: return {opt("axis", AttrType::Int, I{0})};
    case OpKind::GatherND: return {opt("batch_dims", AttrType::Int, I{0})};
    // reduction: "add" and "mul" from opset 16, "max" and "min" from opset 18.
    case OpKind::ScatterND: return {opt("reduction", AttrType::String, std::string("none"))};
    case OpKind::ScatterElements:
      return {opt("axis", AttrType::Int, I{0}), opt("reduction", AttrType::String, std::string("none"))};
    case OpKind::Shape: return {opt("start", AttrType::Int, I{0}), absent("end", AttrType::Int)};
    case OpKind::Cast: return {req("to", AttrType::String)};
    case OpKind::Flatten: return {opt("axis", AttrType::Int, I{1})};
    case OpKind::Trilu: return {opt("upper", AttrType::Int, I{1})};
    case OpKind::DepthToSpace:
      return {req("blocksize", AttrType::Int), opt("mode", AttrType::String, std::string("DCR"))};
    case OpKind::SpaceToDepth: return {req("blocksize", AttrType::Int)};
    // dtype arrives as a dtype name, converted from ONNX's enum as Cast's `to` is.
    case OpKind::EyeLike: return {absent("dtype", AttrType::String), opt("k", AttrType::Int, I{0})};
    case OpKind::OneHot: return {opt("axis", AttrType::Int, I{-1})};
    case OpKind::TopK:
      return {opt("axis", AttrType::Int, I{-1}), opt("largest", AttrType::Int, I{1}), opt("sorted", AttrType::Int, I{1})};
    case OpKind::LSTM:
      // activations: comma-separated names ("Sigmoid,Tanh,Tanh"); AttrValue has no string list.
      return {req("hidden_size", AttrType::Int),
              opt("direction", AttrType::String, std::string("forward")),
              opt("layout", AttrType::Int, I{0}),
              absent("clip", AttrType::Float),
              opt("input_forget", AttrType::Int, I{0}),
              absent("activations", AttrType::String)};
    case OpKind::GRU:
      // activations: comma-separated names ("Sigmoid,Tanh"), as for LSTM.
      return {req("hidden_size", AttrType::Int),
              opt("direction", AttrType::String, std::string("forward")),
              opt("layout", AttrType::Int, I{0}),
              absent("clip", AttrType::Float),
              opt("linear_before_reset", AttrType::Int, I{0}),
              absent("activations", AttrType::String)};
    case OpKind::RNN:
      // activations: comma-separated names ("Tanh" or "Relu,Sigmoid"), as for LSTM.
      return {req("hidden_size", AttrType::Int),
              opt("direction", AttrType::String, std::string("forward")),
              opt("layout", AttrType::Int, I{0}),
              absent("clip", AttrType::Float),
              absent("activations", AttrType::String)};
    case OpKind::Mod: return {opt("fmod", AttrType::Int, I{0})};
    case OpKind::IsInf: return {opt("detect_negative", AttrType::Int, I{1}), opt("detect_positive", AttrType::Int, I{1})};
    case OpKind::Dropout: return {absent("seed", AttrType::Int)};
    case OpKind::ConstantOfShape: return {absent("value", AttrType::Tensor)};
    case OpKind::Pad: return {opt("mode", AttrType::String, std::string("constant"))};
    case OpKind::Resize:
      return {opt("coordinate_transformation_mode", AttrType::String, std::string("half_pixel")),
              opt("cubic_coeff_a", AttrType::Float, -0.75),
              opt("exclude_outside", AttrType::Int, I{0}),
              opt("extrapolation_value", AttrType::Float, 0.0),
              opt("mode", AttrType::String, std::string("nearest")),
              opt("nearest_mode", AttrType::String, std::string("round_prefer_floor"))};
    case OpKind::Split: return {opt("axis", AttrType::Int, I{0})};
    case OpKind::Loop: return {req("body", AttrType::Graph)};
    case OpKind::If: return {req("then_branch", AttrType::Graph), req("else_branch", AttrType::Graph)};
    case OpKind::Scan:
      return {req("body", AttrType::Graph),
              req("num_scan_inputs", AttrType::Int),
              absent("scan_input_directions", AttrType::Ints),
              absent("scan_output_directions", AttrType::Ints),
              absent("scan_input_axes", AttrType::Ints),
              absent("scan_output_axes", AttrType::Ints)};
    default: return {};
  }
}

// The shape-inference rule of an op.
InferFn infer_of(OpKind op) {
  using namespace rules;
  switch (op) {
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div: return infer_arithmetic;
    case OpKind::Pow: return infer_pow;
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Sum: return infer_variadic;
    case OpKind::Mean: return infer_mean;
    case OpKind::PRelu: return infer_prelu;
    case OpKind::Equal:
    case OpKind::Less:
    case OpKind::Greater: return infer_comparison;
    case OpKind::Where: return infer_where;
#define CANARY_UNARY_OP(o, domain, ...) \
  case OpKind::o: return unary_domain::domain == unary_domain::Numeric ? infer_unary_numeric : infer_unary_float;
#include "runtime/core/unary_ops.def"
#undef CANARY_UNARY_OP
    case OpKind::Gelu: return infer_gelu;
    case OpKind::Clip: return infer_clip;
    case OpKind::Not: return infer_not;
    case OpKind::And:
    case OpKind::Or:
    case OpKind::Xor: return infer_logical;
    case OpKind::IsNaN:
    case OpKind::IsInf: return infer_float_test;
    case OpKind::Mod: return infer_mod;
    case OpKind::Dropout: return infer_dropout;
    case OpKind::MatMul: return infer_matmul;
    case OpKind::Gemm: return infer_gemm;
    case OpKind::Conv: return infer_conv;
    case OpKind::ConvTranspose: return infer_conv_transpose;
    case OpKind::MaxPool:
    case OpKind::AveragePool: return infer_pool;
    case OpKind::GlobalAveragePool: return infer_global_pool;
    case OpKind::ReduceSum:
    case OpKind::ReduceMean:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
    case OpKind::ReduceProd:
    case OpKind::ReduceL1:
    case OpKind::ReduceL2:
    case OpKind::ReduceSumSquare:
    case OpKind::ReduceLogSum:
    case OpKind::ReduceLogSumExp: return infer_reduce;
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
    case OpKind::Hardmax: return infer_softmax;
    case OpKind::CumSum: return infer_cumsum;
    case OpKind::ArgMax:
    case OpKind::ArgMin: return infer_arg_reduce;
    case OpKind::LayerNormalization: return infer_layer_norm;
    case OpKind::BatchNormalization: return infer_batch_norm;
    case OpKind::LRN: return infer_lrn;
    case OpKind::Reshape: return infer_reshape;
    case OpKind::Transpose: return infer_transpose;
    case OpKind::Concat: return infer_concat;
    case OpKind::Slice: return infer_slice;
    case OpKind::Gather: return infer_gather;
    case OpKind::GatherElements: return infer_gather_elements;
    case OpKind::GatherND: return infer_gather_nd;
    case OpKind::ScatterND: return infer_scatter_nd;
    case OpKind::ScatterElements: return infer_scatter_elements;
    case OpKind::Squeeze: return infer_squeeze;
    case OpKind::Unsqueeze: return infer_unsqueeze;
    case OpKind::Shape: return infer_shape;
    case OpKind::Size: return infer_size;
    case OpKind::Cast: return infer_cast;
    case OpKind::Expand: return infer_expand;
    case OpKind::Flatten: return infer_flatten;
    case OpKind::Identity: return infer_identity;
    case OpKind::Trilu: return infer_trilu;
    case OpKind::DepthToSpace: return infer_depth_to_space;
    case OpKind::SpaceToDepth: return infer_space_to_depth;
    case OpKind::EyeLike: return infer_eye_like;
    case OpKind::OneHot: return infer_one_hot;
    case OpKind::TopK: return infer_top_k;
    case OpKind::ConstantOfShape: return infer_constant_of_shape;
    case OpKind::Range: return infer_range;
    case OpKind::Tile: return infer_tile;
    case OpKind::Pad: return infer_pad;
    case OpKind::Resize: return infer_resize;
    case OpKind::Split: return infer_split;
    case OpKind::LSTM: return infer_lstm;
    case OpKind::GRU: return infer_gru;
    case OpKind::RNN: return infer_rnn;
    case OpKind::Loop: return infer_loop;
    case OpKind::If: return infer_if;
    case OpKind::Scan: return infer_scan;
  }
  return nullptr;
}

// Builds the table once, indexed by OpKind.
std::vector<OpSchema> build_table() {
  std::vector<OpSchema> table;
  table.reserve(kOpKindCount);
#define X(kind, name, min_in, max_in, min_out, max_out)                                    \
  table.push_back(OpSchema{OpKind::kind, name, min_in, max_in, min_out, max_out,           \
                           attrs_of(OpKind::kind), infer_of(OpKind::kind)});
#include "graph/op_kinds.def"
#undef X
  return table;
}

}  // namespace

const OpSchema& op_schema(OpKind op) {
  static const std::vector<OpSchema> table = build_table();
  return table.at(static_cast<std::size_t>(op));
}

}  // namespace canary::graph
