// The op registry: one entry per OpKind with its attributes, arity, symbolic
// shape inference and validation. Everything that needs to know what an op
// accepts asks here.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "canary/error.h"
#include "graph/graph.h"

namespace canary::graph {

struct AttrSpec {
  std::string_view name;
  AttrType type;
  std::optional<AttrValue> default_value;  // nullopt: required when `required`, else optional-absent
  bool required = false;
  // Set by graph passes only (e.g. Conv's channels_last): the text format
  // reads it, the ONNX importer refuses it as an unknown attribute.
  bool internal = false;
};

class InferContext;
using InferFn = void (*)(InferContext&);

struct OpSchema {
  OpKind kind;
  std::string_view name;
  int min_inputs, max_inputs;    // max -1: variadic
  int min_outputs, max_outputs;  // max -1: variadic
  std::vector<AttrSpec> attrs;
  InferFn infer;  // checks the inputs and sets every present output's type
};

// The entry of an op.
const OpSchema& op_schema(OpKind op);

// What a shape-inference function sees: the node, its input types (and known
// contents), the symbol table; it writes the output types.
class InferContext {
 public:
  InferContext(const Graph& graph, const Node& node, SymbolTable& symbols);

  const Node& node() const { return node_; }
  const Graph& graph() const { return graph_; }
  SymbolTable& symbols() { return symbols_; }
  int num_inputs() const { return static_cast<int>(node_.inputs.size()); }
  int num_outputs() const { return static_cast<int>(node_.outputs.size()); }
  bool has_input(int i) const;
  bool has_output(int i) const;
  // The input's type; throws Error(Model) when the input is absent.
  const ValueType& input_type(int i) const;
  const ValueInfo& input_info(int i) const;
  // The input's constant contents, if it is an initializer.
  const Tensor* input_constant(int i) const;
  // The input's contents as dims when known (constant i64/i32 or known_dims).
  std::optional<DimVector> input_dims_value(int i) const;

  // Attribute getters; fall back to the schema default; throw Error(Model)
  // naming the attribute when a required one is missing.
  std::int64_t attr_int(std::string_view name) const;
  double attr_float(std::string_view name) const;
  std::string attr_string(std::string_view name) const;
  std::vector<std::int64_t> attr_ints(std::string_view name) const;
  std::vector<double> attr_floats(std::string_view name) const;
  bool has_attr(std::string_view name) const;
  const Graph& attr_graph(std::string_view name) const;

  void set_output(int i, ValueType type);
  void set_output_known_dims(int i, DimVector dims);
  const std::vector<std::optional<ValueType>>& outputs() const { return outputs_; }
  const std::vector<std::optional<DimVector>>& output_known_dims() const { return known_; }

  // Throws canary::Error(kind) whose message starts with
  // "node 'NAME' (Op): " followed by the text.
  [[noreturn]] void fail(ErrorKind kind, const std::string& text) const;
  // Normalises a possibly negative axis against a rank, or fails naming it.
  int normalize_axis(std::int64_t axis, int rank, std::string_view what) const;
  // Requires an input's dtype to be one of the given ones.
  void expect_dtype(int input, std::initializer_list<DType> allowed) const;
  void expect_rank(int input, int rank) const;
  // NumPy broadcasting of two symbolic shapes (distinct symbols broadcast to
  // max(a, b); a constant other than 1 wins over a symbol).
  DimVector broadcast(const DimVector& a, const DimVector& b) const;
  // Records a == b in the symbol table; a contradiction becomes Error(Shape)
  // naming this node and `what`.
  void assert_equal(const Dim& a, const Dim& b, const std::string& what);
  // "input 1 ('b')": how messages name an input.
  std::string describe_input(int i) const;

 private:
  const Graph& graph_;
  const Node& node_;
  SymbolTable& symbols_;
  std::vector<std::optional<ValueType>> outputs_;
  std::vector<std::optional<DimVector>> known_;
};

// Checks arity and attributes (names known, types right) of one node against
// its schema; throws Error(Model) naming node, op and attribute.
void validate_node(const Graph& graph, const Node& node);

// Runs validation and shape inference over every node in order (recursing
// into subgraphs) and stores output types and known dims. Throws
// canary::Error naming the first node that does not type-check.
void infer_shapes(Graph& graph);

// Checks structure: every input of a node is defined before it (topological
// order), names unique, outputs defined, captures point at enclosing values.
void verify_graph(const Graph& graph);

}  // namespace canary::graph
