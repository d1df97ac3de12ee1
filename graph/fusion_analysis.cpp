// Fusion analysis on a Boost.Graph DAG (see fusion_analysis.h).
#include "graph/fusion_analysis.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/two_bit_color_map.hpp>

namespace canary::graph {

using DependenceGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
using Operation = boost::graph_traits<DependenceGraph>::vertex_descriptor;

struct SequenceDependences::Dag {
  explicit Dag(std::size_t operations) : graph(operations) {}
  DependenceGraph graph;
};

namespace {

// The window a sinking question looks at: operations before the last member
// (what comes after it is not overtaken, so its dependences do not matter).
struct BeforeLast {
  Operation last = 0;
  bool operator()(Operation v) const { return v < last; }
};

// Records every operation the search reaches.
class Reached : public boost::default_bfs_visitor {
 public:
  explicit Reached(std::vector<Operation>& out) : out_(&out) {}
  template <typename Graph>
  void discover_vertex(Operation v, const Graph&) const {
    out_->push_back(v);
  }

 private:
  std::vector<Operation>* out_;
};

}  // namespace

SequenceDependences::SequenceDependences(std::size_t operations) : dag_(std::make_unique<Dag>(operations)) {}

SequenceDependences::~SequenceDependences() = default;
SequenceDependences::SequenceDependences(SequenceDependences&&) noexcept = default;
SequenceDependences& SequenceDependences::operator=(SequenceDependences&&) noexcept = default;

std::size_t SequenceDependences::size() const { return boost::num_vertices(dag_->graph); }

void SequenceDependences::add(std::size_t before, std::size_t after) {
  if (!(before < after && after < size()))
    throw std::invalid_argument("SequenceDependences::add: dependence " + std::to_string(before) + " -> " +
                                std::to_string(after) + " does not follow a sequence of " + std::to_string(size()) +
                                " operations");
  boost::add_edge(before, after, dag_->graph);
}

bool SequenceDependences::can_sink_to_last(std::span<const std::size_t> members) const {
  if (members.empty() || members.back() >= size() || !std::is_sorted(members.begin(), members.end()))
    throw std::invalid_argument("SequenceDependences::can_sink_to_last: members must be ascending operations");
  const Operation last = members.back();
  // Every operation a sunk member reaches before the last one runs before
  // the unit does; it must be a member too.
  const boost::filtered_graph<DependenceGraph, boost::keep_all, BeforeLast> window(dag_->graph, boost::keep_all(),
                                                                                 BeforeLast{last});
  std::vector<Operation> reached;
  boost::queue<Operation> queue;
  boost::two_bit_color_map<> colors(size());
  std::vector<Operation> sources(members.begin(), members.end() - 1);
  boost::breadth_first_visit(window, sources.begin(), sources.end(), queue, Reached(reached), colors);
  return std::all_of(reached.begin(), reached.end(), [&](Operation v) {
    return std::binary_search(members.begin(), members.end(), static_cast<std::size_t>(v));
  });
}

}  // namespace canary::graph
