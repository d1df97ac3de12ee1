// Model::to_dot: the graph as DOT, with the installed variants' fusion groups
// as clusters and the values their entry guards check marked.
#include <algorithm>
#include <cctype>

#include "graph/dot_export.h"
#include "runtime/model_impl.h"

namespace canary {

namespace {

// True for "rank", "dtype" and "dimN".
bool is_guarded_property(std::string_view s) {
  if (s == "rank" || s == "dtype") return true;
  if (s.size() < 4 || s.substr(0, 3) != "dim") return false;
  return std::all_of(s.begin() + 3, s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// The value names a guard condition checks: "x.dim1 == h.dim0" gives x and h,
// "x is 4-byte aligned" gives x.
std::vector<std::string> guarded_names(std::string_view condition) {
  std::vector<std::string_view> tokens;
  std::size_t pos = 0;
  while (pos < condition.size()) {
    const std::size_t end = std::min(condition.find(' ', pos), condition.size());
    if (end > pos) tokens.push_back(condition.substr(pos, end - pos));
    pos = end + 1;
  }
  std::vector<std::string> names;
  for (std::string_view t : tokens) {
    const std::size_t dot = t.rfind('.');
    if (dot != std::string_view::npos && dot > 0 && is_guarded_property(t.substr(dot + 1)))
      names.emplace_back(t.substr(0, dot));
  }
  if (tokens.size() >= 2 && tokens[1] == "is") names.emplace_back(tokens[0]);
  return names;
}

// Adds a variant's groups as clusters; a group with the same nodes as an
// earlier one (another variant fusing the same ops) joins its label.
void add_group_clusters(const VariantReport& v, graph::DotDecoration& d) {
  for (std::size_t i = 0; i < v.groups.size(); ++i) {
    const FusionGroupReport& g = v.groups[i];
    const std::string label =
        "trace " + std::to_string(v.trace) + " group " + std::to_string(i + 1) + " (" + v.tier + ")\n" + g.expression;
    auto same = std::find_if(d.clusters.begin(), d.clusters.end(),
                             [&](const graph::DotCluster& c) { return c.nodes == g.nodes; });
    if (same != d.clusters.end()) same->label += "\n" + label;
    else d.clusters.push_back({label, g.nodes});
  }
}

}  // namespace

std::string Model::to_dot() const {
  graph::DotDecoration d;
  for (const AnchorReport& a : jit_report().anchors)
    for (const VariantReport& v : a.variants) {
      add_group_clusters(v, d);
      for (const GuardReport& g : v.guards)
        for (std::string& name : guarded_names(g.condition))
          if (std::find(d.marked_values.begin(), d.marked_values.end(), name) == d.marked_values.end())
            d.marked_values.push_back(std::move(name));
    }
  return graph::export_dot(*impl_->graph, d);
}

}  // namespace canary
