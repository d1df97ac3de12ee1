// Seeded shape streams and the input tensors of each call.
#include "tests/jit_differential/shape_stream.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tests/jit_differential/seeded_rng.h"

namespace canary::differential {
namespace {

// A batch size: mostly 1..8, sometimes exactly 0 or 1, sometimes large.
std::int64_t random_n(SeededRng& rng) {
  double r = rng.uniform(0.0, 1.0);
  if (r < 0.07) return 0;
  if (r < 0.17) return 1;
  if (r < 0.30) return rng.range(17, 300);
  return rng.range(2, 8);
}

// A C or T size in [1, max]: mostly small, sometimes 1, sometimes the largest ones.
std::int64_t random_small(SeededRng& rng, std::int64_t max) {
  double r = rng.uniform(0.0, 1.0);
  if (r < 0.12) return 1;
  if (r < 0.22) return rng.range(max - 2, max);
  return rng.range(2, std::min<std::int64_t>(6, max));
}

// A new shape: one dim changed (usually N), or all of them.
StreamCall next_shape(SeededRng& rng, const StreamCall& prev, bool first) {
  StreamCall c = prev;
  int which = first ? 3 : static_cast<int>(rng.range(0, 4));
  if (which == 0 || which >= 3) c.n = random_n(rng);
  if (which == 1 || which >= 3) c.c = random_small(rng, kMaxC);
  if (which == 2 || which >= 3) c.t = random_small(rng, kMaxT);
  return c;
}

// True when the graph has an i64 trip-count input.
bool has_trip_input(const RandomGraph& graph) {
  for (const InputSpec& in : graph.inputs)
    if (in.dtype == DType::I64) return true;
  return false;
}

}  // namespace

// Phases of 1 to 5 calls at one shape; each phase takes a new shape or returns to an earlier one.
std::vector<StreamCall> generate_shape_stream(const RandomGraph& graph, std::uint64_t seed) {
  SeededRng rng(seed);
  std::size_t count = static_cast<std::size_t>(rng.range(6, 20));
  std::vector<StreamCall> shapes, calls;
  StreamCall cur;
  while (calls.size() < count) {
    bool first = shapes.empty();
    if (!first && rng.chance(0.35)) cur = shapes[rng.index(shapes.size())];
    else cur = next_shape(rng, cur, first);
    shapes.push_back(cur);
    std::int64_t repeat = first ? rng.range(2, 5) : rng.range(1, 4);
    for (std::int64_t i = 0; i < repeat && calls.size() < count; ++i) {
      StreamCall call = cur;
      call.trip = has_trip_input(graph) ? rng.range(0, kMaxTrip) : 0;
      call.value_seed = rng.next();
      calls.push_back(call);
    }
  }
  return calls;
}

// The concrete shape of an input in a call.
Shape input_shape(const InputSpec& input, const StreamCall& call) {
  Shape shape;
  for (const std::string& d : input.dims) {
    if (d == "N") shape.push_back(call.n);
    else if (d == "C") shape.push_back(call.c);
    else if (d == "T") shape.push_back(call.t);
    else shape.push_back(std::stoll(d));
  }
  return shape;
}

// Uniform values in [-kInputRange, kInputRange], some replaced by NaN/Inf when asked.
NamedTensors make_inputs(const RandomGraph& graph, const StreamCall& call, const ValueOptions& options) {
  SeededRng rng(call.value_seed);
  NamedTensors out;
  for (const InputSpec& in : graph.inputs) {
    if (in.dtype == DType::I64) {
      out.emplace(in.name, Tensor::scalar<std::int64_t>(call.trip));
      continue;
    }
    Tensor t = Tensor::empty(DType::F32, input_shape(in, call));
    float* p = t.data<float>();
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      p[i] = static_cast<float>(rng.uniform(-kInputRange, kInputRange));
      if (options.non_finite_fraction > 0 && rng.chance(options.non_finite_fraction)) {
        static const float kSpecial[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                                         -std::numeric_limits<float>::infinity()};
        p[i] = kSpecial[rng.index(3)];
      }
    }
    out.emplace(in.name, std::move(t));
  }
  return out;
}

// "N=3 C=4 T=2 trip=1" (only the symbols the graph uses).
std::string describe_call(const RandomGraph& graph, const StreamCall& call) {
  bool uses_t = false;
  for (const InputSpec& in : graph.inputs)
    for (const std::string& d : in.dims) uses_t = uses_t || d == "T";
  std::string s = "N=" + std::to_string(call.n);
  if (graph.symbolic_c) s += " C=" + std::to_string(call.c);
  if (uses_t) s += " T=" + std::to_string(call.t);
  if (has_trip_input(graph)) s += " trip=" + std::to_string(call.trip);
  return s;
}

}  // namespace canary::differential
