// Graphviz DOT export: the graph (and its subgraphs) as a Boost.Graph, written
// with boost::write_graphviz and custom writers; clusters go in the graph
// property writer. Boost.Graph stays in this one translation unit.
#include "graph/dot_export.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

// GCC 12 reports false (maybe-)uninitialized warnings inside Boost's
// boost::optional members: at -O2 in the edge iterator write_graphviz walks,
// and with sanitizers in named_graph's vertex lookup.
#ifndef __clang__  // clang has no -Wmaybe-uninitialized (and does not warn here)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphviz.hpp>

namespace canary::graph {

namespace {

struct VertexProps {
  std::string name;   // node display name or value name
  std::string label;
  std::string attrs;  // extra DOT attributes: shape, style, colours
  std::size_t scope = 0;
  bool is_node = false;
};

struct EdgeProps {
  std::string label;
  bool marked = false;   // carries a guarded value
  bool capture = false;  // a subgraph reading an outer value
};

using DotGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, VertexProps, EdgeProps>;
using Vertex = DotGraph::vertex_descriptor;

// A graph or subgraph: drawn as a cluster except the root.
struct Scope {
  std::string label;
  std::vector<Vertex> vertices;
  std::vector<std::size_t> children;   // nested scopes
  std::vector<std::size_t> clusters;   // decoration clusters drawn here
};

// A DOT string literal: quotes and backslashes escaped, newlines as \n.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') out += "\\n";
    else out += c;
  }
  return out + "\"";
}

// The name the bytecode gives a node: its name, else its first output's name, else its op.
std::string node_display_name(const Graph& g, const Node& n) {
  if (!n.name.empty()) return n.name;
  for (ValueId v : n.outputs)
    if (v.valid()) return g.value(v).name;
  return std::string(op_name(n.op));
}

class DotBuilder {
 public:
  explicit DotBuilder(const DotDecoration& d)
      : decoration_(d), marked_(d.marked_values.begin(), d.marked_values.end()) {}

  // Builds the root graph, then places the decoration clusters.
  void build(const Graph& g) {
    scopes_.push_back({g.name, {}, {}, {}});
    add_scope(g, 0, [](ValueId) { return std::optional<Vertex>(); });
    place_clusters();
  }

  // Writes the DOT text.
  std::string write() const {
    std::ostringstream os;
    boost::write_graphviz(
        os, dot_,
        [this](std::ostream& out, Vertex v) { out << "[label=" << quoted(dot_[v].label) << dot_[v].attrs << "]"; },
        [this](std::ostream& out, DotGraph::edge_descriptor e) { write_edge(out, dot_[e]); },
        [this](std::ostream& out) { write_header(out); });
    return os.str();
  }

 private:
  using OuterSource = std::function<std::optional<Vertex>(ValueId)>;

  Vertex add_vertex(std::size_t scope, std::string name, std::string label, std::string attrs, bool is_node) {
    const Vertex v = boost::add_vertex(VertexProps{std::move(name), std::move(label), std::move(attrs), scope, is_node}, dot_);
    scopes_[scope].vertices.push_back(v);
    return v;
  }

  // A graph input (or subgraph parameter): red and doubled when guarded.
  Vertex add_input(std::size_t scope, const ValueInfo& info) {
    const bool marked = marked_.count(info.name) > 0;
    return add_vertex(scope, info.name, info.name + "\n" + info.type.to_string() + (marked ? "\n(guarded)" : ""),
                      marked ? ", shape=ellipse, color=red, penwidth=2, peripheries=2" : ", shape=ellipse", false);
  }

  // Adds the vertices and edges of one graph; recurses into subgraph attributes.
  void add_scope(const Graph& g, std::size_t scope, const OuterSource& outer) {
    std::map<std::uint32_t, Vertex> source;
    std::set<std::uint32_t> captured;
    for (ValueId v : g.inputs()) source[v.index] = add_input(scope, g.value(v));
    for (ValueId v : g.constants())
      source[v.index] = add_vertex(scope, g.value(v).name, "const " + g.value(v).name + "\n" + g.value(v).type.to_string(),
                                   ", shape=note, style=filled, fillcolor=gray95, fontsize=9", false);
    for (const Capture& c : g.captures())
      if (std::optional<Vertex> from = outer(c.outer)) {
        source[c.local.index] = *from;
        captured.insert(c.local.index);
      }
    std::vector<Vertex> node_vertex;
    for (const Node& n : g.nodes()) {
      const bool control = std::any_of(n.attrs.begin(), n.attrs.end(),
                                       [](const auto& a) { return attr_type_of(a.second) == AttrType::Graph; });
      const Vertex v = add_vertex(scope, node_display_name(g, n), node_display_name(g, n) + "\n" + std::string(op_name(n.op)),
                                  control ? ", shape=box3d" : ", shape=box", true);
      node_vertex.push_back(v);
      for (ValueId out : n.outputs)
        if (out.valid()) source[out.index] = v;
    }
    const OuterSource here = [&](ValueId v) -> std::optional<Vertex> {
      auto it = source.find(v.index);
      return it == source.end() ? std::nullopt : std::optional<Vertex>(it->second);
    };
    for (std::size_t i = 0; i < g.nodes().size(); ++i) {
      const Node& n = g.nodes()[i];
      for (ValueId in : n.inputs) add_value_edge(g, in, source, captured, node_vertex[i]);
      for (const auto& [attr, value] : n.attrs)
        if (const auto* body = std::get_if<std::shared_ptr<Graph>>(&value); body && *body)
          add_child_scope(**body, scope, std::string(op_name(n.op)) + " '" + node_display_name(g, n) + "' " + attr, here);
    }
    for (ValueId out : g.outputs()) {
      const Vertex v = add_vertex(scope, g.value(out).name, "output " + g.value(out).name + "\n" + g.value(out).type.to_string(),
                                  ", shape=ellipse, style=bold", false);
      add_value_edge(g, out, source, captured, v);
    }
  }

  void add_child_scope(const Graph& body, std::size_t parent, std::string label, const OuterSource& outer) {
    const std::size_t scope = scopes_.size();
    scopes_.push_back({std::move(label), {}, {}, {}});
    scopes_[parent].children.push_back(scope);
    add_scope(body, scope, outer);
  }

  // An edge carrying value `v` from its source to `to` (none when v has no source).
  void add_value_edge(const Graph& g, ValueId v, const std::map<std::uint32_t, Vertex>& source,
                      const std::set<std::uint32_t>& captured, Vertex to) {
    if (!v.valid()) return;
    auto it = source.find(v.index);
    if (it == source.end()) return;
    const ValueInfo& info = g.value(v);
    const bool marked = marked_.count(info.name) > 0 && !info.constant;  // guards on constants always pass
    boost::add_edge(it->second, to, EdgeProps{info.name, marked, captured.count(v.index) > 0}, dot_);
  }

  // Puts each decoration cluster in the scope of its first node; a node joins one cluster only.
  void place_clusters() {
    std::multimap<std::string, Vertex> nodes_by_name;
    for (Vertex v : boost::make_iterator_range(boost::vertices(dot_)))
      if (dot_[v].is_node) nodes_by_name.emplace(dot_[v].name, v);
    cluster_members_.resize(decoration_.clusters.size());
    for (std::size_t c = 0; c < decoration_.clusters.size(); ++c) {
      std::optional<std::size_t> scope;
      for (const std::string& name : decoration_.clusters[c].nodes)
        for (auto [it, end] = nodes_by_name.equal_range(name); it != end; ++it) {
          const Vertex v = it->second;
          if (in_cluster_.count(v) || (scope && dot_[v].scope != *scope)) continue;
          scope = dot_[v].scope;
          in_cluster_.insert(v);
          cluster_members_[c].push_back(v);
          break;
        }
      if (scope) scopes_[*scope].clusters.push_back(c);
    }
  }

  void write_edge(std::ostream& out, const EdgeProps& e) const {
    out << "[label=" << quoted(e.label);
    if (e.marked) out << ", color=red, fontcolor=red, penwidth=2";
    if (e.capture) out << ", style=dashed";
    out << "]";
  }

  void write_header(std::ostream& out) const {
    out << "label=" << quoted("graph " + scopes_[0].label + " (boxes: fused groups; red: guarded values)")
        << ";\nlabelloc=t;\nrankdir=TB;\nnode [fontname=\"Helvetica\", fontsize=11];\n"
        << "edge [fontname=\"Helvetica\", fontsize=9];\n";
    write_scope_contents(out, 0);
  }

  // The clusters, loose vertices (non-root scopes only) and child scopes of one scope.
  void write_scope_contents(std::ostream& out, std::size_t scope) const {
    for (std::size_t c : scopes_[scope].clusters) {
      out << "subgraph cluster_fused_" << c << " {\nlabel=" << quoted(decoration_.clusters[c].label)
          << ";\nstyle=filled;\nfillcolor=\"#e8f0ff\";\ncolor=\"#3060c0\";\n";
      for (Vertex v : cluster_members_[c]) out << v << ";\n";
      out << "}\n";
    }
    if (scope != 0)
      for (Vertex v : scopes_[scope].vertices)
        if (!in_cluster_.count(v)) out << v << ";\n";
    for (std::size_t child : scopes_[scope].children) {
      out << "subgraph cluster_scope_" << child << " {\nlabel=" << quoted(scopes_[child].label)
          << ";\nstyle=dashed;\ncolor=gray40;\n";
      write_scope_contents(out, child);
      out << "}\n";
    }
  }

  const DotDecoration& decoration_;
  std::set<std::string> marked_;
  DotGraph dot_;
  std::vector<Scope> scopes_;
  std::vector<std::vector<Vertex>> cluster_members_;
  std::set<Vertex> in_cluster_;
};

}  // namespace

std::string export_dot(const Graph& graph, const DotDecoration& decoration) {
  DotBuilder builder(decoration);
  builder.build(graph);
  return builder.write();
}

}  // namespace canary::graph
