// The graph_stream target's input: fuzz bytes decoded into the seed of a
// generated graph (tests/jit_differential/random_graph.h), the harness's
// settings and a short shape stream whose dims change mid-stream and reach
// the hostile-but-valid sizes: 0 and 1, and the largest values of the
// symbols' ranges.
//
// Byte layout (missing bytes read as 0, so every byte string is a plan):
//   bytes 0-7  graph seed, little-endian
//   byte  8    flags: bit 0 hot threshold 2 (else 1), bit 1 value canaries,
//              bit 2 NaN/Inf in 5% of the input elements, bits 3-4 the
//              vector tier (1 AVX2, 2 scalar, else the host's best), bit 5
//              fused groups on the host stand-in device (JitOptions::device)
//   byte  9    calls: 1 + byte % kMaxPlanCalls
//   per call   a step byte, then one dim byte per dim the step changes (N, C,
//              T in that order), then a trip-count byte and a values byte
// Step (step byte % 6): 0 keep the previous call's shape, 1 new N, 2 new C,
// 3 new T, 4 new N, C and T, 5 back to the first call's shape. The first call
// starts from N = C = T = 1, so its step decides which dims it sets.
// A dim byte d maps into the symbol's range [lo, hi]: d >= 0xF0 picks an edge
// (d % 4: lo, lo + 1, hi - 1, hi), 0xC0 <= d < 0xF0 spreads over the whole
// range, d < 0xC0 gives a small size lo + d % 8.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tests/jit_differential/differential_harness.h"
#include "tests/jit_differential/random_graph.h"

namespace canary::fuzz {

// At most this many calls per execution, to keep executions fast (and
// stream_budget.h bounds the elements they compute).
inline constexpr std::size_t kMaxPlanCalls = 6;

struct StreamPlan {
  std::uint64_t graph_seed = 0;
  differential::HarnessOptions options;
  std::vector<differential::StreamCall> calls;  // 1 to kMaxPlanCalls
};

// The plan of a byte string (layout above).
StreamPlan decode_stream_plan(std::string_view bytes);

// "hot threshold 1, value canaries off, non-finite 0.05: N=3 C=4 T=2 | N=0 ..."
// (a finding names the stream it ran; the harness's own replay hint names
// the generator's stream for the seed, which is a different one).
std::string describe_plan(const StreamPlan& plan, const differential::RandomGraph& graph);

// The size a dim byte selects in [lo, hi] (layout above).
std::int64_t decode_dim(std::uint8_t byte, std::int64_t lo, std::int64_t hi);

}  // namespace canary::fuzz
