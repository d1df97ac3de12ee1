// GraphEdit: use counts, removal and replacement bookkeeping, and the rebuild
// that applies them (see graph_edit.h).
#include "graph/passes/graph_edit.h"

#include <utility>

#include "canary/error.h"

namespace canary::graph {
namespace {

// The subgraphs a node holds as attributes.
template <typename F>
void for_each_subgraph(const Node& node, F&& f) {
  for (const auto& [name, value] : node.attrs)
    if (const auto* g = std::get_if<std::shared_ptr<Graph>>(&value); g != nullptr && *g) f(**g);
}

// What the emitter needs to know about the edits of one graph.
struct EmitPlan {
  std::vector<NodeId> order;           // nodes to emit, in order
  std::vector<ValueId> resolved;       // value -> the value its readers read
  std::vector<std::string> names;      // value -> name in the new graph ("" keeps its own)
  std::vector<bool> keep_constant;     // value -> constant still read
  const std::vector<ValueId>* outer_map = nullptr;  // enclosing graph's old -> new ids (subgraphs)
};

// Maps an id of the enclosing graph through the plan's outer map.
ValueId map_outer(const EmitPlan& plan, ValueId outer) {
  if (plan.outer_map == nullptr || !outer.valid()) return outer;
  if (outer.index >= plan.outer_map->size() || !(*plan.outer_map)[outer.index].valid())
    throw Error(ErrorKind::Internal, "graph rebuild: a subgraph captures a value its parent no longer defines");
  return (*plan.outer_map)[outer.index];
}

// The name a value gets in the rebuilt graph.
std::string name_in_new_graph(const Graph& g, const EmitPlan& plan, ValueId v) {
  const std::string& forced = plan.names[v.index];
  return forced.empty() ? g.value(v).name : forced;
}

// Writes the new graph: inputs, kept constants, captures, nodes in plan order, outputs.
std::shared_ptr<Graph> emit(const Graph& g, const EmitPlan& plan) {
  auto out = std::make_shared<Graph>(g.name, g.shared_symbols());
  std::vector<ValueId> map(g.values().size());
  const auto mapped = [&](ValueId v) {
    if (!v.valid()) return v;
    const ValueId r = plan.resolved[v.index];
    if (!map[r.index].valid())
      throw Error(ErrorKind::Internal, "graph rebuild: '" + g.value(r).name + "' is read before it is defined");
    return map[r.index];
  };
  for (ValueId v : g.inputs()) map[v.index] = out->add_input(name_in_new_graph(g, plan, v), g.value(v).type);
  for (ValueId v : g.constants())
    if (plan.keep_constant[v.index]) map[v.index] = out->add_constant(name_in_new_graph(g, plan, v), *g.value(v).constant);
  for (const Capture& c : g.captures())
    map[c.local.index] = out->add_capture(name_in_new_graph(g, plan, c.local), g.value(c.local).type,
                                          map_outer(plan, c.outer));
  for (NodeId n : plan.order) {
    const Node& node = g.node(n);
    std::vector<ValueId> inputs;
    for (ValueId v : node.inputs) inputs.push_back(mapped(v));
    std::vector<std::string> names;
    for (ValueId v : node.outputs) names.push_back(v.valid() ? name_in_new_graph(g, plan, v) : std::string());
    Attributes attrs = node.attrs;
    for (auto& [name, value] : attrs) {
      auto* sub = std::get_if<std::shared_ptr<Graph>>(&value);
      if (sub == nullptr || !*sub) continue;
      // Captures of a replaced value read its replacement.
      std::vector<ValueId> outer(map.size());
      for (std::size_t i = 0; i < map.size(); ++i) outer[i] = map[plan.resolved[i].index];
      *sub = rebuild_subgraph(**sub, outer);
    }
    const NodeId added = out->add_node(node.op, node.name, std::move(inputs), names, std::move(attrs));
    for (std::size_t i = 0; i < node.outputs.size(); ++i) {
      if (!node.outputs[i].valid()) continue;
      const ValueId old = node.outputs[i];
      map[old.index] = out->node(added).outputs[i];
      ValueInfo& info = out->value(map[old.index]);
      info.type = g.value(old).type;
      info.known_dims = g.value(old).known_dims;
    }
  }
  for (ValueId v : g.outputs()) out->add_output(mapped(v));
  return out;
}

}  // namespace

GraphEdit::GraphEdit(Graph& g) : graph_(g) {
  grow();
  for (const Node& node : g.nodes()) {
    for (ValueId v : node.inputs)
      if (v.valid()) ++uses_[v.index];
    for_each_subgraph(node, [&](const Graph& sub) {
      for (const Capture& c : sub.captures()) ++uses_[c.outer.index];
    });
  }
  for (ValueId v : g.outputs()) {
    ++uses_[v.index];
    outputs_[v.index] = true;
  }
}

// Sizes the per-value and per-node tables to the graph (after additions).
void GraphEdit::grow() {
  const std::size_t values = graph_.values().size();
  uses_.resize(values, 0);
  outputs_.resize(values, false);
  replaced_by_.resize(values, ValueId::none());
  removed_.resize(graph_.nodes().size(), false);
}

int GraphEdit::uses(ValueId v) const { return v.index < uses_.size() ? uses_[v.index] : 0; }

bool GraphEdit::is_graph_output(ValueId v) const { return v.index < outputs_.size() && outputs_[v.index]; }

std::vector<NodeId> GraphEdit::readers(ValueId v) const {
  std::vector<NodeId> found;
  for (std::uint32_t i = 0; i < graph_.nodes().size(); ++i) {
    if (removed_[i]) continue;
    const Node& node = graph_.nodes()[i];
    bool reads = false;
    for (ValueId in : node.inputs) reads = reads || resolve(in) == v;
    for_each_subgraph(node, [&](const Graph& sub) {
      for (const Capture& c : sub.captures()) reads = reads || resolve(c.outer) == v;
    });
    if (reads) found.push_back(NodeId{i});
  }
  return found;
}

const Tensor* GraphEdit::constant(ValueId v) const {
  if (!v.valid()) return nullptr;
  const ValueInfo& info = graph_.value(resolve(v));
  return info.constant ? &*info.constant : nullptr;
}

std::string GraphEdit::unique_name(std::string_view base) const {
  std::string name(base);
  for (int i = 1; graph_.find_value(name); ++i) name = std::string(base) + "_" + std::to_string(i);
  return name;
}

ValueId GraphEdit::add_constant(std::string_view base, Tensor value) {
  const ValueId v = graph_.add_constant(unique_name(base), std::move(value));
  grow();
  return v;
}

NodeId GraphEdit::add_node(OpKind op, std::string_view name, std::vector<ValueId> inputs,
                           const std::vector<std::string>& bases, const std::vector<ValueType>& types,
                           Attributes attrs) {
  std::vector<std::string> names;
  for (const std::string& base : bases) {
    std::string unique = unique_name(base);
    for (const std::string& taken : names)
      if (taken == unique) unique = unique_name(base + "_" + std::to_string(names.size()));
    names.push_back(std::move(unique));
  }
  const NodeId n = graph_.add_node(op, name, std::move(inputs), names, std::move(attrs));
  grow();
  const Node& node = graph_.node(n);
  for (std::size_t i = 0; i < node.outputs.size() && i < types.size(); ++i) graph_.value(node.outputs[i]).type = types[i];
  for (ValueId v : node.inputs)
    if (v.valid()) ++uses_[resolve(v).index];
  return n;
}

void GraphEdit::set_input(NodeId n, std::size_t i, ValueId v) {
  Node& node = graph_.node(n);
  if (node.inputs.size() <= i) node.inputs.resize(i + 1, ValueId::none());
  if (node.inputs[i].valid()) --uses_[resolve(node.inputs[i]).index];
  node.inputs[i] = v;
  if (v.valid()) ++uses_[resolve(v).index];
}

void GraphEdit::remove_node(NodeId n) {
  if (removed_.at(n.index)) return;
  removed_[n.index] = true;
  for (ValueId v : graph_.node(n).inputs)
    if (v.valid()) --uses_[resolve(v).index];
}

bool GraphEdit::can_replace(ValueId from, ValueId to) const {
  if (from == to || !from.valid() || !to.valid()) return false;
  if (!is_graph_output(from)) return true;
  const ValueInfo& target = graph_.value(to);
  return target.producer.valid() && !is_graph_output(to);
}

void GraphEdit::replace(ValueId from, ValueId to) {
  to = resolve(to);
  if (!can_replace(from, to))
    throw Error(ErrorKind::Internal, "graph pass: '" + graph_.value(from).name + "' cannot be replaced by '" +
                                         graph_.value(to).name + "'");
  replaced_by_[from.index] = to;
  uses_[to.index] += uses_[from.index];
  uses_[from.index] = 0;
  if (outputs_[from.index]) outputs_[to.index] = true;
}

// Follows replacements to the value readers of v read now.
ValueId GraphEdit::resolve(ValueId v) const {
  while (v.valid() && v.index < replaced_by_.size() && replaced_by_[v.index].valid()) v = replaced_by_[v.index];
  return v;
}

std::shared_ptr<Graph> GraphEdit::rebuild() const {
  const Graph& g = graph_;
  const std::size_t values = g.values().size();
  EmitPlan plan;
  plan.resolved.resize(values);
  for (std::uint32_t i = 0; i < values; ++i) plan.resolved[i] = resolve(ValueId{i});
  plan.names.resize(values);
  plan.keep_constant.resize(values, false);

  // The values each node depends on: its inputs and what its subgraphs capture.
  const auto dependencies = [&](const Node& node) {
    std::vector<ValueId> deps;
    for (ValueId v : node.inputs)
      if (v.valid()) deps.push_back(plan.resolved[v.index]);
    for_each_subgraph(node, [&](const Graph& sub) {
      for (const Capture& c : sub.captures()) deps.push_back(plan.resolved[c.outer.index]);
    });
    return deps;
  };

  // Liveness from the outputs, over nodes in reverse (producers precede
  // readers in the original order, and added nodes only read earlier values).
  std::vector<bool> needed(values, false);
  for (ValueId v : g.outputs()) needed[plan.resolved[v.index].index] = true;
  std::vector<bool> live(g.nodes().size(), false);
  bool grew = true;
  while (grew) {  // added nodes sit at the end but feed earlier ones: iterate to a fixed point
    grew = false;
    for (std::size_t i = g.nodes().size(); i-- > 0;) {
      if (removed_[i] || live[i]) continue;
      const Node& node = g.nodes()[i];
      bool any = false;
      for (ValueId v : node.outputs) any = any || (v.valid() && needed[v.index]);
      if (!any) continue;
      live[i] = grew = true;
      for (ValueId v : dependencies(node)) needed[v.index] = true;
    }
  }
  for (ValueId v : g.constants()) plan.keep_constant[v.index] = needed[v.index];

  // A stable topological order of the live nodes: each node after the
  // producers of what it reads, otherwise in index order.
  std::vector<int> state(g.nodes().size(), 0);  // 0 new, 1 on the stack, 2 placed
  for (std::uint32_t root = 0; root < g.nodes().size(); ++root) {
    if (!live[root] || state[root] != 0) continue;
    std::vector<std::pair<std::uint32_t, std::size_t>> stack{{root, 0}};
    state[root] = 1;
    while (!stack.empty()) {
      // Copies, not references: pushing onto the stack may move its elements.
      const std::uint32_t n = stack.back().first;
      std::size_t next = stack.back().second;
      const std::vector<ValueId> deps = dependencies(g.nodes()[n]);
      NodeId unplaced;
      while (next < deps.size() && !unplaced.valid()) {
        const NodeId p = g.value(deps[next++]).producer;
        if (!p.valid()) continue;
        if (removed_[p.index])
          throw Error(ErrorKind::Internal, "graph pass: node '" + g.nodes()[n].name +
                                               "' still reads an output of removed node '" + g.node(p).name + "'");
        if (state[p.index] == 1) throw Error(ErrorKind::Internal, "graph pass: the rewritten graph has a cycle");
        if (state[p.index] == 0) unplaced = p;
      }
      stack.back().second = next;
      if (unplaced.valid()) {
        state[unplaced.index] = 1;
        stack.emplace_back(unplaced.index, 0);
        continue;
      }
      state[n] = 2;
      plan.order.push_back(NodeId{n});
      stack.pop_back();
    }
  }

  // A graph output that was replaced lends its name to its replacement; a
  // replaced value whose producer still runs gets a fresh name instead.
  for (ValueId v : g.outputs()) {
    const ValueId r = plan.resolved[v.index];
    if (r != v) plan.names[r.index] = g.value(v).name;
  }
  for (std::uint32_t i = 0; i < values; ++i) {
    if (plan.resolved[i] == ValueId{i} || !plan.names[i].empty()) continue;
    plan.names[i] = unique_name(g.values()[i].name + "_replaced");
  }
  return emit(g, plan);
}

std::string node_label(const Graph& g, const Node& node) {
  if (!node.name.empty()) return "'" + node.name + "'";
  for (ValueId v : node.outputs)
    if (v.valid()) return "'" + std::string(op_name(node.op)) + " -> " + g.value(v).name + "'";
  return "'" + std::string(op_name(node.op)) + "'";
}

std::shared_ptr<Graph> rebuild_subgraph(const Graph& g, const std::vector<ValueId>& outer_map) {
  EmitPlan plan;
  const std::size_t values = g.values().size();
  plan.resolved.resize(values);
  for (std::uint32_t i = 0; i < values; ++i) plan.resolved[i] = ValueId{i};
  plan.names.resize(values);
  plan.keep_constant.assign(values, true);
  for (std::uint32_t i = 0; i < g.nodes().size(); ++i) plan.order.push_back(NodeId{i});
  plan.outer_map = &outer_map;
  return emit(g, plan);
}

}  // namespace canary::graph
