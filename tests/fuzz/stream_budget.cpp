// Counting the elements a call computes, and lowering N to keep a plan within budget.
#include "tests/fuzz/stream_budget.h"

#include <algorithm>
#include <memory>
#include <variant>

namespace canary::fuzz {
namespace {

// The elements of a value's type under the bindings (an unbound dim counts as 1).
std::int64_t value_elements(const graph::ValueType& type, const graph::Bindings& bindings) {
  std::int64_t count = 1;
  for (const graph::Dim& d : type.shape) count *= std::max<std::int64_t>(0, d.evaluate(bindings).value_or(1));
  return count;
}

// Elements of every value of g and its subgraphs, subgraph values `iterations` times.
std::int64_t graph_elements(const graph::Graph& g, const graph::Bindings& bindings, std::int64_t iterations) {
  std::int64_t total = 0;
  for (const graph::ValueInfo& v : g.values()) total += value_elements(v.type, bindings);
  for (const graph::Node& node : g.nodes())
    for (const auto& attr : node.attrs)
      if (const auto* sub = std::get_if<std::shared_ptr<graph::Graph>>(&attr.second))
        total += iterations * graph_elements(**sub, bindings, iterations);
  return total;
}

}  // namespace

std::int64_t call_elements(const graph::Graph& g, const differential::StreamCall& call) {
  const graph::Bindings bindings = {{"N", call.n}, {"C", call.c}, {"T", call.t}};
  return graph_elements(g, bindings, std::max<std::int64_t>({1, call.t, call.trip}));
}

void fit_plan_to_budget(StreamPlan& plan, const graph::Graph& g) {
  std::int64_t left = kMaxPlanElements;
  for (differential::StreamCall& call : plan.calls) {
    // The elements grow with N, so the largest N that fits is a binary search away.
    std::int64_t lo = 0, hi = call.n;
    while (lo < hi) {
      differential::StreamCall probe = call;
      probe.n = lo + (hi - lo + 1) / 2;
      if (call_elements(g, probe) <= left) lo = probe.n;
      else hi = probe.n - 1;
    }
    call.n = lo;
    left -= call_elements(g, call);
  }
}

}  // namespace canary::fuzz
