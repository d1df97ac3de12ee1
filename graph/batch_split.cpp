// Batch-split analysis, the driver: reads the batch from the first input,
// checks the interface, propagates in node order what each value is with
// respect to the batch (the rules of batch_split_rules.cpp decide each node),
// checks every node's outputs against the invariant of their category, and
// turns the first rejection into the reason.
#include "graph/batch_split.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/batch_split_rules.h"

namespace canary::graph {
namespace {

using batch_rules::BatchDim;
using batch_rules::Categories;
using batch_rules::Category;
using batch_rules::Inseparable;
using batch_rules::NodeScope;
using batch_rules::Role;
using batch_rules::categorise;
using batch_rules::describe;

// The whole analysis: read the batch, check the interface, propagate
// categories in node order (nodes are topologically ordered: verify_graph
// checks def-before-use), require per-sample outputs.
class BatchAnalysis {
 public:
  explicit BatchAnalysis(const Graph& g) : g_(g), batch_(batch_of(g)), categories_(g.values().size()) {}

  void run() {
    check_interface();
    for (ValueId v : g_.inputs()) categories_[v.index] = Category::batched(0);
    for (const Node& node : g_.nodes()) record(node, categorise(NodeScope(g_, node, categories_, batch_)));
    for (ValueId v : g_.outputs()) {
      const Category c = categories_[v.index];
      if (c.role != Role::Batched || c.axis != 0 || !c.plain())
        throw Inseparable{"output '" + g_.value(v).name + "' is not per-sample data batched on axis 0"};
    }
  }

 private:
  // The batch: dim 0 of the first input, a bare symbol not fixed to a value.
  static BatchDim batch_of(const Graph& g) {
    if (g.inputs().empty()) throw Inseparable{"the graph has no inputs"};
    if (g.outputs().empty()) throw Inseparable{"the graph has no outputs"};
    const ValueInfo& first = g.value(g.inputs()[0]);
    if (first.type.rank() == 0) throw Inseparable{"input '" + first.name + "' is a scalar, it has no batch axis"};
    const Dim& b = first.type.shape[0];
    if (!b.is_symbol())
      throw Inseparable{"input '" + first.name + "' has leading dim " + b.to_string() + ", not a symbol"};
    if (std::optional<std::int64_t> v = g.symbols().fixed_value(b.symbol_name()))
      throw Inseparable{"the batch symbol " + b.symbol_name() + " is fixed to " + std::to_string(*v)};
    return BatchDim(g.symbols(), b);
  }

  // Every input and output leads with the batch (structurally) and has it
  // nowhere else.
  void check_interface() const {
    for (ValueId v : g_.inputs()) check_leading(g_.value(v), "input");
    for (ValueId v : g_.outputs()) check_leading(g_.value(v), "output");
  }

  void check_leading(const ValueInfo& v, const std::string& what) const {
    const DimVector& shape = v.type.shape;
    if (shape.empty()) throw Inseparable{what + " '" + v.name + "' is a scalar, it has no batch axis"};
    if (shape[0] != batch_.dim())
      throw Inseparable{what + " '" + v.name + "' has leading dim " + shape[0].to_string() + ", not the batch " +
                        batch_.name()};
    for (std::size_t k = 1; k < shape.size(); ++k)
      if (batch_.mentions(shape[k]))
        throw Inseparable{what + " '" + v.name + "' " + v.type.to_string() + " involves the batch size in dim " +
                          std::to_string(k)};
  }

  // Stores a node's output categories after refining and checking them.
  void record(const Node& node, const Categories& categories) {
    for (std::size_t i = 0; i < node.outputs.size(); ++i) {
      if (!node.outputs[i].valid()) continue;
      const ValueInfo& v = g_.value(node.outputs[i]);
      const Category c = refine(v, categories.at(i));
      check_output(node, v, c);
      categories_[node.outputs[i].index] = c;
    }
  }

  // A ShapeValue whose known contents do not involve the batch size is the
  // same in every slice (Shape(x)[1:]), so it counts as a constant.
  Category refine(const ValueInfo& v, Category c) const {
    if (c.role != Role::ShapeValue || !v.known_dims) return c;
    for (const Dim& d : *v.known_dims)
      if (batch_.mentions(d)) return c;
    return Category::constant();
  }

  // The invariant every rule relies on: per-sample data has exactly the batch
  // on its axis and the batch size nowhere else; other values have shapes free
  // of it. This is also what catches a Reshape or Flatten merging the batch.
  void check_output(const Node& node, const ValueInfo& v, Category c) const {
    const DimVector& shape = v.type.shape;
    const std::string head = describe(g_, node) + " gives '" + v.name + "' " + v.type.to_string();
    if (c.role == Role::Batched &&
        (c.axis >= static_cast<int>(shape.size()) || !batch_.is_grouped_batch(shape[c.axis], c)))
      throw Inseparable{head + ", which does not keep the batch " + batch_.name() + " on axis " +
                        std::to_string(c.axis)};
    for (std::size_t k = 0; k < shape.size(); ++k) {
      if (c.role == Role::Batched && static_cast<int>(k) == c.axis) continue;
      if (batch_.mentions(shape[k]))
        throw Inseparable{head + ", whose dim " + std::to_string(k) + " depends on the batch size"};
    }
  }

  const Graph& g_;
  BatchDim batch_;
  std::vector<Category> categories_;
};

}  // namespace

// Runs the analysis; a rejection anywhere becomes the reason.
BatchSplit analyse_batch_split(const Graph& g) {
  try {
    BatchAnalysis(g).run();
    return BatchSplit{true, ""};
  } catch (const Inseparable& e) {
    return BatchSplit{false, e.reason};
  }
}

}  // namespace canary::graph
