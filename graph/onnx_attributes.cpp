// ONNX attributes to IR attributes: names and types checked against the op's
// schema, Cast's `to` and EyeLike's `dtype` enums to dtype names, the
// recurrent ops' activation lists to one string, attributes our ops lack
// accepted only at their ONNX defaults, and the values of Constant nodes.
#include "graph/onnx_import_internal.h"
#include "graph/op_registry.h"

namespace canary::graph::onnx_import {
namespace {

using onnx::AttributeProto;

// The attribute's type; old files leave `type` unset and fill one field.
AttributeProto::AttributeType type_of(const AttributeProto& a) {
  if (a.type() != AttributeProto::UNDEFINED) return a.type();
  if (a.has_g()) return AttributeProto::GRAPH;
  if (a.has_t()) return AttributeProto::TENSOR;
  if (a.has_s()) return AttributeProto::STRING;
  if (a.has_f()) return AttributeProto::FLOAT;
  if (a.has_i()) return AttributeProto::INT;
  if (a.floats_size() > 0) return AttributeProto::FLOATS;
  if (a.ints_size() > 0) return AttributeProto::INTS;
  if (a.strings_size() > 0) return AttributeProto::STRINGS;
  return AttributeProto::UNDEFINED;
}

// "node 'N' (Op): attribute 'a'".
std::string describe_attr(const onnx::NodeProto& node, const AttributeProto& a) {
  return describe_node(node) + ": attribute '" + a.name() + "'";
}

// The ONNX name of an attribute type ("INTS").
std::string onnx_type_name(AttributeProto::AttributeType t) { return AttributeProto::AttributeType_Name(t); }

// The schema entry of an attribute of `op`, or nullptr.
const AttrSpec* find_spec(OpKind op, std::string_view name) {
  for (const AttrSpec& spec : op_schema(op).attrs)
    if (spec.name == name) return &spec;
  return nullptr;
}

// LSTM, GRU and RNN: their activations arrive as a list of names.
bool is_recurrent(OpKind op) { return op == OpKind::LSTM || op == OpKind::GRU || op == OpKind::RNN; }

// True for ONNX attributes of `op` that the IR lacks; only their ONNX
// defaults (empty lists) are accepted, and they are dropped. The recurrent
// activations Canary supports take no parameters, so activation_alpha and
// activation_beta would have nothing to apply to.
bool is_default_only(const onnx::NodeProto& node, OpKind op, const AttributeProto& a) {
  if (!is_recurrent(op) || (a.name() != "activation_alpha" && a.name() != "activation_beta")) return false;
  if (a.floats_size() > 0) {
    fail(describe_attr(node, a) + " is not supported (only the default activation parameters are)");
  }
  return true;
}

// Cast's `to`, EyeLike's `dtype`: the ONNX element-type enum as a dtype name.
AttrValue cast_target(const onnx::NodeProto& node, const AttributeProto& a) {
  if (type_of(a) != AttributeProto::INT) {
    fail(describe_attr(node, a) + " has type " + onnx_type_name(type_of(a)) + ", expected INT");
  }
  return std::string(dtype_name(dtype_from_onnx(a.i(), describe_attr(node, a))));
}

// The recurrent ops' `activations`: a list of names joined with commas.
AttrValue joined_names(const onnx::NodeProto& node, const AttributeProto& a) {
  if (type_of(a) != AttributeProto::STRINGS) {
    fail(describe_attr(node, a) + " has type " + onnx_type_name(type_of(a)) + ", expected STRINGS");
  }
  std::string joined;
  for (int i = 0; i < a.strings_size(); ++i) joined += (i ? "," : "") + a.strings(i);
  return joined;
}

// A plain value of one attribute (no op-specific conversion).
AttrValue plain_value(const onnx::NodeProto& node, const AttributeProto& a, const SubgraphImport& import_subgraph) {
  switch (type_of(a)) {
    case AttributeProto::INT:
      return std::int64_t{a.i()};
    case AttributeProto::FLOAT:
      return static_cast<double>(a.f());
    case AttributeProto::STRING:
      return a.s();
    case AttributeProto::INTS:
      return std::vector<std::int64_t>(a.ints().begin(), a.ints().end());
    case AttributeProto::FLOATS:
      return std::vector<double>(a.floats().begin(), a.floats().end());
    case AttributeProto::TENSOR:
      return tensor_from_onnx(a.t(), describe_attr(node, a));
    case AttributeProto::GRAPH:
      return import_subgraph(a.name(), a.g());
    default:
      break;
  }
  fail(describe_attr(node, a) + " has unsupported type " + onnx_type_name(type_of(a)));
}

// The IR attribute type an ONNX attribute type becomes.
std::optional<AttrType> ir_type_of(AttributeProto::AttributeType t) {
  switch (t) {
    case AttributeProto::INT:
      return AttrType::Int;
    case AttributeProto::FLOAT:
      return AttrType::Float;
    case AttributeProto::STRING:
      return AttrType::String;
    case AttributeProto::INTS:
      return AttrType::Ints;
    case AttributeProto::FLOATS:
      return AttrType::Floats;
    case AttributeProto::TENSOR:
      return AttrType::Tensor;
    case AttributeProto::GRAPH:
      return AttrType::Graph;
    default:
      return std::nullopt;
  }
}

// Converts one attribute that the op's schema knows.
AttrValue convert(const onnx::NodeProto& node, OpKind op, const AttributeProto& a, const AttrSpec& spec,
                  const SubgraphImport& import_subgraph) {
  if ((op == OpKind::Cast && a.name() == "to") || (op == OpKind::EyeLike && a.name() == "dtype"))
    return cast_target(node, a);
  if (is_recurrent(op) && a.name() == "activations") return joined_names(node, a);
  std::optional<AttrType> type = ir_type_of(type_of(a));
  if (type != spec.type) {
    fail(describe_attr(node, a) + " has type " + onnx_type_name(type_of(a)) + ", expected " +
         attr_type_name(spec.type));
  }
  return plain_value(node, a, import_subgraph);
}

}  // namespace

// Converts every attribute of a node; unknown names are errors.
Attributes attributes_from_onnx(const onnx::NodeProto& node, OpKind op, const SubgraphImport& import_subgraph) {
  Attributes attrs;
  for (const AttributeProto& a : node.attribute()) {
    if (!a.ref_attr_name().empty())
      fail(describe_attr(node, a) + " refers to a function attribute, which is not supported");
    if (is_default_only(node, op, a)) continue;
    const AttrSpec* spec = find_spec(op, a.name());
    if (spec == nullptr || spec->internal) fail(describe_node(node) + ": unknown attribute '" + a.name() + "'");
    if (attrs.count(a.name()) != 0) fail(describe_attr(node, a) + " is given twice");
    attrs.emplace(a.name(), convert(node, op, a, *spec, import_subgraph));
  }
  return attrs;
}

// value (a tensor), value_float(s) or value_int(s) as a tensor.
Tensor constant_node_value(const onnx::NodeProto& node) {
  if (node.attribute_size() != 1) fail(describe_node(node) + ": expected exactly one value attribute");
  const AttributeProto& a = node.attribute(0);
  const std::string& name = a.name();
  std::int64_t n = 0;
  if (name == "value") return tensor_from_onnx(a.t(), describe_attr(node, a));
  if (name == "value_float") return Tensor::scalar<float>(a.f());
  if (name == "value_int") return Tensor::scalar<std::int64_t>(a.i());
  if (name == "value_floats") {
    n = a.floats_size();
    return Tensor::from_vector<float>(std::vector<float>(a.floats().begin(), a.floats().end()), {n});
  }
  if (name == "value_ints") {
    n = a.ints_size();
    return Tensor::from_vector<std::int64_t>(std::vector<std::int64_t>(a.ints().begin(), a.ints().end()), {n});
  }
  fail(describe_attr(node, a) + " is not supported (expected value, value_float(s) or value_int(s))");
}

// Reads an int attribute by name; Error(Model) when it has another type.
std::int64_t int_attribute(const onnx::NodeProto& node, std::string_view name, std::int64_t fallback) {
  for (const AttributeProto& a : node.attribute()) {
    if (a.name() != name) continue;
    if (type_of(a) != AttributeProto::INT) {
      fail(describe_attr(node, a) + " has type " + onnx_type_name(type_of(a)) + ", expected INT");
    }
    return a.i();
  }
  return fallback;
}

// Reads an ints attribute by name.
std::vector<std::int64_t> ints_attribute(const onnx::NodeProto& node, std::string_view name) {
  for (const AttributeProto& a : node.attribute())
    if (a.name() == name) return std::vector<std::int64_t>(a.ints().begin(), a.ints().end());
  return {};
}

}  // namespace canary::graph::onnx_import
