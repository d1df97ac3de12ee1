// Shape streams for generated graphs: a seeded sequence of calls whose dims
// change mid-stream (a shape held for several calls, a new N, back to an
// earlier shape, dims 0 and 1, occasional large sizes), and the seeded input
// tensors of each call (uniform in [-2, 2], optionally with NaN/Inf injected).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "canary/canary.h"
#include "tests/jit_differential/random_graph.h"

namespace canary::differential {

// One call of a stream: the symbol values, the trip-count input and the seed of the values.
struct StreamCall {
  std::int64_t n = 1;
  std::int64_t c = 1;  // used only when the graph's C is symbolic
  std::int64_t t = 1;
  std::int64_t trip = 0;
  std::uint64_t value_seed = 0;
};

// What to put into input tensors besides uniform values.
struct ValueOptions {
  double non_finite_fraction = 0.0;  // share of elements replaced by NaN, +Inf or -Inf
};

// A stream of 6 to 20 calls for the graph (deterministic in seed).
std::vector<StreamCall> generate_shape_stream(const RandomGraph& graph, std::uint64_t seed);
// The concrete shape of an input in a call.
Shape input_shape(const InputSpec& input, const StreamCall& call);
// The input tensors of a call.
NamedTensors make_inputs(const RandomGraph& graph, const StreamCall& call, const ValueOptions& options = {});
// "N=3 C=4 T=2 trip=1" (only the symbols the graph uses).
std::string describe_call(const RandomGraph& graph, const StreamCall& call);

}  // namespace canary::differential
