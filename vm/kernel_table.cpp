// The kernel table: for each OpKind an adapter that unpacks registers and calls
// the reference kernel, and the parameter struct decoded from attributes once.
// MatMul, Gemm, Conv, Softmax, LayerNormalization and LSTM try the oneDNN f32
// kernel first and fall back to the reference kernel when it does not apply;
// the fp64 reference mode binds the reference-only adapters.
#include "vm/kernel_table.h"
#include "vm/elementwise_info.h"

#include <array>
#include <limits>
#include <string>

#include "canary/error.h"
#include "graph/op_registry.h"
#include "kernels/onednn.h"
#include "kernels/reference.h"
#include "vm/program_builder.h"

namespace canary::vm {
namespace {

namespace k = canary::kernels;
using graph::OpKind;

// Reads a node's attributes with the schema's defaults; errors name the node.
class AttrReader {
 public:
  AttrReader(const graph::Graph& g, const graph::Node& n) : g_(g), n_(n) {}

  const graph::AttrValue* find(std::string_view name) const {
    if (auto it = n_.attrs.find(name); it != n_.attrs.end()) return &it->second;
    for (const auto& spec : graph::op_schema(n_.op).attrs)
      if (spec.name == name && spec.default_value) return &*spec.default_value;
    return nullptr;
  }
  bool has(std::string_view name) const { return find(name) != nullptr; }
  std::int64_t get_int(std::string_view name) const { return get<std::int64_t>(name, "int"); }
  std::string get_string(std::string_view name) const { return get<std::string>(name, "string"); }
  double get_float(std::string_view name) const {
    const graph::AttrValue* v = find(name);
    if (v && std::holds_alternative<std::int64_t>(*v)) return static_cast<double>(std::get<std::int64_t>(*v));
    return get<double>(name, "float");
  }
  // Empty when absent.
  std::vector<std::int64_t> get_ints(std::string_view name) const {
    return has(name) ? get<std::vector<std::int64_t>>(name, "ints") : std::vector<std::int64_t>{};
  }
  [[noreturn]] void fail(const std::string& text) const {
    throw Error(ErrorKind::Model,
                "node '" + node_display_name(g_, n_) + "' (" + std::string(graph::op_name(n_.op)) + "): " + text);
  }
  // True when input i is given (not omitted).
  bool has_input(std::size_t i) const { return i < n_.inputs.size() && n_.inputs[i].valid(); }
  // The graph dtype of input i (given).
  DType input_dtype(std::size_t i) const { return g_.value(n_.inputs.at(i)).type.dtype; }
  // The constant contents of input i, or nullptr.
  const Tensor* constant_input(std::size_t i) const {
    if (i >= n_.inputs.size() || !n_.inputs[i].valid()) return nullptr;
    const auto& c = g_.value(n_.inputs[i]).constant;
    return c ? &*c : nullptr;
  }

 private:
  template <typename T>
  T get(std::string_view name, const char* type) const {
    const graph::AttrValue* v = find(name);
    if (!v) fail("missing attribute '" + std::string(name) + "'");
    if (!std::holds_alternative<T>(*v)) fail("attribute '" + std::string(name) + "' must be of type " + type);
    return std::get<T>(*v);
  }
  const graph::Graph& g_;
  const graph::Node& n_;
};

template <typename P>
const P& as(const InstrParams& p) {
  return static_cast<const P&>(p);
}

struct NoParams : InstrParams {};
struct UnaryP : InstrParams {
  k::UnaryOp op;
  k::UnaryParams p;
};
struct BinaryP : InstrParams { k::BinaryOp op; };
struct GemmP : InstrParams { k::GemmParams p; };
struct ConvP : InstrParams {
  k::ConvParams p;
  bool weights_are_constant = false;  // W is a graph constant
};
struct ConvTransposeP : InstrParams { k::ConvTransposeParams p; };
struct ReduceP : InstrParams {
  k::ReduceParams p;
  bool axes_at_run_time = false;
};
struct AxisP : InstrParams { std::int64_t axis = 0; };
struct ArgReduceP : InstrParams { k::ArgReduceParams p; };
struct LayerNormP : InstrParams { k::LayerNormParams p; };
struct ReshapeP : InstrParams { bool allowzero = false; };
struct PermP : InstrParams { std::vector<std::int64_t> perm; };
struct ShapeP : InstrParams {
  std::int64_t start = 0;
  std::optional<std::int64_t> end;
};
struct CastP : InstrParams { DType to = DType::F32; };
struct LstmP : InstrParams {
  k::LstmParams p;
  bool weights_are_constant = false;  // W, R and B (when present) are graph constants
};
struct PoolP : InstrParams { k::PoolParams p; };
struct BatchNormP : InstrParams { k::BatchNormParams p; };
struct GruP : InstrParams { k::GruParams p; };
struct RnnP : InstrParams { k::RnnParams p; };
struct LrnP : InstrParams { k::LrnParams p; };
struct LogicalP : InstrParams { k::LogicalOp op; };
struct FloatTestP : InstrParams {
  bool nan = true;  // IsNaN; else IsInf with the signs below
  bool negative = true, positive = true;
};
struct ModP : InstrParams { bool fmod = false; };
struct PadP : InstrParams { k::PadMode mode = k::PadMode::Constant; };
struct FillP : InstrParams { Tensor value; };
struct CumSumP : InstrParams { k::CumSumParams p; };
struct TriluP : InstrParams { bool upper = true; };
struct ResizeP : InstrParams { k::ResizeParams p; };
struct DepthSpaceP : InstrParams {
  std::int64_t blocksize = 1;
  bool crd = false;  // DepthToSpace's mode; SpaceToDepth has none
};
struct EyeLikeP : InstrParams {
  std::optional<DType> dtype;  // nullopt: the input's
  std::int64_t k = 0;
};
struct TopKP : InstrParams { k::TopKParams p; };
struct GatherNdP : InstrParams { std::int64_t batch_dims = 0; };
struct ScatterP : InstrParams {
  std::int64_t axis = 0;  // ScatterElements only
  k::ScatterReduction reduction = k::ScatterReduction::None;
};

// --- adapters -------------------------------------------------------------

// The call's inputs, for the variadic kernels.
std::vector<const Tensor*> all_inputs(const KernelCall& c) {
  std::vector<const Tensor*> in;
  for (int i = 0; i < c.num_inputs; ++i) in.push_back(&c.input(i));
  return in;
}

void run_float_test(const InstrParams& p, const KernelCall& c) {
  const FloatTestP& t = as<FloatTestP>(p);
  k::float_test(t.nan, t.negative, t.positive, c.input(0), c.output(0));
}

void run_resize(const InstrParams& p, const KernelCall& c) {
  k::resize(as<ResizeP>(p).p, c.input(0), c.optional_input(1), c.optional_input(2), c.optional_input(3), c.output(0));
}

void run_depth_to_space(const InstrParams& p, const KernelCall& c) {
  k::depth_to_space(as<DepthSpaceP>(p).blocksize, as<DepthSpaceP>(p).crd, c.input(0), c.output(0));
}

void run_space_to_depth(const InstrParams& p, const KernelCall& c) {
  k::space_to_depth(as<DepthSpaceP>(p).blocksize, c.input(0), c.output(0));
}

void run_eye_like(const InstrParams& p, const KernelCall& c) {
  k::eye_like(as<EyeLikeP>(p).dtype, as<EyeLikeP>(p).k, c.input(0), c.output(0));
}

// OneHot's depth and TopK's k are inputs, read by the kernels at run time.
void run_one_hot(const InstrParams& p, const KernelCall& c) {
  k::one_hot(as<AxisP>(p).axis, c.input(0), c.input(1), c.input(2), c.output(0));
}

void run_top_k(const InstrParams& p, const KernelCall& c) {
  k::top_k(as<TopKP>(p).p, c.input(0), c.input(1), c.output(0), c.output(1));
}

void run_sum(const InstrParams&, const KernelCall& c) { k::sum_of(all_inputs(c), false, c.output(0)); }
void run_mean(const InstrParams&, const KernelCall& c) { k::sum_of(all_inputs(c), true, c.output(0)); }

void run_unary(const InstrParams& p, const KernelCall& c) {
  k::unary(as<UnaryP>(p).op, c.input(0), c.output(0), as<UnaryP>(p).p);
}

void run_binary(const InstrParams& p, const KernelCall& c) {
  k::binary(as<BinaryP>(p).op, c.input(0), c.input(1), c.output(0));
}

void run_where(const InstrParams&, const KernelCall& c) {
  k::where(c.input(0), c.input(1), c.input(2), c.output(0));
}

void run_clip(const InstrParams&, const KernelCall& c) {
  k::clip(c.input(0), c.optional_input(1), c.optional_input(2), c.output(0));
}

// Clip of a promoted f32 value (fp64 reference mode). An absent bound is the
// input type's lowest() or max() (ONNX), so the f32 tiers clamp -Inf to
// -FLT_MAX; the reference must clamp to the same f32 limit, not to -DBL_MAX,
// or it computes another function wherever that value stays in range later.
void run_clip_f32_limits(const InstrParams&, const KernelCall& c) {
  static const Tensor lowest = Tensor::scalar<double>(std::numeric_limits<float>::lowest());
  static const Tensor highest = Tensor::scalar<double>(std::numeric_limits<float>::max());
  const Tensor* lo = c.optional_input(1);
  const Tensor* hi = c.optional_input(2);
  k::clip(c.input(0), lo && lo->defined() ? lo : &lowest, hi && hi->defined() ? hi : &highest, c.output(0));
}

void run_matmul(const InstrParams&, const KernelCall& c) {
  k::matmul(c.input(0), c.input(1), c.output(0));
}

void run_matmul_onednn(const InstrParams&, const KernelCall& c) {
  if (!k::onednn_enabled() || !k::onednn_matmul(c.input(0), c.input(1), c.output(0))) k::matmul(c.input(0), c.input(1), c.output(0));
}

void run_gemm(const InstrParams& p, const KernelCall& c) {
  k::gemm(as<GemmP>(p).p, c.input(0), c.input(1), c.optional_input(2), c.output(0));
}

void run_gemm_onednn(const InstrParams& p, const KernelCall& c) {
  if (!k::onednn_enabled() || !k::onednn_gemm(as<GemmP>(p).p, c.input(0), c.input(1), c.optional_input(2), c.output(0)))
    k::gemm(as<GemmP>(p).p, c.input(0), c.input(1), c.optional_input(2), c.output(0));
}

void run_conv(const InstrParams& p, const KernelCall& c) {
  k::conv(as<ConvP>(p).p, c.input(0), c.input(1), c.optional_input(2), c.output(0));
}

void run_conv_onednn(const InstrParams& p, const KernelCall& c) {
  const ConvP& cp = as<ConvP>(p);
  if (!k::onednn_enabled() || !k::onednn_conv(cp.p, c.input(0), c.input(1), c.optional_input(2), c.output(0), cp.weights_are_constant))
    k::conv(cp.p, c.input(0), c.input(1), c.optional_input(2), c.output(0));
}

void run_conv_transpose(const InstrParams& p, const KernelCall& c) {
  k::conv_transpose(as<ConvTransposeP>(p).p, c.input(0), c.input(1), c.optional_input(2), c.output(0));
}

void run_conv_transpose_onednn(const InstrParams& p, const KernelCall& c) {
  const k::ConvTransposeParams& cp = as<ConvTransposeP>(p).p;
  if (!k::onednn_enabled() || !k::onednn_conv_transpose(cp, c.input(0), c.input(1), c.optional_input(2), c.output(0)))
    k::conv_transpose(cp, c.input(0), c.input(1), c.optional_input(2), c.output(0));
}

void run_reduce(const InstrParams& p, const KernelCall& c) {
  const ReduceP& r = as<ReduceP>(p);
  const Tensor* axes = c.optional_input(1);
  k::ReduceParams dynamic;
  if (r.axes_at_run_time && axes != nullptr) {
    dynamic = r.p;
    dynamic.axes = k::read_int_values(*axes, "axes");
  }
  const k::ReduceParams& params = r.axes_at_run_time && axes != nullptr ? dynamic : r.p;
  // oneDNN's reduction serves sums and means only; the others are reference-only.
  const bool summing = params.op == k::ReduceOp::Sum || params.op == k::ReduceOp::Mean;
  if (summing && k::onednn_enabled() && k::onednn_reduce(params, c.input(0), c.output(0))) return;
  k::reduce(params, c.input(0), c.output(0));
}

void run_softmax(const InstrParams& p, const KernelCall& c) { k::softmax(as<AxisP>(p).axis, c.input(0), c.output(0)); }

void run_arg_reduce(const InstrParams& p, const KernelCall& c) {
  k::arg_reduce(as<ArgReduceP>(p).p, c.input(0), c.output(0));
}

void run_log_softmax(const InstrParams& p, const KernelCall& c) {
  k::log_softmax(as<AxisP>(p).axis, c.input(0), c.output(0));
}

void run_softmax_onednn(const InstrParams& p, const KernelCall& c) {
  if (!k::onednn_enabled() || !k::onednn_softmax(as<AxisP>(p).axis, c.input(0), c.output(0))) run_softmax(p, c);
}

void run_layer_norm(const InstrParams& p, const KernelCall& c) {
  k::layer_norm(as<LayerNormP>(p).p, c.input(0), c.input(1), c.optional_input(2), c.output(0), c.optional_output(1),
                c.optional_output(2));
}

void run_layer_norm_onednn(const InstrParams& p, const KernelCall& c) {
  if (!k::onednn_enabled() || !k::onednn_layer_norm(as<LayerNormP>(p).p, c.input(0), c.input(1), c.optional_input(2), c.output(0),
                            c.optional_output(1), c.optional_output(2)))
    run_layer_norm(p, c);
}

void run_reshape(const InstrParams& p, const KernelCall& c) {
  k::reshape(c.input(0), c.input(1), as<ReshapeP>(p).allowzero, c.output(0));
}

void run_transpose(const InstrParams& p, const KernelCall& c) {
  const std::vector<std::int64_t>& perm = as<PermP>(p).perm;
  if (k::onednn_enabled() && k::onednn_transpose(perm, c.input(0), c.output(0))) return;
  k::transpose(perm, c.input(0), c.output(0));
}

void run_concat(const InstrParams& p, const KernelCall& c) {
  constexpr std::size_t kInline = 32;
  std::array<const Tensor*, kInline> inline_ptrs{};
  std::vector<const Tensor*> heap_ptrs;
  const Tensor** ptrs = inline_ptrs.data();
  if (c.num_inputs > kInline) {
    heap_ptrs.resize(c.num_inputs);
    ptrs = heap_ptrs.data();
  }
  for (int i = 0; i < c.num_inputs; ++i) ptrs[i] = &c.input(i);
  k::concat(as<AxisP>(p).axis, std::span<const Tensor* const>(ptrs, c.num_inputs), c.output(0));
}

void run_slice(const InstrParams&, const KernelCall& c) {
  k::slice(c.input(0), c.input(1), c.input(2), c.optional_input(3), c.optional_input(4), c.output(0));
}

void run_gather(const InstrParams& p, const KernelCall& c) {
  k::gather(as<AxisP>(p).axis, c.input(0), c.input(1), c.output(0));
}

void run_gather_elements(const InstrParams& p, const KernelCall& c) {
  k::gather_elements(as<AxisP>(p).axis, c.input(0), c.input(1), c.output(0));
}

void run_gather_nd(const InstrParams& p, const KernelCall& c) {
  k::gather_nd(as<GatherNdP>(p).batch_dims, c.input(0), c.input(1), c.output(0));
}

void run_scatter_nd(const InstrParams& p, const KernelCall& c) {
  k::scatter_nd(as<ScatterP>(p).reduction, c.input(0), c.input(1), c.input(2), c.output(0));
}

void run_scatter_elements(const InstrParams& p, const KernelCall& c) {
  const auto& s = as<ScatterP>(p);
  k::scatter_elements(s.axis, s.reduction, c.input(0), c.input(1), c.input(2), c.output(0));
}

// Trilu's k and CumSum's axis are inputs, passed as tensors: the kernels
// read them at run time, whether constants or computed.
void run_trilu(const InstrParams& p, const KernelCall& c) {
  k::trilu(as<TriluP>(p).upper, c.input(0), c.optional_input(1), c.output(0));
}

void run_cumsum(const InstrParams& p, const KernelCall& c) {
  k::cumsum(as<CumSumP>(p).p, c.input(0), c.input(1), c.output(0));
}

void run_hardmax(const InstrParams& p, const KernelCall& c) { k::hardmax(as<AxisP>(p).axis, c.input(0), c.output(0)); }

void run_squeeze(const InstrParams&, const KernelCall& c) { k::squeeze(c.input(0), c.optional_input(1), c.output(0)); }
void run_unsqueeze(const InstrParams&, const KernelCall& c) { k::unsqueeze(c.input(0), c.input(1), c.output(0)); }

void run_shape(const InstrParams& p, const KernelCall& c) {
  k::shape_of(c.input(0), as<ShapeP>(p).start, as<ShapeP>(p).end, c.output(0));
}

void run_size(const InstrParams&, const KernelCall& c) { k::size_of(c.input(0), c.output(0)); }

void run_cast(const InstrParams& p, const KernelCall& c) { k::cast(c.input(0), as<CastP>(p).to, c.output(0)); }

void run_expand(const InstrParams&, const KernelCall& c) {
  k::expand(c.input(0), c.input(1), c.output(0));
}

void run_flatten(const InstrParams& p, const KernelCall& c) { k::flatten(as<AxisP>(p).axis, c.input(0), c.output(0)); }
void run_identity(const InstrParams&, const KernelCall& c) { k::identity(c.input(0), c.output(0)); }

void run_lstm(const InstrParams& p, const KernelCall& c) {
  k::lstm(as<LstmP>(p).p, c.input(0), c.input(1), c.input(2), c.optional_input(3), c.optional_input(4),
          c.optional_input(5), c.optional_input(6), c.optional_input(7), c.optional_output(0), c.optional_output(1),
          c.optional_output(2));
}

void run_lstm_onednn(const InstrParams& p, const KernelCall& c) {
  if (!k::onednn_enabled() || !k::onednn_lstm(as<LstmP>(p).p, c.input(0), c.input(1), c.input(2), c.optional_input(3), c.optional_input(4),
                      c.optional_input(5), c.optional_input(6), c.optional_input(7), c.optional_output(0),
                      c.optional_output(1), c.optional_output(2), as<LstmP>(p).weights_are_constant))
    run_lstm(p, c);
}


void run_not(const InstrParams&, const KernelCall& c) { k::logical_not(c.input(0), c.output(0)); }

void run_logical(const InstrParams& p, const KernelCall& c) {
  k::logical(as<LogicalP>(p).op, c.input(0), c.input(1), c.output(0));
}

void run_mod(const InstrParams& p, const KernelCall& c) {
  k::mod(as<ModP>(p).fmod, c.input(0), c.input(1), c.output(0));
}

void run_dropout(const InstrParams&, const KernelCall& c) {
  k::dropout(c.input(0), c.optional_input(2), c.output(0), c.optional_output(1));
}

void run_constant_of_shape(const InstrParams& p, const KernelCall& c) {
  k::constant_of_shape(c.input(0), as<FillP>(p).value, c.output(0));
}

void run_range(const InstrParams&, const KernelCall& c) { k::range(c.input(0), c.input(1), c.input(2), c.output(0)); }
void run_tile(const InstrParams&, const KernelCall& c) { k::tile(c.input(0), c.input(1), c.output(0)); }

void run_pad(const InstrParams& p, const KernelCall& c) {
  k::pad(as<PadP>(p).mode, c.input(0), c.input(1), c.optional_input(2), c.output(0));
}

void run_split(const InstrParams& p, const KernelCall& c) {
  constexpr std::size_t kInline = 32;
  std::array<Tensor*, kInline> inline_ptrs{};
  std::vector<Tensor*> heap_ptrs;
  Tensor** ptrs = inline_ptrs.data();
  if (c.num_outputs > kInline) {
    heap_ptrs.resize(c.num_outputs);
    ptrs = heap_ptrs.data();
  }
  for (int i = 0; i < c.num_outputs; ++i) ptrs[i] = &c.output(i);
  k::split(as<AxisP>(p).axis, c.input(0), c.optional_input(1), std::span<Tensor* const>(ptrs, c.num_outputs));
}

void run_pool(const InstrParams& p, const KernelCall& c) { k::pool(as<PoolP>(p).p, c.input(0), c.output(0)); }

void run_pool_onednn(const InstrParams& p, const KernelCall& c) {
  if (!k::onednn_enabled() || !k::onednn_pool(as<PoolP>(p).p, c.input(0), c.output(0))) run_pool(p, c);
}

void run_global_average_pool(const InstrParams&, const KernelCall& c) {
  k::global_average_pool(c.input(0), c.output(0));
}

void run_global_average_pool_onednn(const InstrParams& p, const KernelCall& c) {
  if (!k::onednn_enabled() || !k::onednn_global_average_pool(c.input(0), c.output(0))) run_global_average_pool(p, c);
}

void run_batch_norm(const InstrParams& p, const KernelCall& c) {
  k::batch_norm(as<BatchNormP>(p).p, c.input(0), c.input(1), c.input(2), c.input(3), c.input(4), c.output(0));
}

void run_batch_norm_onednn(const InstrParams& p, const KernelCall& c) {
  if (!k::onednn_enabled() || !k::onednn_batch_norm(as<BatchNormP>(p).p, c.input(0), c.input(1), c.input(2), c.input(3), c.input(4),
                            c.output(0)))
    run_batch_norm(p, c);
}

void run_gru(const InstrParams& p, const KernelCall& c) {
  k::gru(as<GruP>(p).p, c.input(0), c.input(1), c.input(2), c.optional_input(3), c.optional_input(4),
         c.optional_input(5), c.optional_output(0), c.optional_output(1));
}

void run_gru_onednn(const InstrParams& p, const KernelCall& c) {
  if (!k::onednn_enabled() || !k::onednn_gru(as<GruP>(p).p, c.input(0), c.input(1), c.input(2), c.optional_input(3), c.optional_input(4),
                     c.optional_input(5), c.optional_output(0), c.optional_output(1)))
    run_gru(p, c);
}

void run_rnn(const InstrParams& p, const KernelCall& c) {
  k::rnn(as<RnnP>(p).p, c.input(0), c.input(1), c.input(2), c.optional_input(3), c.optional_input(4),
         c.optional_input(5), c.optional_output(0), c.optional_output(1));
}

void run_lrn(const InstrParams& p, const KernelCall& c) { k::lrn(as<LrnP>(p).p, c.input(0), c.output(0)); }

// --- parameter decoding ---------------------------------------------------

template <typename P>
KernelBinding make(KernelFn fn, std::unique_ptr<P> p) {
  return KernelBinding{fn, std::move(p)};
}

KernelBinding unary(k::UnaryOp op, k::UnaryParams params = {}) {
  auto p = std::make_unique<UnaryP>();
  p->op = op;
  p->p = params;
  return make(run_unary, std::move(p));
}

// A row of runtime/core/unary_ops.def: its UnaryOp, with the attributes the
// table names read into UnaryParams ("" names an unused slot).
KernelBinding bind_table_unary(const AttrReader& a, k::UnaryOp op, const char* attr0, const char* attr1) {
  k::UnaryParams params;
  if (*attr0 != '\0') params.alpha = a.get_float(attr0);
  if (*attr1 != '\0') params.beta = a.get_float(attr1);
  return unary(op, params);
}

KernelBinding binary(k::BinaryOp op) {
  auto p = std::make_unique<BinaryP>();
  p->op = op;
  return make(run_binary, std::move(p));
}

KernelBinding with_axis(KernelFn fn, std::int64_t axis) {
  auto p = std::make_unique<AxisP>();
  p->axis = axis;
  return make(fn, std::move(p));
}

KernelBinding plain(KernelFn fn) { return make(fn, std::make_unique<NoParams>()); }

// Gelu's approximate attribute: "none" or "tanh".
KernelBinding bind_gelu(const AttrReader& a) {
  const std::string mode = a.get_string("approximate");
  if (mode == "none") return unary(k::UnaryOp::Gelu);
  if (mode == "tanh") return unary(k::UnaryOp::GeluTanh);
  a.fail("approximate must be \"none\" or \"tanh\", got \"" + mode + "\"");
}

// Gemm's alpha, beta and transposes.
KernelBinding bind_gemm(const AttrReader& a, const CompileOptions& opts) {
  auto p = std::make_unique<GemmP>();
  p->p.alpha = a.get_float("alpha");
  p->p.beta = a.get_float("beta");
  p->p.trans_a = a.get_int("transA") != 0;
  p->p.trans_b = a.get_int("transB") != 0;
  return make(opts.promote_f32_to_f64 ? run_gemm : run_gemm_onednn, std::move(p));
}

// The auto_pad attribute of Conv and ConvTranspose.
k::AutoPad auto_pad_of(const AttrReader& a) {
  const std::string pad = a.get_string("auto_pad");
  if (pad == "NOTSET") return k::AutoPad::NotSet;
  if (pad == "SAME_UPPER") return k::AutoPad::SameUpper;
  if (pad == "SAME_LOWER") return k::AutoPad::SameLower;
  if (pad == "VALID") return k::AutoPad::Valid;
  a.fail("unknown auto_pad \"" + pad + "\"");
}

// ConvTranspose's geometry attributes, output_padding, output_shape and auto_pad.
KernelBinding bind_conv_transpose(const AttrReader& a, const CompileOptions& opts) {
  auto p = std::make_unique<ConvTransposeP>();
  p->p.kernel_shape = a.get_ints("kernel_shape");
  p->p.strides = a.get_ints("strides");
  p->p.pads = a.get_ints("pads");
  p->p.dilations = a.get_ints("dilations");
  p->p.output_padding = a.get_ints("output_padding");
  p->p.output_shape = a.get_ints("output_shape");
  p->p.group = a.get_int("group");
  p->p.auto_pad = auto_pad_of(a);
  return make(opts.promote_f32_to_f64 ? run_conv_transpose : run_conv_transpose_onednn, std::move(p));
}

// Conv's geometry attributes and auto_pad.
KernelBinding bind_conv(const AttrReader& a, const CompileOptions& opts) {
  auto p = std::make_unique<ConvP>();
  p->p.kernel_shape = a.get_ints("kernel_shape");
  p->p.strides = a.get_ints("strides");
  p->p.pads = a.get_ints("pads");
  p->p.dilations = a.get_ints("dilations");
  p->p.group = a.get_int("group");
  p->p.auto_pad = auto_pad_of(a);
  p->p.channels_last = a.get_int("channels_last") != 0;
  // Constants live in pinned registers that are never written, so their blocked copy may be kept.
  p->weights_are_constant = a.constant_input(1);
  return make(opts.promote_f32_to_f64 ? run_conv : run_conv_onednn, std::move(p));
}

// The kernel's reduction for a ReduceX op.
k::ReduceOp reduce_op_of(OpKind op) {
  switch (op) {
    case OpKind::ReduceMean: return k::ReduceOp::Mean;
    case OpKind::ReduceMax: return k::ReduceOp::Max;
    case OpKind::ReduceMin: return k::ReduceOp::Min;
    case OpKind::ReduceProd: return k::ReduceOp::Prod;
    case OpKind::ReduceL1: return k::ReduceOp::L1;
    case OpKind::ReduceL2: return k::ReduceOp::L2;
    case OpKind::ReduceSumSquare: return k::ReduceOp::SumSquare;
    case OpKind::ReduceLogSum: return k::ReduceOp::LogSum;
    case OpKind::ReduceLogSumExp: return k::ReduceOp::LogSumExp;
    default: return k::ReduceOp::Sum;
  }
}

// ReduceSum takes axes as an optional input (decoded now when constant);
// the rest of the family as an attribute.
KernelBinding bind_reduce(const AttrReader& a, OpKind op, std::size_t num_inputs) {
  auto p = std::make_unique<ReduceP>();
  p->p.op = reduce_op_of(op);
  p->p.keepdims = a.get_int("keepdims") != 0;
  if (op != OpKind::ReduceSum) {
    p->p.axes = a.get_ints("axes");
    return make(run_reduce, std::move(p));
  }
  p->p.noop_with_empty_axes = a.get_int("noop_with_empty_axes") != 0;
  if (const Tensor* axes = a.constant_input(1)) p->p.axes = k::read_int_values(*axes, "axes");
  else p->axes_at_run_time = num_inputs > 1;
  return make(run_reduce, std::move(p));
}

KernelBinding bind_layer_norm(const AttrReader& a, const CompileOptions& opts) {
  auto p = std::make_unique<LayerNormP>();
  p->p.axis = a.get_int("axis");
  p->p.epsilon = a.get_float("epsilon");
  return make(opts.promote_f32_to_f64 ? run_layer_norm : run_layer_norm_onednn, std::move(p));
}

KernelBinding bind_shape(const AttrReader& a) {
  auto p = std::make_unique<ShapeP>();
  p->start = a.get_int("start");
  if (a.has("end")) p->end = a.get_int("end");
  return make(run_shape, std::move(p));
}

// CumSum's exclusive and reverse flags.
KernelBinding bind_cumsum(const AttrReader& a) {
  auto p = std::make_unique<CumSumP>();
  p->p.exclusive = a.get_int("exclusive") != 0;
  p->p.reverse = a.get_int("reverse") != 0;
  return make(run_cumsum, std::move(p));
}

KernelBinding bind_gather_nd(const AttrReader& a) {
  auto p = std::make_unique<GatherNdP>();
  p->batch_dims = a.get_int("batch_dims");
  return make(run_gather_nd, std::move(p));
}

// ScatterND's and ScatterElements' reduction, checked by their shape rules
// too; ScatterElements' axis.
KernelBinding bind_scatter(const AttrReader& a, OpKind op) {
  auto p = std::make_unique<ScatterP>();
  const std::string r = a.get_string("reduction");
  if (r == "none") p->reduction = k::ScatterReduction::None;
  else if (r == "add") p->reduction = k::ScatterReduction::Add;
  else if (r == "mul") p->reduction = k::ScatterReduction::Mul;
  else if (r == "max") p->reduction = k::ScatterReduction::Max;
  else if (r == "min") p->reduction = k::ScatterReduction::Min;
  else a.fail("reduction \"" + r + "\" is not one of none, add, mul, max, min");
  if (op == OpKind::ScatterND) return make(run_scatter_nd, std::move(p));
  p->axis = a.get_int("axis");
  return make(run_scatter_elements, std::move(p));
}

KernelBinding bind_trilu(const AttrReader& a) {
  auto p = std::make_unique<TriluP>();
  p->upper = a.get_int("upper") != 0;
  return make(run_trilu, std::move(p));
}

KernelBinding bind_cast(const AttrReader& a, const CompileOptions& opts) {
  const std::string to = a.get_string("to");
  std::optional<DType> dt = parse_dtype(to);
  if (!dt) a.fail("unknown dtype \"" + to + "\" in attribute 'to'");
  if (opts.promote_f32_to_f64 && *dt == DType::F32) dt = DType::F64;
  return bind_cast_kernel(*dt);
}

// LSTM with the default activations only.
KernelBinding bind_lstm(const AttrReader& a, const CompileOptions& opts) {
  auto p = std::make_unique<LstmP>();
  p->p.hidden_size = a.get_int("hidden_size");
  const std::string dir = a.get_string("direction");
  if (dir == "forward") p->p.direction = k::LstmDirection::Forward;
  else if (dir == "reverse") p->p.direction = k::LstmDirection::Reverse;
  else if (dir == "bidirectional") p->p.direction = k::LstmDirection::Bidirectional;
  else a.fail("unknown direction \"" + dir + "\"");
  p->p.layout = a.get_int("layout");
  p->p.input_forget = a.get_int("input_forget") != 0;
  if (a.has("clip")) p->p.clip = a.get_float("clip");
  if (a.has("activations")) {
    const std::string acts = a.get_string("activations");
    const bool default_acts = acts == "Sigmoid,Tanh,Tanh" || acts == "Sigmoid,Tanh,Tanh,Sigmoid,Tanh,Tanh";
    if (!default_acts) a.fail("only the default activations (Sigmoid,Tanh,Tanh) are supported, got \"" + acts + "\"");
  }
  // Constants live in pinned registers that are never written, so their converted weights may be cached.
  p->weights_are_constant = a.constant_input(1) && a.constant_input(2) && (!a.has_input(3) || a.constant_input(3));
  return make(opts.promote_f32_to_f64 ? run_lstm : run_lstm_onednn, std::move(p));
}

KernelBinding logical(k::LogicalOp op) {
  auto p = std::make_unique<LogicalP>();
  p->op = op;
  return make(run_logical, std::move(p));
}

// Resize's string attributes, checked by its shape rule, decoded once.
KernelBinding bind_resize(const AttrReader& a) {
  auto p = std::make_unique<ResizeP>();
  const std::string mode = a.get_string("mode");
  p->p.mode = mode == "linear" ? k::ResizeMode::Linear : mode == "cubic" ? k::ResizeMode::Cubic : k::ResizeMode::Nearest;
  using C = k::ResizeCoordinateMode;
  const std::string coord = a.get_string("coordinate_transformation_mode");
  p->p.coordinate_mode = coord == "pytorch_half_pixel"          ? C::PytorchHalfPixel
                         : coord == "align_corners"             ? C::AlignCorners
                         : coord == "asymmetric"                ? C::Asymmetric
                         : coord == "tf_half_pixel_for_nearest" ? C::TfHalfPixelForNearest
                         : coord == "tf_crop_and_resize"        ? C::TfCropAndResize
                                                                : C::HalfPixel;
  using N = k::ResizeNearestMode;
  const std::string nearest = a.get_string("nearest_mode");
  p->p.nearest_mode = nearest == "round_prefer_ceil" ? N::RoundPreferCeil
                      : nearest == "floor"           ? N::Floor
                      : nearest == "ceil"            ? N::Ceil
                                                     : N::RoundPreferFloor;
  p->p.cubic_coeff_a = a.get_float("cubic_coeff_a");
  p->p.exclude_outside = a.get_int("exclude_outside") != 0;
  p->p.extrapolation_value = a.get_float("extrapolation_value");
  return make(run_resize, std::move(p));
}

// DepthToSpace's blocksize and mode, checked by its shape rule; SpaceToDepth's blocksize.
KernelBinding bind_depth_space(const AttrReader& a, OpKind op) {
  auto p = std::make_unique<DepthSpaceP>();
  p->blocksize = a.get_int("blocksize");
  if (op == OpKind::DepthToSpace) {
    p->crd = a.get_string("mode") == "CRD";
    return make(run_depth_to_space, std::move(p));
  }
  return make(run_space_to_depth, std::move(p));
}

// EyeLike's dtype name (the importer converts ONNX's enum), when given, and
// k. An f32 dtype becomes f64 in the fp64 reference mode, as Cast's does.
KernelBinding bind_eye_like(const AttrReader& a, const CompileOptions& opts) {
  auto p = std::make_unique<EyeLikeP>();
  if (a.has("dtype")) {
    const std::string name = a.get_string("dtype");
    p->dtype = parse_dtype(name);
    if (!p->dtype) a.fail("attribute 'dtype' is '" + name + "', expected one of f32, f64, i64, i32, bool");
    if (opts.promote_f32_to_f64 && *p->dtype == DType::F32) p->dtype = DType::F64;
  }
  p->k = a.get_int("k");
  return make(run_eye_like, std::move(p));
}

KernelBinding bind_top_k(const AttrReader& a) {
  auto p = std::make_unique<TopKP>();
  p->p.axis = a.get_int("axis");
  p->p.largest = a.get_int("largest") != 0;
  p->p.sorted = a.get_int("sorted") != 0;
  return make(run_top_k, std::move(p));
}

KernelBinding bind_mod(const AttrReader& a) {
  auto p = std::make_unique<ModP>();
  p->fmod = a.get_int("fmod") != 0;
  return make(run_mod, std::move(p));
}

// ConstantOfShape's value (f32 0 when absent), widened to f64 in fp64 mode.
KernelBinding bind_constant_of_shape(const AttrReader& a, const CompileOptions& opts) {
  auto p = std::make_unique<FillP>();
  const graph::AttrValue* v = a.find("value");
  p->value = v ? std::get<Tensor>(*v) : Tensor::scalar<float>(0.0f);
  if (opts.promote_f32_to_f64 && p->value.dtype() == DType::F32) {
    Tensor wide;
    k::cast(p->value, DType::F64, wide);
    p->value = std::move(wide);
  }
  return make(run_constant_of_shape, std::move(p));
}

// Pad's mode: constant, reflect or edge.
KernelBinding bind_pad(const AttrReader& a) {
  auto p = std::make_unique<PadP>();
  const std::string mode = a.get_string("mode");
  if (mode == "constant") p->mode = k::PadMode::Constant;
  else if (mode == "reflect") p->mode = k::PadMode::Reflect;
  else if (mode == "edge") p->mode = k::PadMode::Edge;
  else a.fail("unknown mode \"" + mode + "\"");
  return make(run_pad, std::move(p));
}

// auto_pad's string as the kernel enum.
k::AutoPad decode_auto_pad(const AttrReader& a) {
  const std::string pad = a.get_string("auto_pad");
  if (pad == "NOTSET") return k::AutoPad::NotSet;
  if (pad == "SAME_UPPER") return k::AutoPad::SameUpper;
  if (pad == "SAME_LOWER") return k::AutoPad::SameLower;
  if (pad == "VALID") return k::AutoPad::Valid;
  a.fail("unknown auto_pad \"" + pad + "\"");
}

// MaxPool / AveragePool geometry; MaxPool's Indices output is rejected.
KernelBinding bind_pool(const AttrReader& a, const graph::Node& n, const CompileOptions& opts) {
  auto p = std::make_unique<PoolP>();
  p->p.op = n.op == OpKind::MaxPool ? k::PoolOp::Max : k::PoolOp::Average;
  p->p.kernel_shape = a.get_ints("kernel_shape");
  p->p.strides = a.get_ints("strides");
  p->p.pads = a.get_ints("pads");
  p->p.dilations = a.get_ints("dilations");
  p->p.auto_pad = decode_auto_pad(a);
  p->p.ceil_mode = a.get_int("ceil_mode") != 0;
  if (n.op == OpKind::AveragePool) p->p.count_include_pad = a.get_int("count_include_pad") != 0;
  p->p.channels_last = a.get_int("channels_last") != 0;
  if (n.op == OpKind::MaxPool && n.outputs.size() > 1 && n.outputs[1].valid())
    a.fail("output 1 (Indices) is not supported");
  if (n.op == OpKind::MaxPool && a.get_int("storage_order") != 0) a.fail("only storage_order 0 is supported");
  return make(opts.promote_f32_to_f64 ? run_pool : run_pool_onednn, std::move(p));
}

// BatchNormalization in inference form only.
KernelBinding bind_batch_norm(const AttrReader& a, const graph::Node& n, const CompileOptions& opts) {
  if (a.get_int("training_mode") != 0) a.fail("training_mode 1 is not supported (inference form only)");
  for (std::size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i].valid()) a.fail("outputs running_mean and running_var are not supported");
  auto p = std::make_unique<BatchNormP>();
  p->p.epsilon = a.get_float("epsilon");
  return make(opts.promote_f32_to_f64 ? run_batch_norm : run_batch_norm_onednn, std::move(p));
}

// GRU with the default activations only.
KernelBinding bind_gru(const AttrReader& a, const CompileOptions& opts) {
  auto p = std::make_unique<GruP>();
  p->p.hidden_size = a.get_int("hidden_size");
  const std::string dir = a.get_string("direction");
  if (dir == "forward") p->p.direction = k::GruDirection::Forward;
  else if (dir == "reverse") p->p.direction = k::GruDirection::Reverse;
  else if (dir == "bidirectional") p->p.direction = k::GruDirection::Bidirectional;
  else a.fail("unknown direction \"" + dir + "\"");
  p->p.layout = a.get_int("layout");
  p->p.linear_before_reset = a.get_int("linear_before_reset") != 0;
  if (a.has("clip")) p->p.clip = a.get_float("clip");
  if (a.has("activations")) {
    const std::string acts = a.get_string("activations");
    const bool default_acts = acts == "Sigmoid,Tanh" || acts == "Sigmoid,Tanh,Sigmoid,Tanh";
    if (!default_acts) a.fail("only the default activations (Sigmoid,Tanh) are supported, got \"" + acts + "\"");
  }
  return make(opts.promote_f32_to_f64 ? run_gru : run_gru_onednn, std::move(p));
}

// One RNN activation name as the kernel enum.
k::RnnActivation decode_rnn_activation(const AttrReader& a, const std::string& name) {
  if (name == "Tanh") return k::RnnActivation::Tanh;
  if (name == "Relu") return k::RnnActivation::Relu;
  if (name == "Sigmoid") return k::RnnActivation::Sigmoid;
  a.fail("unsupported activation '" + name + "' (Tanh, Relu and Sigmoid are supported)");
}

// RNN's `activations` ("Tanh" or "Relu, Sigmoid"): one per direction, checked by its shape rule.
std::vector<k::RnnActivation> decode_rnn_activations(const AttrReader& a) {
  std::vector<k::RnnActivation> acts;
  std::string name;
  for (char ch : a.get_string("activations") + ",") {
    if (ch == ',') {
      acts.push_back(decode_rnn_activation(a, name));
      name.clear();
    } else if (ch != ' ') {
      name += ch;
    }
  }
  return acts;
}

// RNN (reference kernel in every tier).
KernelBinding bind_rnn(const AttrReader& a) {
  auto p = std::make_unique<RnnP>();
  p->p.hidden_size = a.get_int("hidden_size");
  const std::string dir = a.get_string("direction");
  if (dir == "forward") p->p.direction = k::RnnDirection::Forward;
  else if (dir == "reverse") p->p.direction = k::RnnDirection::Reverse;
  else if (dir == "bidirectional") p->p.direction = k::RnnDirection::Bidirectional;
  else a.fail("unknown direction \"" + dir + "\"");
  p->p.layout = a.get_int("layout");
  if (a.has("clip")) p->p.clip = a.get_float("clip");
  if (a.has("activations")) p->p.activations = decode_rnn_activations(a);
  return make(run_rnn, std::move(p));
}

// LRN's constants and window size (checked by its shape rule).
KernelBinding bind_lrn(const AttrReader& a) {
  auto p = std::make_unique<LrnP>();
  p->p.alpha = a.get_float("alpha");
  p->p.beta = a.get_float("beta");
  p->p.bias = a.get_float("bias");
  p->p.size = a.get_int("size");
  return make(run_lrn, std::move(p));
}

// Clip; in fp64 reference mode an f32 input keeps the f32 default bounds.
KernelBinding bind_clip(const AttrReader& a, const CompileOptions& opts) {
  const bool promoted_f32 = opts.promote_f32_to_f64 && a.input_dtype(0) == DType::F32;
  return plain(promoted_f32 ? run_clip_f32_limits : run_clip);
}

// The table proper: one case per op.
KernelBinding bind_op(const AttrReader& a, const graph::Node& n, const CompileOptions& opts) {
  switch (n.op) {
    case OpKind::Add: return binary(k::BinaryOp::Add);
    case OpKind::Sub: return binary(k::BinaryOp::Sub);
    case OpKind::Mul: return binary(k::BinaryOp::Mul);
    case OpKind::Div: return binary(k::BinaryOp::Div);
    case OpKind::Pow: return binary(k::BinaryOp::Pow);
    case OpKind::Max: return n.inputs.size() == 1 ? plain(run_identity) : binary(k::BinaryOp::Max);
    case OpKind::Min: return n.inputs.size() == 1 ? plain(run_identity) : binary(k::BinaryOp::Min);
    case OpKind::Equal: return binary(k::BinaryOp::Equal);
    case OpKind::Less: return binary(k::BinaryOp::Less);
    case OpKind::Greater: return binary(k::BinaryOp::Greater);
    case OpKind::Where: return plain(run_where);
    case OpKind::PRelu: return binary(k::BinaryOp::PRelu);
    case OpKind::Sum: return n.inputs.size() == 1 ? plain(run_identity) : plain(run_sum);
    case OpKind::Mean: return n.inputs.size() == 1 ? plain(run_identity) : plain(run_mean);
#define CANARY_UNARY_OP(o, domain, attr0, default0, attr1, default1) \
  case OpKind::o: return bind_table_unary(a, k::UnaryOp::o, attr0, attr1);
#include "runtime/core/unary_ops.def"
#undef CANARY_UNARY_OP
    case OpKind::Gelu: return bind_gelu(a);
    case OpKind::Clip: return bind_clip(a, opts);
    case OpKind::Not: return plain(run_not);
    case OpKind::And: return logical(k::LogicalOp::And);
    case OpKind::Or: return logical(k::LogicalOp::Or);
    case OpKind::Xor: return logical(k::LogicalOp::Xor);
    case OpKind::IsNaN: return make(run_float_test, std::make_unique<FloatTestP>());
    case OpKind::IsInf: {
      auto p = std::make_unique<FloatTestP>();
      p->nan = false;
      p->negative = a.get_int("detect_negative") != 0;
      p->positive = a.get_int("detect_positive") != 0;
      return make(run_float_test, std::move(p));
    }
    case OpKind::Mod: return bind_mod(a);
    case OpKind::Resize: return bind_resize(a);
    case OpKind::DepthToSpace: case OpKind::SpaceToDepth: return bind_depth_space(a, n.op);
    case OpKind::EyeLike: return bind_eye_like(a, opts);
    case OpKind::OneHot: return with_axis(run_one_hot, a.get_int("axis"));
    case OpKind::TopK: return bind_top_k(a);
    case OpKind::Dropout: return plain(run_dropout);
    case OpKind::MatMul: return plain(opts.promote_f32_to_f64 ? run_matmul : run_matmul_onednn);
    case OpKind::Gemm: return bind_gemm(a, opts);
    case OpKind::Conv: return bind_conv(a, opts);
    case OpKind::ConvTranspose: return bind_conv_transpose(a, opts);
    case OpKind::MaxPool:
    case OpKind::AveragePool: return bind_pool(a, n, opts);
    case OpKind::GlobalAveragePool:
      return plain(opts.promote_f32_to_f64 ? run_global_average_pool : run_global_average_pool_onednn);
    case OpKind::ReduceSum:
    case OpKind::ReduceMean:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
    case OpKind::ReduceProd:
    case OpKind::ReduceL1:
    case OpKind::ReduceL2:
    case OpKind::ReduceSumSquare:
    case OpKind::ReduceLogSum:
    case OpKind::ReduceLogSumExp: return bind_reduce(a, n.op, n.inputs.size());
    case OpKind::Softmax:
      return with_axis(opts.promote_f32_to_f64 ? run_softmax : run_softmax_onednn, a.get_int("axis"));
    // The reference kernel in every tier: oneDNN 2.6's logsoftmax is off by
    // up to 6e-5 relative near 0 (its exp and log are approximations).
    case OpKind::LogSoftmax: return with_axis(run_log_softmax, a.get_int("axis"));
    case OpKind::Hardmax: return with_axis(run_hardmax, a.get_int("axis"));
    case OpKind::CumSum: return bind_cumsum(a);
    case OpKind::ArgMax:
    case OpKind::ArgMin: {
      auto p = std::make_unique<ArgReduceP>();
      p->p.max = n.op == OpKind::ArgMax;
      p->p.axis = a.get_int("axis");
      p->p.keepdims = a.get_int("keepdims") != 0;
      p->p.select_last_index = a.get_int("select_last_index") != 0;
      return make(run_arg_reduce, std::move(p));
    }
    case OpKind::LayerNormalization: return bind_layer_norm(a, opts);
    case OpKind::BatchNormalization: return bind_batch_norm(a, n, opts);
    case OpKind::LRN: return bind_lrn(a);
    case OpKind::Reshape: {
      auto p = std::make_unique<ReshapeP>();
      p->allowzero = a.get_int("allowzero") != 0;
      return make(run_reshape, std::move(p));
    }
    case OpKind::Transpose: {
      auto p = std::make_unique<PermP>();
      p->perm = a.get_ints("perm");
      return make(run_transpose, std::move(p));
    }
    case OpKind::Concat: return with_axis(run_concat, a.get_int("axis"));
    case OpKind::Slice: return plain(run_slice);
    case OpKind::Gather: return with_axis(run_gather, a.get_int("axis"));
    case OpKind::GatherElements: return with_axis(run_gather_elements, a.get_int("axis"));
    case OpKind::GatherND: return bind_gather_nd(a);
    case OpKind::ScatterND: case OpKind::ScatterElements: return bind_scatter(a, n.op);
    case OpKind::Squeeze: return plain(run_squeeze);
    case OpKind::Unsqueeze: return plain(run_unsqueeze);
    case OpKind::Shape: return bind_shape(a);
    case OpKind::Size: return plain(run_size);
    case OpKind::Cast: return bind_cast(a, opts);
    case OpKind::Expand: return plain(run_expand);
    case OpKind::Flatten: return with_axis(run_flatten, a.get_int("axis"));
    case OpKind::Identity: return plain(run_identity);
    case OpKind::Trilu: return bind_trilu(a);
    case OpKind::ConstantOfShape: return bind_constant_of_shape(a, opts);
    case OpKind::Range: return plain(run_range);
    case OpKind::Tile: return plain(run_tile);
    case OpKind::Pad: return bind_pad(a);
    case OpKind::Split: return with_axis(run_split, a.get_int("axis"));
    case OpKind::LSTM: return bind_lstm(a, opts);
    case OpKind::GRU: return bind_gru(a, opts);
    case OpKind::RNN: return bind_rnn(a);
    case OpKind::Loop:
    case OpKind::If:
    case OpKind::Scan: break;
  }
  a.fail("has no kernel (control flow is lowered, not called)");
}

}  // namespace

// Adapter and decoded parameters for a node.
KernelBinding bind_kernel(const graph::Graph& g, const graph::Node& n, const CompileOptions& opts) {
  AttrReader reader(g, n);
  return bind_op(reader, n, opts);
}

// Binary Max, Min or Add (for Sum) for chaining a variadic node.
KernelBinding bind_binary_kernel(OpKind op) {
  if (op == OpKind::Sum) return binary(k::BinaryOp::Add);
  return binary(op == OpKind::Max ? k::BinaryOp::Max : k::BinaryOp::Min);
}

// Identity.
KernelBinding bind_identity_kernel() { return plain(run_identity); }

// Cast to a fixed dtype.
KernelBinding bind_cast_kernel(DType to) {
  auto p = std::make_unique<CastP>();
  p->to = to;
  return make(run_cast, std::move(p));
}

}  // namespace canary::vm

// --- elementwise descriptions for the JIT ----------------------------------

namespace canary::vm {

std::optional<ElementwiseInfo> elementwise_info(const Instruction& in) {
  if (in.op != Opcode::Kernel || in.params == nullptr) return std::nullopt;
  using F = ElementwiseInfo::Family;
  ElementwiseInfo info;
  if (in.fn == run_unary) {
    info.family = F::Unary;
    info.unary = as<UnaryP>(*in.params).op;
    info.params = as<UnaryP>(*in.params).p;
  } else if (in.fn == run_binary) {
    info.family = F::Binary;
    info.binary = as<BinaryP>(*in.params).op;
  } else if (in.fn == run_clip) {
    info.family = F::Clip;
  } else if (in.fn == run_identity) {
    info.family = F::Identity;
  } else {
    return std::nullopt;
  }
  return info;
}

std::optional<RowInfo> row_info(const Instruction& in) {
  if (in.op != Opcode::Kernel || in.params == nullptr) return std::nullopt;
  RowInfo info;
  if (in.fn == run_reduce) {
    const ReduceP& r = as<ReduceP>(*in.params);
    // The JIT's row kernels know Sum, Mean and Max; the rest of the family
    // stays with the interpreter.
    const bool row_op = r.p.op == k::ReduceOp::Sum || r.p.op == k::ReduceOp::Mean || r.p.op == k::ReduceOp::Max;
    if (r.axes_at_run_time || !row_op) return std::nullopt;
    info.kind = RowInfo::Kind::Reduce;
    info.reduce = r.p.op;
    info.axes = r.p.axes;
    info.keepdims = r.p.keepdims;
    if (info.axes.empty() && r.p.noop_with_empty_axes) return std::nullopt;
  } else if (in.fn == run_softmax || in.fn == run_softmax_onednn) {
    info.kind = RowInfo::Kind::Softmax;
    info.axis = as<AxisP>(*in.params).axis;
  } else if (in.fn == run_layer_norm || in.fn == run_layer_norm_onednn) {
    info.kind = RowInfo::Kind::LayerNorm;
    info.axis = as<LayerNormP>(*in.params).p.axis;
    info.epsilon = as<LayerNormP>(*in.params).p.epsilon;
  } else {
    return std::nullopt;
  }
  return info;
}

std::optional<ContractionInfo> contraction_info(const Instruction& in) {
  if (in.op != Opcode::Kernel) return std::nullopt;
  ContractionInfo info;
  if (in.fn == run_matmul_onednn) {
    info.kind = ContractionInfo::Kind::MatMul;
  } else if (in.fn == run_gemm_onednn && in.params) {
    info.kind = ContractionInfo::Kind::Gemm;
    info.gemm = &as<GemmP>(*in.params).p;
  } else if (in.fn == run_conv_onednn && in.params) {
    info.kind = ContractionInfo::Kind::Conv;
    info.conv = &as<ConvP>(*in.params).p;
    info.weights_are_constant = as<ConvP>(*in.params).weights_are_constant;
  } else {
    return std::nullopt;
  }
  return info;
}

}  // namespace canary::vm
