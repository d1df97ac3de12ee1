// The graph IR: values with symbolic types, nodes with attributes, subgraphs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "canary/dtype.h"
#include "canary/tensor.h"
#include "graph/op_kind.h"
#include "graph/symbolic.h"

namespace canary::graph {

// Typed indices into a Graph's tables.
struct ValueId {
  std::uint32_t index = UINT32_MAX;
  static constexpr ValueId none() { return {}; }
  bool valid() const { return index != UINT32_MAX; }
  friend bool operator==(ValueId a, ValueId b) { return a.index == b.index; }
  friend bool operator!=(ValueId a, ValueId b) { return a.index != b.index; }
  friend bool operator<(ValueId a, ValueId b) { return a.index < b.index; }
};
struct NodeId {
  std::uint32_t index = UINT32_MAX;
  bool valid() const { return index != UINT32_MAX; }
  friend bool operator==(NodeId a, NodeId b) { return a.index == b.index; }
};

// The static type of a value: dtype and a shape of symbolic dims.
struct ValueType {
  DType dtype = DType::F32;
  DimVector shape;
  int rank() const { return static_cast<int>(shape.size()); }
  std::string to_string() const;  // "f32[N, 128]"
};

class Graph;

enum class AttrType { Int, Float, String, Ints, Floats, Tensor, Graph };
const char* attr_type_name(AttrType t);

using AttrValue = std::variant<std::int64_t, double, std::string, std::vector<std::int64_t>,
                               std::vector<double>, Tensor, std::shared_ptr<Graph>>;
AttrType attr_type_of(const AttrValue& v);

// Attributes by name, sorted (so printing is deterministic).
using Attributes = std::map<std::string, AttrValue, std::less<>>;

struct ValueInfo {
  std::string name;
  ValueType type;
  NodeId producer;                 // invalid for graph inputs, constants and captures
  std::optional<Tensor> constant;  // set for initializers
  // For small 1-D integer tensors whose contents are known symbolically (the
  // result of Shape, Concat of dims, ...): one Dim per element. Lets Reshape,
  // Expand and friends infer exact symbolic output shapes.
  std::optional<DimVector> known_dims;
};

struct Node {
  OpKind op = OpKind::Identity;
  std::string name;
  std::vector<ValueId> inputs;   // ValueId::none() for an omitted optional input
  std::vector<ValueId> outputs;  // ValueId::none() for an omitted optional output
  Attributes attrs;
};

// A subgraph reads values of enclosing scopes through captures: `local` is a
// value of the subgraph, `outer` the value of the parent graph it stands for.
struct Capture {
  ValueId local;
  ValueId outer;
};

class Graph {
 public:
  explicit Graph(std::string name = "main", std::shared_ptr<SymbolTable> symbols = nullptr);

  std::string name;

  // --- building ---------------------------------------------------------
  // Adds a graph input. Names are unique within one graph.
  ValueId add_input(std::string_view name, ValueType type);
  // Adds an initializer (a constant value with a name).
  ValueId add_constant(std::string_view name, Tensor value);
  // Adds a value that stands for an outer-scope value (subgraphs only).
  ValueId add_capture(std::string_view name, ValueType type, ValueId outer);
  // Adds a node and creates its outputs (types filled by shape inference).
  // An empty output name makes that optional output absent.
  NodeId add_node(OpKind op, std::string_view name, std::vector<ValueId> inputs,
                  const std::vector<std::string>& output_names, Attributes attrs = {});
  void add_output(ValueId v);

  // --- reading ----------------------------------------------------------
  const std::vector<ValueInfo>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  const std::vector<ValueId>& constants() const { return constants_; }
  const std::vector<Capture>& captures() const { return captures_; }
  const ValueInfo& value(ValueId v) const { return values_.at(v.index); }
  ValueInfo& value(ValueId v) { return values_.at(v.index); }
  const Node& node(NodeId n) const { return nodes_.at(n.index); }
  Node& node(NodeId n) { return nodes_.at(n.index); }
  // Lookup by name in this graph only.
  std::optional<ValueId> find_value(std::string_view name) const;

  SymbolTable& symbols() { return *symbols_; }
  const SymbolTable& symbols() const { return *symbols_; }
  const std::shared_ptr<SymbolTable>& shared_symbols() const { return symbols_; }

 private:
  ValueId add_value(std::string_view name, ValueType type);

  std::vector<ValueInfo> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::vector<ValueId> constants_;
  std::vector<Capture> captures_;
  std::map<std::string, ValueId, std::less<>> by_name_;
  std::shared_ptr<SymbolTable> symbols_;
};

}  // namespace canary::graph
