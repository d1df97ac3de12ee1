// CompiledTrace: an installed variant — the plan, its emitted guard function
// and fused kernels — and the driver that runs it on an interpreter's frame.
// Immutable once built and shared by every session of the model; per-session
// state lives in TraceScratch.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "jit/fused_device.h"
#include "jit/plan.h"
#include "jit/prepared_call.h"
#include "vm/jit_hooks.h"
#include "vm/tier_timers.h"

namespace canary::jit {

// Per-session buffers of one compiled trace (scratch outputs for fused groups
// that write over their own inputs).
struct TraceScratch {
  std::vector<std::vector<Tensor>> alias_outputs;  // [fused step][output]
  std::vector<Tensor> moves;                       // parallel moves go through here
  std::vector<Tensor> row_outputs;                 // [row step], for outputs that alias an input
  std::vector<Tensor> contraction_outputs;         // [contraction step], likewise
  // [hoisted step][output]: results of a loop trace's hoisted steps, saved on
  // the run's first iteration (sharing the buffers) and dropped when it ends.
  std::vector<std::vector<Tensor>> hoisted;
  // [hoisted step][output]: the buffer a restore took out of the register,
  // handed back before the step that next writes the register (Plan::unparks).
  std::vector<std::vector<Tensor>> parked;
  // [hold slot]: handles kept before a step overwrote their registers, for
  // a sunk fused group that reads the earlier values (Step::holds). Kept
  // after the run: a swapping hold hands the buffer to the next run's step.
  std::vector<Tensor> held;
  // Copies of the repeating inputs' rows for a fused call that tiles short
  // rows (fused_tiling.h); reused by every such call.
  std::vector<float> tiles;
  // Per-row inputs expanded for one chunk of tiles (fused_tiling.h).
  std::vector<float> expanded;
  // The call of the fused group or row kernel running now, reused so that
  // an entry does not clear its arrays on every step (prepare_fused and
  // prepare_row write every field the kernel reads).
  PreparedCall call;
  // A device chain's prepared steps, the handles on their inputs kept while
  // it runs, and the steps as the device takes them (CompiledTrace::run_chain).
  std::vector<PreparedCall> chain_calls;
  std::vector<Tensor> chain_inputs;
  std::vector<ChainStep> chain_steps;
};

struct RunContext {
  std::int64_t max_loop_iterations = 0;
  std::size_t max_tensor_bytes = 0;    // Options::max_tensor_bytes (a stacked scan output's limit)
  int threads = 1;                     // for large fused groups; 1: the calling thread only
  vm::TierTimers* timers = nullptr;    // the session's timers (Options::collect_timings), or none
  std::uint64_t tick = 0;              // the model's use clock at this call (Engine::next_tick)
};

// The guard code's view of one register.
TensorHeader header_of(const Tensor& t);

enum class TraceOutcome : std::uint8_t {
  GuardFailed,  // an entry guard failed before anything ran: interpret the region
  Completed,    // ran to the region's end
  Exited,       // left through a side exit mid-trace (deopt)
};

struct TraceRun {
  TraceOutcome outcome = TraceOutcome::GuardFailed;
  vm::Pc resume_pc = vm::kNoPc;
  std::uint32_t exit = 0;           // GuardFailed/Exited: index into plan().exits
  bool value_canary = false;        // a fused kernel saw a non-finite output
  bool range_canary = false;        // a fused kernel wrote a value outside its recorded range
  std::uint32_t range_group = 0;    // range_canary: the first such group (index into plan().fused)
  std::uint32_t tiled_calls = 0;    // fused kernel calls that ran short rows as long tiles (fused_tiling.h)
  std::uint32_t device_calls = 0;   // fused groups, row kernels and products that ran on the device (on_device)
  std::uint64_t device_bytes = 0;   // bytes those calls moved between host and device
  std::uint32_t device_chains = 0;  // device chains that ran as one device call (device_chain.h)
  // This run's device failure turned the device off for the trace
  // (CompiledTrace::device_error says why); the x86 kernels ran instead.
  bool device_failed = false;
};

class CompiledTrace {
 public:
  struct Code {
    GuardFn guards = nullptr;
    std::vector<FusedFn> fused;              // per Plan::fused
    std::vector<FusedFn> fused_per_element;  // per Plan::fused: its per_element_spec's kernel, or null
    std::vector<RowFn> rows;                 // per Plan::rows
    std::shared_ptr<const FusedDevice> device;  // runs the groups placed on it (FusedStep::on_device)
    std::vector<std::shared_ptr<const void>> keep_alive;
    std::size_t code_bytes = 0;
  };

  CompiledTrace(std::uint32_t id, std::shared_ptr<const vm::Program> program, Plan plan, Code code,
                double compile_ms);

  // Runs the variant on the frame: entry guards, then the steps (iterating
  // for a loop trace). Kernel errors never escape: the driver exits at the
  // failing step so the interpreter re-runs it and reports the error itself.
  TraceRun run(const vm::FrameView& frame, const RunContext& ctx, TraceScratch& scratch) const;

  std::uint32_t id() const { return id_; }
  const Plan& plan() const { return plan_; }
  std::size_t code_bytes() const { return code_.code_bytes; }
  double compile_ms() const { return compile_ms_; }

  // Counters, shared by all sessions.
  std::uint64_t entries() const { return entries_.load(std::memory_order_relaxed); }
  // The model's use clock when a call last entered this variant (or it was
  // installed): what eviction compares, so the variants traffic uses now stay.
  std::uint64_t last_used() const { return last_used_.load(std::memory_order_relaxed); }
  // Raises the stamp to `tick` (never lowers it: a long call that began
  // earlier must not make a variant look idle that others use now).
  void mark_used(std::uint64_t tick) const {
    std::uint64_t seen = last_used_.load(std::memory_order_relaxed);
    while (seen < tick && !last_used_.compare_exchange_weak(seen, tick, std::memory_order_relaxed)) {
    }
  }
  std::uint64_t exit_count(std::uint32_t exit) const { return exit_counts_[exit].load(std::memory_order_relaxed); }
  void count_exit(std::uint32_t exit) const { exit_counts_[exit].fetch_add(1, std::memory_order_relaxed); }
  // Range canaries this variant's calls reported (so logging can thin them out).
  std::uint64_t count_range_canary() const { return range_canaries_.fetch_add(1, std::memory_order_relaxed) + 1; }
  // Groups placed on a device: the device's name, and after a run on it
  // failed (every later call runs the x86 kernels) why; "" before.
  const std::string& device_name() const { return plan_.device; }
  std::string device_error() const;

 private:
  // Returns false (with the exit in run) when a guard fails.
  bool check_guards(const vm::FrameView& frame, TraceRun& run) const;
  // Runs the steps once; returns false after taking a side exit.
  // first: the run's first iteration (hoisted steps compute; later they restore).
  bool run_steps(const vm::FrameView& frame, const RunContext& ctx, TraceScratch& scratch, TraceRun& run,
                 bool first) const;
  bool run_step(const Step& step, const vm::FrameView& frame, const RunContext& ctx, TraceScratch& scratch,
                TraceRun& run) const;
  void take_holds(const Step& step, const vm::FrameView& frame, TraceScratch& scratch) const;
  bool replay_before_exit(const Step& step, const vm::FrameView& frame, TraceScratch& scratch) const;
  vm::TierTimers::Bucket* timer_bucket(const Step& step, vm::TierTimers& timers) const;
  bool run_fused(const Step& step, const vm::FrameView& frame, const RunContext& ctx, TraceScratch& scratch,
                 TraceRun& run) const;
  // Layout checked and outputs sized; false (nothing changed) on a layout mismatch.
  bool prepare_fused(const Step& step, const vm::FrameView& frame, TraceScratch& scratch, PreparedCall& call) const;
  void execute_fused(const Step& step, const PreparedCall& call, const RunContext& ctx, TraceScratch& scratch,
                     TraceRun& run) const;
  void take_canaries(std::uint32_t canaries, std::uint32_t group, TraceRun& run) const;
  void commit_aliases(const Step& step, const vm::FrameView& frame, TraceScratch& scratch) const;
  bool layout_exit(const Step& step, TraceRun& run) const;
  bool kernel_error_exit(const Step& step, TraceRun& run) const;
  // Runs a placed group on the device; false when the device is off for
  // this trace or this run failed (which turns it off): the CPU runs it.
  bool run_on_device(const FusedStep& fs, FusedArgs args, std::int64_t rows, TraceRun& run,
                     std::uint32_t& canaries) const;
  bool run_row_on_device(const RowStep& rs, const RowArgs& args, TraceRun& run, std::uint32_t& canaries) const;
  // Takes a device run's result into run: true when it ran; a failure turns
  // the device off for this trace (the first one reports), a decline does not.
  bool accept_device_run(const DeviceRun& r, TraceRun& run, std::uint32_t& canaries) const;
  bool run_row(const Step& step, const vm::FrameView& frame, TraceScratch& scratch, TraceRun& run) const;
  bool prepare_row(const Step& step, const vm::FrameView& frame, TraceScratch& scratch, PreparedCall& call) const;
  void execute_row(const Step& step, const PreparedCall& call, TraceRun& run) const;
  // Runs a device chain's steps; false after taking a side exit (before any
  // step ran on the device).
  bool run_chain(const DeviceChain& chain, const vm::FrameView& frame, const RunContext& ctx, TraceScratch& scratch,
                 TraceRun& run) const;
  void keep_inputs(const Step& step, const vm::FrameView& frame, std::vector<Tensor>& kept) const;
  void execute_prepared(const Step& step, const PreparedCall& call, const RunContext& ctx, TraceScratch& scratch,
                        TraceRun& run) const;
  // A kernel step: its product on the device when placed there and taken,
  // otherwise the interpreter's kernel adapter.
  void run_kernel(const Step& step, const vm::FrameView& frame, TraceRun& run) const;
  // The MatMul or Gemm at step.pc (`info`: its contraction) on the device,
  // into its output register; false when the device is off, does not cover
  // these operands, declines or fails (the caller runs the CPU kernel).
  bool run_matmul_on_device(const Step& step, const vm::ContractionInfo& info, const vm::FrameView& frame,
                            TraceRun& run) const;
  void run_kernel_at(vm::Pc pc, const vm::FrameView& frame) const;
  vm::KernelCall kernel_call(vm::Pc pc, const vm::FrameView& frame) const;
  bool run_contraction(const Step& step, const vm::FrameView& frame, const RunContext& ctx, TraceScratch& scratch,
                       TraceRun& run) const;
  void run_move(const Step& step, const vm::FrameView& frame, TraceScratch& scratch) const;
  // Loop traces: the header's work between iterations; false when the loop ends
  // or the interpreter must take over (run says where).
  bool next_iteration(const vm::FrameView& frame, const RunContext& ctx, TraceRun& run) const;

  std::uint32_t id_;
  std::shared_ptr<const vm::Program> program_;
  Plan plan_;
  Code code_;
  double compile_ms_;
  mutable std::atomic<std::uint64_t> entries_{0};
  mutable std::atomic<std::uint64_t> last_used_{0};
  std::unique_ptr<std::atomic<std::uint64_t>[]> exit_counts_;
  mutable std::atomic<std::uint64_t> range_canaries_{0};
  mutable std::atomic<bool> device_off_{false};
  mutable std::mutex device_mu_;
  mutable std::string device_error_;  // under device_mu_
};

}  // namespace canary::jit
