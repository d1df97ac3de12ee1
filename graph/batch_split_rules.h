// Batch-split analysis, internal to canary_graph: what the driver
// (batch_split.cpp: setup, propagation in node order, the check after each
// node) shares with the per-op rules (batch_split_rules.cpp): the categories a
// value can have, the batch dim, the view of one node a rule gets, and the
// entry point that categorises a node's outputs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"

namespace canary::graph::batch_rules {

// What a value holds with respect to a split of the batch:
//   Constant    the same in every slice: initializers, values computed only
//               from constants, and shape integers that do not involve the
//               batch size (Shape(x)[1:]);
//   Batched     per-sample data with the batch on `axis`: the slice of a call
//               holds exactly the rows of the whole call's value on that axis;
//   ShapeValue  an integer computed from a shape that involves the batch size
//               (Shape(x)[0]); it differs between slices, so it may only size
//               the batch axis of a Reshape, Expand or ConstantOfShape.
enum class Role { Constant, Batched, ShapeValue };

struct Category {
  Role role = Role::Constant;
  int axis = 0;  // Batched only
  // Batched only: the batch axis's dim is outer * N * inner when a Reshape
  // merged the batch with its neighbours, the samples in blocks of `inner`
  // consecutive entries, repeated `outer` times (attention's [T, N, 64] to
  // [T, 4*N, 16] gives inner 4; [T, 4*N, 4] to [T*N, 16] gives outer T).
  // A slice of n samples then holds n blocks of each repetition. Rules that
  // keep an axis intact keep its grouping; two operands meet only with the
  // same grouping.
  Dim outer{1}, inner{1};
  static Category constant() { return {Role::Constant, 0}; }
  static Category batched(int axis) { return {Role::Batched, axis}; }
  static Category shape_value() { return {Role::ShapeValue, 0}; }
  // This category on another axis, with its grouping.
  Category on_axis(int to) const {
    Category c = *this;
    c.axis = to;
    return c;
  }
  bool plain() const { return outer == Dim(1) && inner == Dim(1); }
};

using Categories = std::vector<Category>;  // one per node output

// Why a graph is not separable; thrown by the checks and rules, caught only in
// analyse_batch_split.
struct Inseparable {
  std::string reason;
};

// "node 'conv1' (Conv)"; an unnamed node is named by its first output.
std::string describe(const Graph& g, const Node& node);

// The batch dim and the two questions asked of other dims, under the symbol
// table's equalities: is it the batch, does it involve the batch size.
class BatchDim {
 public:
  BatchDim(const SymbolTable& symbols, Dim batch)
      : symbols_(symbols), batch_(std::move(batch)), representative_(symbols.representative(batch_.symbol_name())) {}
  const Dim& dim() const { return batch_; }
  std::string name() const { return batch_.symbol_name(); }
  bool is_batch(const Dim& d) const { return symbols_.equal(d, batch_); }
  // Whether d is the batch grouped as c says (outer * N * inner).
  bool is_grouped_batch(const Dim& d, const Category& c) const {
    return symbols_.equal(d, c.outer * batch_ * c.inner) && !mentions(c.outer) && !mentions(c.inner);
  }
  bool mentions(const Dim& d) const {
    const std::vector<std::string> names = symbols_.canonical(d).symbols();
    return std::find(names.begin(), names.end(), representative_) != names.end();
  }

 private:
  const SymbolTable& symbols_;
  Dim batch_;
  std::string representative_;
};

// One node under analysis: its inputs' categories and types, its attributes
// with the schema's defaults, and rejections that name it.
class NodeScope {
 public:
  NodeScope(const Graph& g, const Node& node, const std::vector<Category>& categories, const BatchDim& batch)
      : graph_(g), node_(node), categories_(categories), batch_(batch) {}

  OpKind op() const { return node_.op; }
  int num_inputs() const { return static_cast<int>(node_.inputs.size()); }
  bool has(int i) const { return i >= 0 && i < num_inputs() && node_.inputs[static_cast<std::size_t>(i)].valid(); }
  // An absent input counts as a constant.
  Category in(int i) const { return has(i) ? categories_[input_id(i).index] : Category::constant(); }
  const ValueInfo& info(int i) const { return graph_.value(input_id(i)); }
  int rank(int i) const { return info(i).type.rank(); }
  // Output 0, which every node has.
  const ValueInfo& out_info() const { return graph_.value(node_.outputs.at(0)); }
  int out_rank() const { return out_info().type.rank(); }
  int num_outputs() const { return static_cast<int>(node_.outputs.size()); }
  bool has_output(int i) const { return i < num_outputs() && node_.outputs[static_cast<std::size_t>(i)].valid(); }
  Categories all(Category c) const { return Categories(node_.outputs.size(), c); }
  // Whether two dims are equal under the symbol table's equalities.
  bool same_dim(const Dim& a, const Dim& b) const { return graph_.symbols().equal(a, b); }
  const SymbolTable& symbols() const { return graph_.symbols(); }
  const BatchDim& batch() const { return batch_; }

  // Whether some present input has the role.
  bool any_input(Role role) const {
    for (int i = 0; i < num_inputs(); ++i)
      if (has(i) && in(i).role == role) return true;
    return false;
  }

  [[noreturn]] void reject(const std::string& text) const { throw Inseparable{describe(graph_, node_) + " " + text}; }

  // "input 1 ('w')", or "input 1 (absent)".
  std::string input_text(int i) const;

  // Requires input i to be absent or the same in every slice.
  void expect_constant(int i) const;
  // Requires input i to be absent, a constant or a ShapeValue (a shape input).
  void expect_not_batched(int i) const;
  // Requires input i to be per-sample data and returns its batch axis.
  int batch_axis(int i) const;
  // Requires input i to be absent or per-sample data batched on `axis`,
  // grouped as input `like` is.
  void expect_batched_on(int i, int axis, int like) const;
  // Requires two per-sample inputs to group their samples alike.
  void expect_same_grouping(int i, int j) const;
  // The one axis of output 0 whose dim is the batch; rejected when it has the
  // batch on no axis or on several.
  int output_batch_axis() const;

  // The contents of integer input i, which must be known at build time.
  std::vector<std::int64_t> ints(int i) const;
  std::int64_t attr_int(std::string_view name) const;
  // An ints attribute; nullopt when absent (no schema default either).
  std::optional<std::vector<std::int64_t>> attr_ints(std::string_view name) const;
  // A possibly negative axis against a rank; out of range is rejected.
  int normalize(std::int64_t axis, int rank, std::string_view what) const;

 private:
  ValueId input_id(int i) const { return node_.inputs.at(static_cast<std::size_t>(i)); }

  const Graph& graph_;
  const Node& node_;
  const std::vector<Category>& categories_;
  const BatchDim& batch_;
};

// The categories of one node's outputs from its inputs' (batch_split_rules.cpp);
// throws Inseparable when the node would mix samples or read the batch size.
// The driver then checks each output against the invariant of its category.
Categories categorise(const NodeScope& s);

}  // namespace canary::graph::batch_rules
