// Decoding fuzz bytes into a graph seed, harness settings and a shape stream.
#include "tests/fuzz/stream_plan.h"

#include <algorithm>

#include "tests/fuzz/fuzz_byte_reader.h"
#include "tests/jit_differential/random_graph.h"
#include "tests/jit_differential/seeded_rng.h"
#include "tests/jit_differential/shape_stream.h"

namespace canary::fuzz {
namespace {

using differential::StreamCall;

// What a step byte does to the previous call's shape.
enum class Step { Keep, NewN, NewC, NewT, NewAll, First };

// The harness settings of the flags byte.
differential::HarnessOptions decode_options(std::uint8_t flags) {
  differential::HarnessOptions o;
  o.hot_threshold = (flags & 1) ? 2 : 1;
  o.value_canaries = (flags & 2) != 0;
  o.values.non_finite_fraction = (flags & 4) ? 0.05 : 0.0;
  static const char* const kIsas[] = {"auto", "avx2", "scalar", "auto"};
  o.isa = kIsas[(flags >> 3) & 3];
  o.device = (flags & 0x20) != 0;
  return o;
}

// Applies one step to the shape, reading the dim bytes it needs.
StreamCall apply_step(FuzzByteReader& in, Step step, const StreamCall& prev, const StreamCall& first) {
  if (step == Step::First) return first;
  StreamCall c = prev;
  if (step == Step::NewN || step == Step::NewAll) c.n = decode_dim(in.next_byte(), 0, differential::kMaxN);
  if (step == Step::NewC || step == Step::NewAll) c.c = decode_dim(in.next_byte(), 1, differential::kMaxC);
  if (step == Step::NewT || step == Step::NewAll) c.t = decode_dim(in.next_byte(), 1, differential::kMaxT);
  return c;
}

}  // namespace

std::string describe_plan(const StreamPlan& plan, const differential::RandomGraph& graph) {
  std::string s = "isa " + plan.options.isa + (plan.options.device ? ", groups on the stand-in device" : "") +
                  ", hot threshold " + std::to_string(plan.options.hot_threshold) +
                  ", value canaries " +
                  (plan.options.value_canaries ? "on" : "off") + ", non-finite " +
                  std::to_string(plan.options.values.non_finite_fraction) + ":";
  for (std::size_t i = 0; i < plan.calls.size(); ++i)
    s += (i ? " | " : " ") + differential::describe_call(graph, plan.calls[i]);
  return s;
}

std::int64_t decode_dim(std::uint8_t byte, std::int64_t lo, std::int64_t hi) {
  if (byte >= 0xF0) {
    const std::int64_t edges[] = {lo, lo + 1, hi - 1, hi};
    return std::clamp(edges[byte % 4], lo, hi);
  }
  if (byte >= 0xC0) return lo + (hi - lo) * (byte - 0xC0) / (0xEF - 0xC0);
  return std::min(hi, lo + byte % 8);
}

StreamPlan decode_stream_plan(std::string_view bytes) {
  FuzzByteReader in(bytes);
  StreamPlan plan;
  plan.graph_seed = in.next_u64();
  plan.options = decode_options(in.next_byte());
  const std::size_t count = 1 + in.next_byte() % kMaxPlanCalls;
  StreamCall shape;
  for (std::size_t i = 0; i < count; ++i) {
    const auto step = static_cast<Step>(in.next_byte() % 6);
    shape = apply_step(in, step, shape, plan.calls.empty() ? StreamCall{} : plan.calls.front());
    StreamCall call = shape;
    call.trip = in.next_byte() % (differential::kMaxTrip + 1);
    call.value_seed = differential::SeededRng::mix(plan.graph_seed + 0x100 * i + in.next_byte());
    plan.calls.push_back(call);
  }
  return plan;
}

}  // namespace canary::fuzz
