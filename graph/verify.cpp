// Structural checks: a node against its schema (arity, attribute names and
// types) and a graph's def-before-use order, names, outputs and captures.
#include <set>

#include "graph/op_registry.h"
#include "graph/shape_rules.h"

namespace canary::graph {
namespace {

// "2", "1 to 3" or "at least 1".
std::string arity_text(int lo, int hi) {
  if (hi < 0) return "at least " + std::to_string(lo);
  if (lo == hi) return std::to_string(lo);
  return std::to_string(lo) + " to " + std::to_string(hi);
}

// Checks a count of inputs or outputs against the schema's range.
void check_arity(const Node& node, const char* what, int count, int lo, int hi) {
  if (count >= lo && (hi < 0 || count <= hi)) return;
  fail_node(node, ErrorKind::Model,
            "expected " + arity_text(lo, hi) + " " + what + ", got " + std::to_string(count));
}

// The schema entry of a node attribute, or nullptr.
const AttrSpec* find_attr_spec(const OpSchema& schema, std::string_view name) {
  for (const AttrSpec& spec : schema.attrs)
    if (spec.name == name) return &spec;
  return nullptr;
}

// Checks the node's attributes: known names, right types, required present.
void check_attributes(const Node& node, const OpSchema& schema) {
  for (const auto& [name, value] : node.attrs) {
    const AttrSpec* spec = find_attr_spec(schema, name);
    if (spec == nullptr) fail_node(node, ErrorKind::Model, "unknown attribute '" + name + "'");
    if (attr_type_of(value) != spec->type) {
      fail_node(node, ErrorKind::Model, "attribute '" + name + "' has type " + attr_type_name(attr_type_of(value)) +
                                            ", expected " + attr_type_name(spec->type));
    }
    const auto* g = std::get_if<std::shared_ptr<Graph>>(&value);
    if (g != nullptr && !*g) fail_node(node, ErrorKind::Model, "graph attribute '" + name + "' is empty");
  }
  for (const AttrSpec& spec : schema.attrs) {
    if (spec.required && node.attrs.find(spec.name) == node.attrs.end()) {
      fail_node(node, ErrorKind::Model, "missing required attribute '" + std::string(spec.name) + "'");
    }
  }
}

// The values a graph defines before its first node.
std::set<std::uint32_t> initially_defined(const Graph& graph) {
  std::set<std::uint32_t> defined;
  for (ValueId v : graph.inputs()) defined.insert(v.index);
  for (ValueId v : graph.constants()) defined.insert(v.index);
  for (const Capture& c : graph.captures()) defined.insert(c.local.index);
  return defined;
}

// The name of a value for messages, tolerating bad ids.
std::string value_name(const Graph& graph, ValueId v) {
  if (v.index >= graph.values().size()) return "#" + std::to_string(v.index);
  return graph.value(v).name;
}

void verify_scope(const Graph& graph, const std::set<std::uint32_t>* outer_defined);

// Checks that a subgraph's captures name values defined before the node.
void verify_subgraphs(const Graph& graph, const Node& node, const std::set<std::uint32_t>& defined) {
  for (const auto& [name, value] : node.attrs) {
    const auto* g = std::get_if<std::shared_ptr<Graph>>(&value);
    if (g == nullptr || !*g) continue;
    for (const Capture& c : (*g)->captures()) {
      if (defined.count(c.outer.index) == 0) {
        fail_node(node, ErrorKind::Model, "subgraph '" + name + "' captures '" + value_name(graph, c.outer) +
                                              "', which is not defined before this node");
      }
    }
    verify_scope(**g, &defined);
  }
}

// Checks one graph: unique names, def-before-use, outputs defined.
void verify_scope(const Graph& graph, const std::set<std::uint32_t>* outer_defined) {
  std::set<std::string> names;
  for (const ValueInfo& v : graph.values())
    if (!v.name.empty() && !names.insert(v.name).second)
      throw Error(ErrorKind::Model, "graph '" + graph.name + "': value name '" + v.name + "' is used twice");
  if (outer_defined == nullptr && !graph.captures().empty())
    throw Error(ErrorKind::Model, "graph '" + graph.name + "' is top-level but has captures");
  std::set<std::uint32_t> defined = initially_defined(graph);
  for (const Node& node : graph.nodes()) {
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      ValueId v = node.inputs[i];
      if (!v.valid()) continue;
      if (defined.count(v.index) == 0) {
        fail_node(node, ErrorKind::Model, "input " + std::to_string(i) + " '" + value_name(graph, v) +
                                              "' is used before it is defined (a cycle or a wrong node order)");
      }
    }
    verify_subgraphs(graph, node, defined);
    for (ValueId v : node.outputs)
      if (v.valid()) defined.insert(v.index);
  }
  for (ValueId v : graph.outputs()) {
    if (!v.valid() || defined.count(v.index) == 0) {
      throw Error(ErrorKind::Model, "graph '" + graph.name + "': output '" + value_name(graph, v) + "' is never defined");
    }
  }
}

}  // namespace

// Checks one node's arity and attributes against its schema.
void validate_node(const Graph& /*graph*/, const Node& node) {
  const OpSchema& schema = op_schema(node.op);
  check_arity(node, "inputs", static_cast<int>(node.inputs.size()), schema.min_inputs, schema.max_inputs);
  check_arity(node, "outputs", static_cast<int>(node.outputs.size()), schema.min_outputs, schema.max_outputs);
  for (int i = 0; i < schema.min_inputs; ++i) {
    if (!node.inputs[i].valid() && node.op != OpKind::Loop) {
      fail_node(node, ErrorKind::Model, "required input " + std::to_string(i) + " is absent");
    }
  }
  // Outputs below min_outputs are required; a variadic list (Split, Loop, If,
  // Scan) has no optional members, so every entry of it must be named.
  const int required_outputs = schema.max_outputs < 0 ? static_cast<int>(node.outputs.size()) : schema.min_outputs;
  for (int i = 0; i < required_outputs; ++i) {
    if (!node.outputs[i].valid()) fail_node(node, ErrorKind::Model, "required output " + std::to_string(i) + " is absent");
  }
  check_attributes(node, schema);
}

// Checks a top-level graph and, recursively, its subgraphs.
void verify_graph(const Graph& graph) { verify_scope(graph, nullptr); }

}  // namespace canary::graph
