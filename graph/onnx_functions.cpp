// ONNX ops that the standard defines as functions of other ops and Canary
// has no kernel for (GreaterOrEqual, LessOrEqual, CastLike,
// MeanVarianceNormalization, the loss ops, ...), expanded on import into their bodies as libonnx's schemas give
// them at the model's opset. An op Canary has no kernel for still runs when
// its definition is a composition of ops it has, and the expansion is the
// standard's own, so it cannot drift from the spec.
#include <onnx/defs/schema.h>

#include "graph/onnx_import_internal.h"

namespace canary::graph::onnx_import {
namespace {

// The function body of node's op at `opset`: the schema's fixed body, or
// one its builder makes for this node's attributes and input types; false
// when the op has none (or the builder refuses this node).
bool function_body(const onnx::NodeProto& node, std::int64_t opset, const std::vector<onnx::TypeProto>& input_types,
                   const onnx::OpSchema*& schema, onnx::FunctionProto& body) {
  schema = onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), "");
  if (schema == nullptr || schema->Deprecated()) return false;
  if (schema->HasContextDependentFunction()) {
    const onnx::FunctionBodyBuildContextImpl context(node, input_types);
    try {
      return schema->BuildContextDependentFunction(context, body) && body.node_size() > 0;
    } catch (const std::exception&) {
      return false;  // the builder rejects this node: the op stays unknown
    }
  }
  if (!schema->HasFunction()) return false;
  body.CopyFrom(*schema->GetFunction());
  return body.node_size() > 0;
}

// The node's attributes, then the schema's defaults for those it omits.
std::map<std::string, onnx::AttributeProto> attributes_with_defaults(const onnx::NodeProto& node,
                                                                     const onnx::OpSchema& schema) {
  std::map<std::string, onnx::AttributeProto> attrs;
  for (const onnx::AttributeProto& a : node.attribute()) attrs.emplace(a.name(), a);
  for (const auto& [name, spec] : schema.attributes())
    if (attrs.count(name) == 0 && spec.default_value.type() != onnx::AttributeProto::UNDEFINED)
      attrs.emplace(name, spec.default_value);
  return attrs;
}

}  // namespace

std::optional<std::vector<onnx::NodeProto>> expand_function(const onnx::NodeProto& node, std::int64_t opset,
                                                            const std::vector<onnx::TypeProto>& input_types,
                                                            const std::string& prefix) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return std::nullopt;
  const onnx::OpSchema* schema = nullptr;
  onnx::FunctionProto body;
  if (!function_body(node, opset, input_types, schema, body)) return std::nullopt;
  if (node.input_size() > body.input_size() || node.output_size() > body.output_size())
    fail(describe_node(node) + ": more inputs or outputs than its function body has");

  // Formal names -> the node's names; every other body value gets the prefix.
  std::map<std::string, std::string> names;
  for (int i = 0; i < body.input_size(); ++i) names[body.input(i)] = i < node.input_size() ? node.input(i) : "";
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty()) names[body.output(i)] = node.output(i);
  const auto rename = [&](const std::string& name) {
    if (name.empty()) return name;
    auto it = names.find(name);
    return it != names.end() ? it->second : prefix + name;
  };

  const std::map<std::string, onnx::AttributeProto> attrs = attributes_with_defaults(node, *schema);
  std::vector<onnx::NodeProto> nodes;
  for (const onnx::NodeProto& inner : body.node()) {
    onnx::NodeProto& n = nodes.emplace_back(inner);
    n.set_name(prefix + (inner.name().empty() ? inner.op_type() + std::to_string(nodes.size()) : inner.name()));
    for (int i = 0; i < n.input_size(); ++i) n.set_input(i, rename(inner.input(i)));
    for (int i = 0; i < n.output_size(); ++i) n.set_output(i, rename(inner.output(i)));
    n.clear_attribute();
    for (const onnx::AttributeProto& a : inner.attribute()) {
      if (a.ref_attr_name().empty()) {
        *n.add_attribute() = a;
        continue;
      }
      auto it = attrs.find(a.ref_attr_name());
      if (it == attrs.end()) continue;  // an optional attribute the node leaves out
      onnx::AttributeProto& bound = *n.add_attribute();
      bound = it->second;
      bound.set_name(a.name());
    }
  }
  return nodes;
}

}  // namespace canary::graph::onnx_import
