// Node order of an ONNX graph: the names each node reads (with the free names
// of its subgraphs), a stable Kahn topological sort, and cycle reporting.
#include <map>
#include <queue>

#include "graph/onnx_import_internal.h"

namespace canary::graph::onnx_import {
namespace {

// The names a graph defines itself: inputs, initializers, node outputs.
std::set<std::string> defined_names(const onnx::GraphProto& graph) {
  std::set<std::string> defined;
  for (const auto& v : graph.input()) defined.insert(v.name());
  for (const auto& t : graph.initializer()) defined.insert(t.name());
  for (const auto& n : graph.node())
    for (const std::string& out : n.output())
      if (!out.empty()) defined.insert(out);
  return defined;
}

// Every name a node reads: its inputs and its subgraphs' free names.
std::set<std::string> names_read_by(const onnx::NodeProto& node, int depth) {
  std::set<std::string> read;
  for (const std::string& in : node.input())
    if (!in.empty()) read.insert(in);
  for (const auto& a : node.attribute()) {
    if (!a.has_g()) continue;
    // Protobuf's recursion limit already bounds the nesting to a little over
    // the configured depth (import_graph reports it by name); the ceiling
    // keeps this walk bounded whatever parsed the message.
    check_nesting_depth(ImportLimits{.max_depth = kMaxImportDepthCeiling}, depth + 1, describe_node(node));
    std::set<std::string> inner = free_names(a.g(), depth + 1);
    read.insert(inner.begin(), inner.end());
  }
  return read;
}

// Producer index of every node output; duplicates are errors.
std::map<std::string, int> producers(const onnx::GraphProto& graph) {
  std::map<std::string, int> by_name;
  std::set<std::string> outer_defined;
  for (const auto& v : graph.input()) outer_defined.insert(v.name());
  for (const auto& t : graph.initializer()) outer_defined.insert(t.name());
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const std::string& out : graph.node(i).output()) {
      if (out.empty()) continue;
      if (outer_defined.count(out) != 0 || !by_name.emplace(out, i).second) {
        fail(describe_node(graph.node(i)) + ": output '" + out + "' is already defined in graph '" + graph.name() +
             "'");
      }
    }
  }
  return by_name;
}

// A node on a cycle among the unsorted nodes: walking to an unsorted
// predecessor for as many steps as there are nodes ends on the cycle.
int node_on_cycle(const std::vector<std::vector<int>>& preds, const std::vector<int>& pending, int start) {
  int current = start;
  for (std::size_t step = 0; step < preds.size(); ++step) {
    for (int p : preds[current]) {
      if (pending[p] > 0) {
        current = p;
        break;
      }
    }
  }
  return current;
}

}  // namespace

// Names read anywhere in the graph (and nested graphs) minus those it defines.
std::set<std::string> free_names(const onnx::GraphProto& graph, int depth) {
  std::set<std::string> defined = defined_names(graph);
  std::set<std::string> free;
  for (const auto& node : graph.node())
    for (const std::string& name : names_read_by(node, depth))
      if (defined.count(name) == 0) free.insert(name);
  for (const auto& out : graph.output())
    if (defined.count(out.name()) == 0) free.insert(out.name());
  return free;
}

// Kahn's algorithm, always taking the lowest ready index (stable order).
std::vector<int> topological_order(const onnx::GraphProto& graph, int depth) {
  std::map<std::string, int> by_name = producers(graph);
  int n = graph.node_size();
  std::vector<std::vector<int>> preds(n), succs(n);
  std::vector<int> pending(n, 0);
  for (int i = 0; i < n; ++i) {
    std::set<int> from;
    for (const std::string& name : names_read_by(graph.node(i), depth)) {
      auto it = by_name.find(name);
      if (it != by_name.end()) from.insert(it->second);
    }
    for (int p : from) {
      preds[i].push_back(p);
      succs[p].push_back(i);
    }
    pending[i] = static_cast<int>(from.size());
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int s : succs[i])
      if (--pending[s] == 0) ready.push(s);
  }
  if (static_cast<int>(order.size()) == n) return order;
  int stuck = 0;
  while (pending[stuck] == 0) ++stuck;
  fail(describe_node(graph.node(node_on_cycle(preds, pending, stuck))) + " is part of a cycle in graph '" +
       graph.name() + "'");
}

}  // namespace canary::graph::onnx_import
