// Options: what a Runtime may do and the limits it enforces on every call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "canary/cost.h"

namespace canary {

// How hot code is compiled. Every JIT failure (unsupported op, code
// generation error, out of executable memory, injected fault) falls back to
// the interpreter and is reported as an event, never as an error.
struct JitOptions {
  // Compile hot traces at all. Off: the interpreter runs every call.
  bool enabled = true;
  // Anchor visits (calls for the graph entry, iterations for a loop header)
  // before a trace is recorded.
  std::uint64_t hot_threshold = 8;
  // Cost-weighted tier-up: an anchor whose interpreted visits have taken
  // this many microseconds in all is hot before hot_threshold visits (a
  // compile costs about a millisecond, so a region that takes milliseconds
  // per call compiles after its first). 0: visits only. At most 2^40.
  std::uint64_t hot_time_us = 2000;
  // Compile on the calling thread (deterministic; tests). Otherwise a
  // background queue compiles while the interpreter keeps serving calls.
  bool synchronous = false;
  // Exact: transcendentals within 4 ulp of libm. Fast: the looser documented
  // bounds of jit/x86/vector_math.h.
  bool fast_math = false;
  // Value canaries: compiled kernels report NaN/Inf appearing in their
  // outputs as events (the values still flow, as in the interpreter).
  bool value_canaries = false;
  // Range canaries: compiled elementwise kernels also report outputs outside
  // the range recorded for them (the finite values the recording call saw,
  // widened by range_margin times the larger of their span and magnitude on
  // each side) as events, e.g. a sensor drifting out of its trained range.
  // The values still flow; NaN is the non-finite canary's, not this one's.
  // Loop traces carry no ranges (values carried across iterations grow).
  // range_margin must be finite and at least 0.
  bool range_canaries = false;
  // Contraction epilogues: Relu, LeakyRelu, Clip and Abs right after a
  // MatMul, Gemm or Conv in a compiled trace (and a MatMul's residual Add,
  // x W + r with r of the product's shape, before them) run inside the
  // oneDNN call as post-ops on results of epilogue_min_elements f32
  // elements or more, saving a pass over the result (smaller results stay in cache and take the fused
  // kernel after the call, which is then cheaper). Off: always the fused
  // kernel after the call. epilogue_min_elements 0: the core's L2 cache size
  // in floats (as sysconf reports it; 2^18 when it reports none).
  bool contraction_epilogues = true;
  std::int64_t epilogue_min_elements = 0;
  // Loop traces compute the steps that read only loop invariants (model
  // constants, values from outside the loop) on the first iteration of each
  // run and reuse their results on the next iterations, e.g. a weight
  // Transpose or a sum of two bias constants inside an exported LSTM loop.
  bool hoist_loop_invariants = true;
  // Non-adjacent fusion: an elementwise op joins an earlier fused group of
  // its shape even when other ops were recorded in between, if none of them
  // needs the group's earlier ops (those then run later, at the op's place;
  // an exit in between computes them first). Off: groups are runs of
  // adjacent ops only.
  bool nonadjacent_fusion = true;
  // Side traces: a branch exit that keeps firing gets its own compiled trace,
  // recorded from the exit's pc along the direction the traffic takes to the
  // region's end (in a loop body, to the end of the iteration). The exit then
  // continues in it instead of in the interpreter. Each anchor keeps at most
  // max_side_traces_per_anchor (the least recently used goes; 0 turns them
  // off). Side traces spend the anchor's compile budget like retraces. Off,
  // or where one cannot be built: the next trace is cut before the branch.
  bool side_traces = true;
  int max_side_traces_per_anchor = 4;
  // Short-row tiles: a fused elementwise group whose rows are a few floats
  // long (x f32[R, 5] with a per-channel f32[5] bias) runs them as rows of
  // a few hundred floats, reading each per-row input from a buffer of
  // repeated copies, when every input either spans the whole tensor or
  // repeats with the row. Decided per call from its shapes; the kernel is
  // the same. Off: every call runs row by row.
  bool short_row_tiles = true;
  double range_margin = 0.5;
  // Per anchor: most variants installed at once, and most compiles ever
  // attempted before the anchor waits out a penalty (which grows with each
  // failure and decays with time, so a long-running service recovers).
  int max_variants_per_anchor = 4;
  int max_compiles_per_anchor = 8;
  // Compiled traces installed at once in one model, all anchors together
  // (each anchor also keeps at most max_variants_per_anchor; side traces are
  // bounded per anchor by max_side_traces_per_anchor alone); installing one
  // more evicts the model's least recently used variant (an evicted anchor's region is
  // then interpreted by the sessions already running).
  int max_traces = 256;
  // Traces waiting for the background compile thread, all anchors together.
  // A trace recorded while the queue is full is dropped (a fallback event):
  // its region stays interpreted and is recorded again after a penalty.
  int max_compile_queue = 64;
  // Vector tier: "auto" (CPU detection), "avx512", "avx2" or "scalar".
  std::string isa = "auto";
  // Where fused elementwise groups, row kernels (reductions, Softmax and
  // LayerNorm along the last axis, with their prologues) and MatMul/Gemm
  // products run. "cpu": the x86 kernels and oneDNN. "gpu": on an NVIDIA
  // GPU through the CUDA backend when one is usable (the driver is loaded
  // at run time), each step its device can run, with its inputs copied over
  // and its outputs back at the step's (or device chain's) boundary; where
  // no GPU is usable, a Fallback event says why and everything runs on the
  // CPU. "auto": the cost model (Options::cost, which must be enabled)
  // places each trace by measuring both; until its trial decides, it runs
  // on the CPU. A call too large for one launch, or a product the device
  // call does not cover (jit/README.md), runs on the CPU alone. A step that
  // fails on the GPU (a module that does not load, a failed launch, out of
  // device memory) finishes on the CPU, and its trace stays there
  // (JitStats::device_fallbacks).
  std::string device = "cpu";
  // Bytes of executable memory for compiled code, all sessions together.
  std::size_t code_cache_bytes = std::size_t{32} << 20;
  // Learned shape profile: loaded when the model loads (if the file exists)
  // and saved when the model is destroyed, so a restarted service starts warm.
  std::string profile_path;
  // Deprecated: use Options::fault_injection. "compile" makes every compile
  // of this model fail, "compile:N" the first N (counted per model). The
  // environment variable CANARY_JIT_FAULT has the same effect when this is empty.
  std::string fault_injection;
};

// The graph optimizer run at load (docs/graph-passes.md), like ONNX
// Runtime's levels. Off: the graph runs as imported. Basic: rewrites that
// change no output bit (no-op removal, constant folding, common
// subexpressions, dead nodes). All: Basic plus rewrites that round
// differently, within a few f32 ulps of each result (BatchNormalization
// folded into the Conv/Gemm before it or into a per-channel multiply-add,
// MatMul + bias Add as one Gemm). The fp64 reference session always runs the
// graph as imported, so it measures what the passes change.
enum class GraphOptimization { Off, Basic, All };

struct Options {
  // Largest single tensor a call may allocate; a larger request is an
  // Error(Resource) naming the node, never an out-of-memory crash.
  std::size_t max_tensor_bytes = std::size_t{16} << 30;
  // Tensor storage one Session may hold at once: the buffers it keeps
  // between calls plus every tensor a call allocates (outputs stop counting
  // once returned). A call that would go over is an Error(Resource) naming the
  // node and the tensor, and the session stays usable. Stats::peak_arena_bytes
  // shows what a workload needs.
  std::size_t max_arena_bytes = std::size_t{64} << 30;
  // Largest model Runtime::load accepts: nodes in all graphs together
  // (constants and initializers included), and levels of subgraph nesting
  // (at most 256). A larger model is an Error(Resource) naming the graph.
  std::size_t max_graph_nodes = 1'000'000;
  int max_graph_depth = 64;
  // Upper bound on the iterations of one Loop or Scan per call, so that a model
  // whose loop never terminates gets an Error(Resource) instead of hanging.
  std::int64_t max_loop_iterations = std::int64_t{1} << 24;
  // Reject NaN or Inf in floating-point inputs with an Error(Input) naming the
  // input and the first bad element. Off by default: sensor streams carry NaN
  // on purpose and models may handle it.
  bool reject_non_finite_inputs = false;
  // Threads used by the oneDNN kernels inside one call (a MatMul, Conv, LSTM,
  // ... may split its work); 0 = the library default (OMP_NUM_THREADS or the
  // core count). Set on the calling thread for the call only. An op too small
  // for a second thread to pay (under about 8 Mflop, 2^18 elements for
  // memory-bound ops, an LSTM/GRU step under 8 Mflop) runs on one thread
  // whatever this says; tiled 1-D convolutions split their tiles over the
  // threads.
  int intra_op_threads = 1;
  // With intra_op_threads above 1 (or 0 on a machine of several cores), a
  // call whose batch (dim 0 of every input) holds two or more samples runs
  // as that many contiguous slices of the batch at once, one per thread,
  // every op of a slice on its thread, and the outputs are joined along
  // dim 0: one parallel region for the whole call, instead of one per op
  // (most ops of a CNN or a TCN are too small to split on their own). Only
  // for models whose samples never meet (graph/batch_split.h: no op reduces,
  // sorts or reshapes across the batch; `canary inspect` says why not) and
  // only once a call is long enough to pay (the session's calls take 200 us
  // or more at that batch on one thread) with outputs small beside it; and,
  // with the cost model on, not while one of its trials is open.
  // Outputs agree with an unsplit call within f32 rounding: a slice may take
  // another kernel than the whole batch would.
  bool split_batch = true;
  // Run MatMul, Gemm, Conv, LSTM, GRU, pooling and normalisation on oneDNN
  // where it applies. Off: the reference kernels only (slower). oneDNN 2.6
  // leaves some of its generated kernels in pages that are writable and
  // executable; a deployment that requires strict W^X turns it off, and then
  // only Canary's own code (never writable and executable) is generated.
  bool use_onednn = true;
  // Per-tier wall-clock timers (Stats::time): where each call's time goes, by
  // interpreted op, compiled kernel call, fused group, row kernel and guards.
  // Costs two clock reads (~40 ns) per timed step, so it is off by default.
  bool collect_timings = false;
  // Fault injection (docs/RELIABILITY.md): comma-separated "point[:count]"
  // or "point@n", e.g. "compile,code-cache:3,kernel@2"; a count fails the
  // next `count` operations at that point, no count fails every one, "@n"
  // fails only the n-th (to reach one step of a compiled trace). Points: compile (trace
  // compilation), code-cache (executable memory), onednn (a oneDNN primitive's
  // creation), kernel (a kernel call of compiled code), compile-thread (starting
  // the background compile thread), alloc (a tensor allocation inside a call).
  // Empty: the environment variable CANARY_FAULT, same syntax, if set. The
  // configuration is process-wide: the Runtime constructor applies it, and the
  // last Runtime constructed with a non-empty spec wins. A malformed spec is an
  // Error(Input) from the constructor.
  std::string fault_injection;
  GraphOptimization graph_optimization = GraphOptimization::All;
  JitOptions jit;
  // How the JIT chooses among candidate variants: profile, weights, hard
  // limits, decision outputs and the shadow-run budget (docs/COST_MODEL.md).
  CostModelOptions cost;
};

}  // namespace canary
