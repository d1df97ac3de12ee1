// Stats: counters a Session keeps about the calls it ran.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "canary/cost.h"
#include "canary/tensor.h"

namespace canary {

struct ShapeCount {
  Shape shape;
  std::uint64_t count = 0;
};

struct InputShapes {
  std::string input;
  std::vector<ShapeCount> shapes;  // distinct shapes in first-seen order
  std::uint64_t other = 0;         // calls whose shape fell outside the tracked set
};

// What the JIT did for this session's calls (entries, exits) and for the
// model as a whole (compiles, code), as of the last call.
struct JitStats {
  std::uint64_t compiled_entries = 0;    // anchor visits that ran compiled code
  std::uint64_t guard_failures = 0;      // entries refused by a canary (region interpreted)
  std::uint64_t deopts = 0;              // side exits from inside compiled code to the interpreter
  std::uint64_t side_trace_entries = 0;  // side exits that continued in a side trace instead
  std::uint64_t value_canaries = 0;      // NaN/Inf or range canaries that fired
  std::uint64_t range_canaries = 0;      // of which range canaries (JitOptions::range_canaries)
  std::uint64_t tiled_fused_calls = 0;   // fused kernel calls that ran short rows as long tiles
                                         // (JitOptions::short_row_tiles)
  std::uint64_t device_fused_calls = 0;  // fused groups, row kernels and MatMul/Gemm products that ran
                                         // on the GPU (JitOptions::device)
  std::uint64_t device_bytes = 0;        // bytes those calls moved between host and GPU
  std::uint64_t device_chain_calls = 0;  // runs of consecutive GPU steps that ran as one call, their
                                         // intermediate values kept on the GPU
  std::uint64_t traces_recorded = 0;     // model-wide from here on
  std::uint64_t compiles = 0;
  std::uint64_t compile_failures = 0;
  std::uint64_t retraces = 0;
  std::uint64_t compiles_dropped = 0;     // traces dropped because the compile queue was full
  std::uint64_t traces_evicted = 0;      // variants evicted by JitOptions::max_traces
  std::uint64_t device_fallbacks = 0;    // variants whose GPU run failed, so their groups run on the CPU
  std::uint64_t variants_installed = 0;  // currently installed, all anchors
  std::uint64_t side_traces_installed = 0;  // currently installed, all anchors (JitOptions::side_traces)
  std::uint64_t code_bytes = 0;          // machine code of installed variants
  double compile_ms = 0.0;               // total compile time
};

// One row of the per-tier timers: wall time spent in one tier on one op kind.
struct TierTime {
  std::string tier;  // "interpreted", "compiled: kernel call", "compiled: fused group", "compiled: row kernel",
                     // "compiled: guards"
  std::string op;    // the op kind ("Conv", "LSTM") for interpreted ops and kernel calls; empty otherwise
  double total_us = 0.0;
  std::uint64_t count = 0;
};

// Where the session's calls spent their time (Options::collect_timings).
// `calls_us` is the wall time inside Session::run; what the tiers do not
// cover is dispatch, input checks, buffer management and result assembly.
// A call run as batch slices (Options::split_batch) adds every slice's
// time, each on its own thread, so the tiers may then add up to more than
// `calls_us` (thread time against wall time).
struct TimeStats {
  bool collected = false;
  double calls_us = 0.0;
  std::vector<TierTime> tiers;  // largest total first
};

struct Stats {
  std::uint64_t calls = 0;                   // successful run() calls
  std::uint64_t failed_calls = 0;            // run() calls that threw canary::Error
  std::uint64_t instructions_executed = 0;   // bytecode instructions, all calls
  std::uint64_t distinct_shapes = 0;         // distinct output shapes seen, summed over instructions
  // Tensor storage the session holds between calls (its reused buffers), and
  // the most it held at once during a call: what Options::max_arena_bytes bounds.
  std::size_t arena_bytes = 0;
  std::size_t peak_arena_bytes = 0;
  std::uint64_t split_calls = 0;             // calls run as batch slices on several threads (Options::split_batch)
  std::vector<InputShapes> input_shapes;     // per model input
  JitStats jit;
  TimeStats time;
  CostStats cost;                            // shadow runs of the cost model (Options::cost)
};

}  // namespace canary
