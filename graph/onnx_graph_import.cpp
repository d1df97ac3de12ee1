// ONNX graphs to IR graphs: initializers, typed inputs with symbolic dims,
// nodes in topological order, and subgraphs imported recursively whose
// outer-scope names become captures.
#include "graph/onnx_import_internal.h"

namespace canary::graph::onnx_import {
namespace {

using onnx::GraphProto;
using onnx::NodeProto;
using onnx::ValueInfoProto;

// One graph being imported and the graphs around it.
struct Scope {
  Graph* graph = nullptr;
  Scope* parent = nullptr;
  int depth = 0;
  std::map<std::string, ValueType, std::less<>> known;                 // inputs, constants, typed captures
  std::map<std::string, const ValueInfoProto*, std::less<>> declared;  // value_info and outputs
  std::map<std::string, std::int32_t, std::less<>> elem_types;         // ONNX element types of computed values
};

// Hints for a subgraph's inputs: the type each one takes when it has no shape.
using InputHints = std::vector<std::optional<ValueType>>;

// A symbol name made of identifier characters only ("batch size" -> "batch_size").
std::string sanitize_symbol(const std::string& param) {
  std::string name;
  for (char c : param) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    name += ok ? c : '_';
  }
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) name = "d_" + name;
  return name;
}

class GraphImporter {
 public:
  GraphImporter(ImportContext& ctx, bool track_elem_types) : ctx_(ctx), track_elem_types_(track_elem_types) {}
  std::shared_ptr<Graph> import_graph(const GraphProto& proto, Scope* parent, int depth, const std::string& name,
                                      const InputHints& hints);

 private:
  void add_constants(const GraphProto& proto, Scope& scope);
  void add_inputs(const GraphProto& proto, Scope& scope, const InputHints& hints);
  void import_node(const NodeProto& node, Scope& scope);
  bool import_function_body(const NodeProto& node, Scope& scope);
  std::vector<onnx::TypeProto> input_types(const NodeProto& node, Scope& scope);
  std::int32_t elem_type(Scope& scope, const std::string& name);
  void record_elem_types(const NodeProto& node, Scope& scope);
  ValueId resolve(Scope& scope, const std::string& name, const std::string& what);
  std::optional<ValueType> known_type(Scope& scope, const std::string& name);
  std::optional<ValueType> declared_type(const ValueInfoProto& v, const std::string& what);
  Dim dim_of(const onnx::TensorShapeProto_Dimension& d, const std::string& what);
  std::string symbol_for(const std::string& param);
  InputHints body_hints(Scope& scope, const NodeProto& node, OpKind op, const GraphProto& body);

  ImportContext& ctx_;
  int function_depth_ = 0;  // function bodies being imported, one inside another
  int functions_ = 0;       // function bodies imported so far (names their values apart)
  bool track_elem_types_;   // follow element types for function bodies (onnx_elem_types.cpp)
};

// Imports one graph: constants, inputs, nodes in order, outputs.
std::shared_ptr<Graph> GraphImporter::import_graph(const GraphProto& proto, Scope* parent, int depth,
                                                   const std::string& name, const InputHints& hints) {
  check_nesting_depth(ctx_.limits, depth, "graph '" + name + "'");
  ctx_.nodes += static_cast<std::size_t>(proto.node_size()) + static_cast<std::size_t>(proto.initializer_size());
  check_node_count(ctx_.limits, ctx_.nodes, "graph '" + name + "'");
  auto g = std::make_shared<Graph>(name, ctx_.symbols);
  Scope scope{g.get(), parent, depth, {}, {}, {}};
  for (const ValueInfoProto& v : proto.value_info()) scope.declared.emplace(v.name(), &v);
  for (const ValueInfoProto& v : proto.output()) scope.declared.emplace(v.name(), &v);
  if (proto.sparse_initializer_size() > 0) fail("graph '" + name + "': sparse initializers are not supported");
  add_constants(proto, scope);
  add_inputs(proto, scope, hints);
  for (int i : topological_order(proto, depth)) import_node(proto.node(i), scope);
  for (const ValueInfoProto& out : proto.output()) {
    if (out.name().empty()) fail("graph '" + name + "': an output has an empty name");
    g->add_output(resolve(scope, out.name(), "graph '" + name + "' output"));
  }
  return g;
}

// Adds every initializer as a constant.
void GraphImporter::add_constants(const GraphProto& proto, Scope& scope) {
  for (const onnx::TensorProto& t : proto.initializer()) {
    if (t.name().empty()) fail("graph '" + scope.graph->name + "': an initializer has an empty name");
    ValueId v = scope.graph->add_constant(t.name(), tensor_from_onnx(t, "initializer '" + t.name() + "'"));
    scope.known.emplace(t.name(), scope.graph->value(v).type);
  }
}

// Adds the inputs that are not initializers (an initializer overrides an input).
void GraphImporter::add_inputs(const GraphProto& proto, Scope& scope, const InputHints& hints) {
  std::set<std::string> initializers;
  for (const onnx::TensorProto& t : proto.initializer()) initializers.insert(t.name());
  for (int i = 0; i < proto.input_size(); ++i) {
    const ValueInfoProto& v = proto.input(i);
    if (initializers.count(v.name()) != 0) continue;
    std::string what = "graph '" + scope.graph->name + "': input '" + v.name() + "'";
    std::optional<ValueType> type = declared_type(v, what);
    if (!type && static_cast<std::size_t>(i) < hints.size()) type = hints[i];
    if (!type) fail(what + " has no shape (unknown rank); give it a shape in the model");
    scope.graph->add_input(v.name(), *type);
    scope.known.emplace(v.name(), *type);
  }
}

// The node's name for the IR: its ONNX name, else its first output's name.
std::string node_name(const NodeProto& node) {
  if (!node.name().empty()) return node.name();
  for (const std::string& out : node.output())
    if (!out.empty()) return out;
  return "";
}

// Imports one node: a Constant becomes a graph constant, anything else an op.
void GraphImporter::import_node(const NodeProto& node, Scope& scope) {
  if (is_constant_node(node)) {
    if (node.output_size() != 1 || node.output(0).empty()) fail(describe_node(node) + ": expected one output");
    ValueId v = scope.graph->add_constant(node.output(0), constant_node_value(node));
    scope.known.emplace(node.output(0), scope.graph->value(v).type);
    return;
  }
  const OpLookup lookup = lookup_op(node, ctx_.opset);
  if (!lookup.op && import_function_body(node, scope)) return;
  OpKind op = op_of_node(node, lookup);
  std::vector<ValueId> inputs;
  for (int i = 0; i < node.input_size(); ++i) {
    const std::string& in = node.input(i);
    inputs.push_back(in.empty() ? ValueId::none()
                                : resolve(scope, in, describe_node(node) + ": input " + std::to_string(i)));
  }
  SubgraphImport import_subgraph = [&](const std::string& attr, const GraphProto& body) {
    return import_graph(body, &scope, scope.depth + 1, body.name().empty() ? attr : body.name(),
                        body_hints(scope, node, op, body));
  };
  Attributes attrs = attributes_from_onnx(node, op, import_subgraph);
  std::vector<std::string> outputs(node.output().begin(), node.output().end());
  scope.graph->add_node(op, node_name(node), std::move(inputs), outputs, std::move(attrs));
  if (track_elem_types_) record_elem_types(node, scope);
}

// Imports the body of an op that ONNX defines as a function of other ops
// (onnx_functions.cpp) in place of the node; false when it has none. Body
// nodes may be functions themselves, to a bounded depth.
bool GraphImporter::import_function_body(const NodeProto& node, Scope& scope) {
  constexpr int kMaxFunctionDepth = 8;
  if (function_depth_ >= kMaxFunctionDepth) return false;
  const std::string prefix = node_name(node) + "/" + node.op_type() + "#" + std::to_string(++functions_) + "/";
  std::optional<std::vector<NodeProto>> body = expand_function(node, ctx_.opset, input_types(node, scope), prefix);
  if (!body) return false;
  ++function_depth_;
  for (const NodeProto& inner : *body) import_node(inner, scope);
  --function_depth_;
  return true;
}

// The node's input types as far as the importer knows their element types
// (a type with no value where it does not).
std::vector<onnx::TypeProto> GraphImporter::input_types(const NodeProto& node, Scope& scope) {
  std::vector<onnx::TypeProto> types(static_cast<std::size_t>(node.input_size()));
  for (int i = 0; i < node.input_size(); ++i) {
    const std::int32_t t = node.input(i).empty() ? onnx::TensorProto::UNDEFINED : elem_type(scope, node.input(i));
    if (t != onnx::TensorProto::UNDEFINED) types[static_cast<std::size_t>(i)].mutable_tensor_type()->set_elem_type(t);
  }
  return types;
}

// A name's element type: from its known type, its value_info (a shape not
// needed), or ONNX's inference over the nodes imported so far; UNDEFINED
// when none says. Never fails: a malformed value_info is reported where
// the value's type is used.
std::int32_t GraphImporter::elem_type(Scope& scope, const std::string& name) {
  if (auto it = scope.known.find(name); it != scope.known.end())
    return static_cast<std::int32_t>(onnx_elem_type(it->second.dtype));
  if (auto it = scope.declared.find(name); it != scope.declared.end()) {
    const onnx::TypeProto& declared = it->second->type();
    if (declared.tensor_type().elem_type() != onnx::TensorProto::UNDEFINED) return declared.tensor_type().elem_type();
  }
  if (auto it = scope.elem_types.find(name); it != scope.elem_types.end()) return it->second;
  // A capture's type is its enclosing value's; one this graph computes has none found.
  std::optional<ValueId> v = scope.graph->find_value(name);
  if ((v && scope.graph->value(*v).producer.valid()) || scope.parent == nullptr) return onnx::TensorProto::UNDEFINED;
  return elem_type(*scope.parent, name);
}

// Records the element types of an imported node's outputs, so that a
// function body built later for a node reading them knows its input types.
void GraphImporter::record_elem_types(const NodeProto& node, Scope& scope) {
  const std::vector<std::int32_t> types = infer_elem_types(node, ctx_.opset, input_types(node, scope));
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty() && types[static_cast<std::size_t>(i)] != onnx::TensorProto::UNDEFINED)
      scope.elem_types.emplace(node.output(i), types[static_cast<std::size_t>(i)]);
}

// Finds a name in the scope; a name of an enclosing graph becomes a capture
// (in every graph between the two).
ValueId GraphImporter::resolve(Scope& scope, const std::string& name, const std::string& what) {
  if (auto v = scope.graph->find_value(name)) return *v;
  if (scope.parent == nullptr) fail(what + " reads '" + name + "', which is not defined");
  ValueId outer = resolve(*scope.parent, name, what);
  std::optional<ValueType> type = known_type(*scope.parent, name);
  ValueId local = scope.graph->add_capture(name, type ? *type : scope.parent->graph->value(outer).type, outer);
  if (type) scope.known.emplace(name, *type);
  return local;
}

// The type of a name when known before shape inference: inputs, constants,
// captures of known values, and values with a shaped value_info.
std::optional<ValueType> GraphImporter::known_type(Scope& scope, const std::string& name) {
  if (auto it = scope.known.find(name); it != scope.known.end()) return it->second;
  if (auto it = scope.declared.find(name); it != scope.declared.end()) {
    return declared_type(*it->second, "graph '" + scope.graph->name + "': value '" + name + "'");
  }
  if (scope.graph->find_value(name) || scope.parent == nullptr) return std::nullopt;
  return known_type(*scope.parent, name);
}

// The type of a ValueInfoProto; nullopt when it has no element type or no shape.
std::optional<ValueType> GraphImporter::declared_type(const ValueInfoProto& v, const std::string& what) {
  if (!v.has_type() || v.type().value_case() == onnx::TypeProto::VALUE_NOT_SET) return std::nullopt;
  if (!v.type().has_tensor_type())
    fail(what + " is not a tensor (sequence, map and optional values are not supported)");
  const onnx::TypeProto_Tensor& tt = v.type().tensor_type();
  if (tt.elem_type() == onnx::TensorProto::UNDEFINED && !tt.has_shape()) return std::nullopt;
  ValueType type{dtype_from_onnx(tt.elem_type(), what), {}};
  if (!tt.has_shape()) return std::nullopt;
  for (int k = 0; k < tt.shape().dim_size(); ++k) {
    type.shape.push_back(dim_of(tt.shape().dim(k), what + " dim " + std::to_string(k)));
  }
  return type;
}

// dim_value: a constant; dim_param: a named symbol; neither: a fresh symbol.
Dim GraphImporter::dim_of(const onnx::TensorShapeProto_Dimension& d, const std::string& what) {
  if (d.has_dim_value()) {
    if (d.dim_value() < 0) fail(what + " is negative (" + std::to_string(d.dim_value()) + ")");
    return Dim(d.dim_value());
  }
  if (d.has_dim_param() && !d.dim_param().empty()) return Dim::symbol(symbol_for(d.dim_param()));
  return ctx_.symbols->fresh("unk");
}

// The symbol of a dim_param, declared on first use under a sanitized name
// that no other symbol has.
std::string GraphImporter::symbol_for(const std::string& param) {
  if (auto it = ctx_.dim_params.find(param); it != ctx_.dim_params.end()) return it->second;
  std::string base = sanitize_symbol(param), name = base;
  for (int k = 2; ctx_.symbols->contains(name); ++k) name = base + "_" + std::to_string(k);
  ctx_.symbols->declare(name);
  ctx_.dim_params.emplace(param, name);
  return name;
}

// The outer types a body's unshaped inputs take: Loop (iteration number,
// condition, carried values) and Scan (states, one slice of each scan input).
InputHints GraphImporter::body_hints(Scope& scope, const NodeProto& node, OpKind op, const GraphProto& body) {
  InputHints hints(static_cast<std::size_t>(body.input_size()));
  auto outer = [&](int i) -> std::optional<ValueType> {
    if (i >= node.input_size() || node.input(i).empty()) return std::nullopt;
    return known_type(scope, node.input(i));
  };
  if (op == OpKind::Loop) {
    for (int i = 0; i < body.input_size(); ++i)
      hints[i] = i == 0 ? ValueType{DType::I64, {}} : i == 1 ? ValueType{DType::Bool, {}} : outer(i);
  } else if (op == OpKind::Scan) {
    const std::int64_t scanned = int_attribute(node, "num_scan_inputs", 0);
    if (scanned < 0 || scanned > node.input_size()) {
      fail(describe_node(node) + ": attribute 'num_scan_inputs' is " + std::to_string(scanned) + ", expected 0.." +
           std::to_string(node.input_size()) + " (the number of inputs)");
    }
    std::int64_t states = node.input_size() - scanned;
    std::vector<std::int64_t> axes = ints_attribute(node, "scan_input_axes");
    for (int i = 0; i < body.input_size(); ++i) {
      hints[i] = outer(i);
      std::size_t j = static_cast<std::size_t>(i - states);
      if (i < states || !hints[i] || hints[i]->rank() == 0) continue;
      std::int64_t axis = j < axes.size() ? axes[j] : 0, rank = hints[i]->rank();
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank) continue;
      hints[i]->shape.erase(hints[i]->shape.begin() + axis);
    }
  }
  return hints;
}

}  // namespace

// Imports the main graph; its name is the ONNX graph name, or "main".
std::shared_ptr<Graph> import_main_graph(const GraphProto& graph, ImportContext& ctx) {
  GraphImporter importer(ctx, has_op_without_kernel(graph, ctx.opset));
  return importer.import_graph(graph, nullptr, 0, graph.name().empty() ? "main" : graph.name(), {});
}

}  // namespace canary::graph::onnx_import
