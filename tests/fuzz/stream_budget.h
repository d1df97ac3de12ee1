// The graph_stream target's time bound. A generated graph can broadcast
// [N, 1, T] against [N, 1] into [N, N, T], so input sizes say little about
// the work: with N = 4096 one such call computed 134 million elements per
// value and took 20 s. The budget counts the elements of every value of the
// graph, as shape inference typed them, for each call's dims.
#pragma once

#include <cstdint>

#include "graph/graph.h"
#include "tests/fuzz/stream_plan.h"

namespace canary::fuzz {

// Elements over all values of all calls of one execution: room for one call
// with every dim at its maximum on a 3-D graph of five values, or for a few
// calls at N = 4096, C = 12 on a 2-D graph (about 40 executions a second in
// the fuzz build; 2^22 gave 26).
inline constexpr std::int64_t kMaxPlanElements = std::int64_t{1} << 21;

// Elements of every value of g (and of its subgraphs, once per iteration:
// max(T, trip count) times) for the dims of a call.
std::int64_t call_elements(const graph::Graph& g, const differential::StreamCall& call);

// Lowers N in each call that would take the plan past kMaxPlanElements to
// the largest N that still fits (maybe 0); other dims stay as decoded.
void fit_plan_to_budget(StreamPlan& plan, const graph::Graph& g);

}  // namespace canary::fuzz
