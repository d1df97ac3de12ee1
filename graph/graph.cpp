// The Graph container: building and looking up values and nodes, value types
// and attribute type names.
#include "graph/graph.h"

#include <set>

#include "canary/error.h"
#include "runtime/core/printable.h"

namespace canary::graph {

// "f32[N, 128]"; a scalar prints as "f32[]".
std::string ValueType::to_string() const { return std::string(dtype_name(dtype)) + dims_to_string(shape); }

// The text-format name of an attribute type.
const char* attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::Int: return "int";
    case AttrType::Float: return "float";
    case AttrType::String: return "string";
    case AttrType::Ints: return "ints";
    case AttrType::Floats: return "floats";
    case AttrType::Tensor: return "tensor";
    case AttrType::Graph: return "graph";
  }
  return "?";
}

// The type of an attribute value (variant alternatives follow AttrType's order).
AttrType attr_type_of(const AttrValue& v) {
  static_assert(std::variant_size_v<AttrValue> == 7);
  return static_cast<AttrType>(v.index());
}

// Names come from whoever wrote the model: the graph keeps them printable
// (control bytes, invalid UTF-8 and bidirectional marks escaped, see
// runtime/core/printable.h), so every listing, DOT file, trace and message
// built from them is safe to print, and looks names up the same way, so
// the name as written still finds its value.

// A graph with its own symbol table unless one is shared in.
Graph::Graph(std::string name, std::shared_ptr<SymbolTable> symbols)
    : name(printable(name)), symbols_(symbols ? std::move(symbols) : std::make_shared<SymbolTable>()) {}

// Adds a named value; names are unique within the graph.
ValueId Graph::add_value(std::string_view value_name, ValueType type) {
  if (value_name.empty()) throw Error(ErrorKind::Model, "graph '" + name + "': empty value name");
  std::string shown = printable(value_name);
  if (by_name_.find(shown) != by_name_.end()) {
    throw Error(ErrorKind::Model, "graph '" + name + "': duplicate value name '" + shown + "'");
  }
  ValueId id{static_cast<std::uint32_t>(values_.size())};
  ValueInfo info;
  info.name = shown;
  info.type = std::move(type);
  values_.push_back(std::move(info));
  by_name_.emplace(std::move(shown), id);
  return id;
}

// Adds a graph input.
ValueId Graph::add_input(std::string_view value_name, ValueType type) {
  ValueId id = add_value(value_name, std::move(type));
  inputs_.push_back(id);
  return id;
}

// Adds an initializer; its type comes from the tensor.
ValueId Graph::add_constant(std::string_view value_name, Tensor value) {
  ValueType type;
  type.dtype = value.dtype();
  for (std::int64_t d : value.shape()) type.shape.emplace_back(d);
  ValueId id = add_value(value_name, std::move(type));
  values_[id.index].constant = std::move(value);
  constants_.push_back(id);
  return id;
}

// Adds a value standing for an outer-scope value.
ValueId Graph::add_capture(std::string_view value_name, ValueType type, ValueId outer) {
  if (!outer.valid()) {
    throw Error(ErrorKind::Model, "graph '" + name + "': capture '" + std::string(value_name) +
                                      "' refers to no outer value");
  }
  ValueId id = add_value(value_name, std::move(type));
  captures_.push_back({id, outer});
  return id;
}

// Adds a node after checking its input ids and output names.
NodeId Graph::add_node(OpKind op, std::string_view node_name, std::vector<ValueId> inputs,
                       const std::vector<std::string>& output_names, Attributes attrs) {
  const std::string shown_name = printable(node_name);
  std::string where = "graph '" + name + "': node '" + shown_name + "' (" + std::string(op_name(op)) + ")";
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].valid() && inputs[i].index >= values_.size()) {
      throw Error(ErrorKind::Model, where + ": input " + std::to_string(i) + " refers to unknown value id " +
                                        std::to_string(inputs[i].index));
    }
  }
  std::set<std::string> seen;
  for (const std::string& out : output_names) {
    if (out.empty()) continue;
    std::string shown = printable(out);
    if (by_name_.find(shown) != by_name_.end() || !seen.insert(shown).second) {
      throw Error(ErrorKind::Model, where + ": duplicate value name '" + shown + "'");
    }
  }
  NodeId id{static_cast<std::uint32_t>(nodes_.size())};
  Node node;
  node.op = op;
  node.name = shown_name;
  node.inputs = std::move(inputs);
  node.attrs = std::move(attrs);
  for (const std::string& out : output_names) {
    if (out.empty()) {
      node.outputs.push_back(ValueId::none());
      continue;
    }
    ValueId v = add_value(out, ValueType{});
    values_[v.index].producer = id;
    node.outputs.push_back(v);
  }
  nodes_.push_back(std::move(node));
  return id;
}

// Marks a value as a graph output.
void Graph::add_output(ValueId v) {
  if (!v.valid() || v.index >= values_.size()) {
    throw Error(ErrorKind::Model, "graph '" + name + "': output refers to unknown value id " +
                                      (v.valid() ? std::to_string(v.index) : std::string("none")));
  }
  outputs_.push_back(v);
}

// Looks a value up by name in this graph.
std::optional<ValueId> Graph::find_value(std::string_view value_name) const {
  auto it = is_printable(value_name) ? by_name_.find(value_name) : by_name_.find(printable(value_name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

}  // namespace canary::graph
