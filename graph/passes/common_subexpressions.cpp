// Common-subexpression elimination: a node with the same op, the same inputs
// (after earlier replacements) and the same attributes as an earlier node
// computes the same values, so its readers read the earlier node's outputs.
// Nodes with subgraphs are never merged. A later node whose outputs are graph
// outputs is merged only when the earlier outputs can take their names.
#include "graph/passes/passes.h"

#include <cstring>
#include <map>

namespace canary::graph::passes {
namespace {

// Appends an attribute value to a key in a form that tells every value apart.
void append_value(std::string& key, const AttrValue& value) {
  key += std::to_string(value.index()) + ":";
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          key += std::to_string(v);
        } else if constexpr (std::is_same_v<T, double>) {
          char bits[sizeof(double)];
          std::memcpy(bits, &v, sizeof v);
          key.append(bits, sizeof bits);
        } else if constexpr (std::is_same_v<T, std::string>) {
          key += std::to_string(v.size()) + ":" + v;
        } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
          for (std::int64_t x : v) key += std::to_string(x) + ",";
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          for (double x : v) append_value(key, AttrValue(x));
        } else if constexpr (std::is_same_v<T, Tensor>) {
          key += v.type_string() + ":";
          key.append(static_cast<const char*>(v.raw()), v.nbytes());
        }
      },
      value);
  key += ";";
}

// The node's identity for merging, or "" when it must never merge.
std::string node_key(const GraphEdit& edit, const Node& node) {
  std::string key = std::to_string(static_cast<int>(node.op)) + "(";
  for (ValueId v : node.inputs) key += (v.valid() ? std::to_string(edit.current(v).index) : "-") + ",";
  key += ")" + std::to_string(node.outputs.size()) + "{";
  for (const auto& [name, value] : node.attrs) {
    if (std::holds_alternative<std::shared_ptr<Graph>>(value)) return {};
    key += name + "=";
    append_value(key, value);
  }
  return key + "}";
}

// True when every output of `later` can be read from `earlier` instead.
bool can_merge(const GraphEdit& edit, const Node& earlier, const Node& later) {
  for (std::size_t i = 0; i < later.outputs.size(); ++i) {
    const ValueId from = later.outputs[i];
    if (!from.valid()) continue;
    const ValueId to = earlier.outputs[i];
    if (!to.valid() || !edit.can_replace(from, to)) return false;
  }
  return true;
}

}  // namespace

void eliminate_common_subexpressions(PassContext& ctx) {
  GraphEdit& edit = ctx.edit;
  std::map<std::string, NodeId> first;
  const std::size_t count = edit.graph().nodes().size();
  for (std::uint32_t i = 0; i < count; ++i) {
    const NodeId n{i};
    if (edit.removed(n)) continue;
    const Node& node = edit.graph().node(n);
    std::string key = node_key(edit, node);
    if (key.empty()) continue;
    auto [it, inserted] = first.emplace(std::move(key), n);
    if (inserted) continue;
    const Node& earlier = edit.graph().node(it->second);
    if (!can_merge(edit, earlier, node)) continue;
    for (std::size_t k = 0; k < node.outputs.size(); ++k)
      if (node.outputs[k].valid()) edit.replace(node.outputs[k], earlier.outputs[k]);
    edit.remove_node(n);
    edit.count_change();
    ctx.details.push_back(node_label(edit.graph(), node) + " (" + std::string(op_name(node.op)) + ") repeats " +
                          node_label(edit.graph(), earlier));
  }
}

}  // namespace canary::graph::passes
