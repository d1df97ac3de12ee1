// The trace driver: checks the emitted entry guards, then runs the plan's
// steps on the frame — fused kernels, direct kernel calls, moves, branch
// checks — leaving through a side exit wherever a check fails or a kernel
// throws, with every register the interpreter needs already in place.
#include "jit/compiled_trace.h"

#include <algorithm>
#include <new>
#include <optional>

#include "canary/error.h"
#include "jit/device_matmul.h"
#include "jit/fused_tiling.h"
#include "jit/prepared_call.h"
#include "jit/plan_contraction.h"
#include "jit/plan_fusion.h"
#include "kernels/onednn.h"
#include "kernels/onednn/precision.h"
#include "runtime/core/fault_injection.h"
#include "vm/scan_ops.h"

namespace canary::jit {

namespace {

constexpr std::size_t kInlineHeaders = 64;
constexpr std::int64_t kParallelMinElements = std::int64_t{1} << 18;

// Reads a one-element condition of any dtype; nullopt when it is not one.
std::optional<bool> read_condition(const Tensor& t) {
  if (!t.defined() || t.numel() != 1) return std::nullopt;
  switch (t.dtype()) {
    case DType::Bool: return t.data<bool>()[0];
    case DType::I64: return t.data<std::int64_t>()[0] != 0;
    case DType::I32: return t.data<std::int32_t>()[0] != 0;
    case DType::F32: return t.data<float>()[0] != 0.0f;
    case DType::F64: return t.data<double>()[0] != 0.0;
  }
  return std::nullopt;
}

// Calls the kernel over all rows, split across threads when large.
std::uint32_t call_fused(FusedFn fn, FusedArgs args, std::int64_t rows, std::int64_t numel, int threads) {
  if (threads <= 1 || numel < kParallelMinElements || rows < 2) {
    args.row_begin = 0;
    args.row_end = rows;
    return fn(&args);
  }
  std::uint32_t flag = 0;
#pragma omp parallel for num_threads(threads) reduction(| : flag) schedule(static)
  for (int t = 0; t < threads; ++t) {
    FusedArgs a = args;
    a.row_begin = rows * t / threads;
    a.row_end = rows * (t + 1) / threads;
    if (a.row_begin < a.row_end) flag |= fn(&a);
  }
  return flag;
}

// Runs the tiles of a call with per-row inputs: `per_element` (every input
// read per element) on chunks of kTilesPerChunk tiles of `tiled`, each with
// the dense inputs and the outputs offset to its first tile and the per-row
// inputs (their per-row values at `rows`) expanded for its rows into
// `expanded`.
std::uint32_t call_tile_chunks(FusedFn per_element, const FusedArgs& tiled, const RowTiling& tiling,
                               std::size_t num_inputs, std::size_t num_outputs, const float* const* rows,
                               std::vector<float>& expanded) {
  const std::int64_t chunk = std::min(kTilesPerChunk, tiling.tiles);
  expanded.resize(static_cast<std::size_t>(tiling.per_row_count * (chunk * tiling.tile + kExpansionSlack)));
  std::uint32_t canaries = 0;
  for (std::int64_t first = 0; first < tiling.tiles; first += chunk) {
    const std::int64_t count = std::min(chunk, tiling.tiles - first);
    const float* inputs[kMaxFusedInputs];
    float* outputs[kMaxFusedInputs];
    for (std::size_t i = 0; i < num_inputs; ++i) {
      if ((tiling.per_row >> i) & 1u) continue;  // expanded below
      inputs[i] = (tiling.repeating >> i) & 1u ? tiled.inputs[i] : tiled.inputs[i] + first * tiling.tile;
    }
    expand_per_row_inputs(tiling, num_inputs, rows, first, count, inputs, expanded.data());
    for (std::size_t o = 0; o < num_outputs; ++o) outputs[o] = tiled.outputs[o] + first * tiling.tile;
    FusedArgs a = tiled;
    a.inputs = inputs;
    a.outputs = outputs;
    a.dims[1] = count;
    a.row_begin = 0;
    a.row_end = count;
    canaries |= per_element(&a);
  }
  return canaries;
}

// Calls the kernel on short rows cut into long tiles (fused_tiling.h): the
// tiled rows first, each repeating input read from its copy in
// scratch.tiles (with per-row inputs, through `per_element` chunk by chunk
// on this thread; otherwise `fn` split across threads), then the rows left
// over with `fn` in the original layout.
std::uint32_t call_fused_tiled(FusedFn fn, FusedFn per_element, const FusedArgs& args, const CollapsedLayout& layout,
                               const RowTiling& tiling, std::size_t num_inputs, std::size_t num_outputs,
                               TraceScratch& scratch, int threads) {
  const float* tiled_inputs[kMaxFusedInputs];
  std::copy_n(args.inputs, num_inputs, tiled_inputs);
  fill_tile_buffers(tiling, num_inputs, tiled_inputs, scratch.tiles);
  const CollapsedLayout tiled = tiled_layout(layout, tiling, num_inputs);
  FusedArgs t = args;
  t.inputs = tiled_inputs;
  t.strides = tiled.strides;
  for (int d = 0; d < 3; ++d) t.dims[d] = tiled.dims[d];
  std::uint32_t canaries =
      tiling.per_row != 0
          ? call_tile_chunks(per_element, t, tiling, num_inputs, num_outputs, args.inputs, scratch.expanded)
          : call_fused(fn, t, tiling.tiles, tiling.tiles * tiling.tile, threads);
  FusedArgs rest = args;
  rest.row_begin = tiling.rows_tiled;
  rest.row_end = layout.dims[0] * layout.dims[1];
  if (rest.row_begin < rest.row_end) canaries |= fn(&rest);
  return canaries;
}

// Throws as a failing kernel would when fault injection ("kernel") makes this
// compiled kernel call fail; the interpreter's own kernel calls never ask.
void throw_if_kernel_fault(StepKind kind) {
  if ((kind == StepKind::Fused || kind == StepKind::Row || kind == StepKind::Kernel ||
       kind == StepKind::Contraction) &&
      take_fault(FaultPoint::KernelExecution))
    throw Error(ErrorKind::Resource, "injected fault: compiled kernel call (fault injection point 'kernel')");
}

}  // namespace

TensorHeader header_of(const Tensor& t) {
  TensorHeader h;
  if (!t.defined()) return h;
  h.data = t.raw();
  h.dims = t.shape().data();
  h.rank = t.rank();
  h.dtype = static_cast<std::int64_t>(t.dtype());
  return h;
}

CompiledTrace::CompiledTrace(std::uint32_t id, std::shared_ptr<const vm::Program> program, Plan plan, Code code,
                             double compile_ms)
    : id_(id), program_(std::move(program)), plan_(std::move(plan)), code_(std::move(code)), compile_ms_(compile_ms),
      exit_counts_(new std::atomic<std::uint64_t>[plan_.exits.size() + 1]) {
  for (std::size_t i = 0; i <= plan_.exits.size(); ++i) exit_counts_[i].store(0);
}

TraceRun CompiledTrace::run(const vm::FrameView& frame, const RunContext& ctx, TraceScratch& scratch) const {
  TraceRun run;
  {
    const vm::ScopedTierTimer timer(ctx.timers ? &ctx.timers->bucket(vm::TimedTier::Guards) : nullptr);
    if (!check_guards(frame, run)) return run;
  }
  entries_.fetch_add(1, std::memory_order_relaxed);
  mark_used(ctx.tick);
  // A bf16 candidate's kernel steps round MatMul/Gemm/Conv operands; the
  // interpreter, after any exit, runs in the model's precision again.
  // Both scopes exist only for variants that set them: the common entry
  // stays free of thread-local and OpenMP state changes.
  std::optional<kernels::ScopedMatmulPrecision> precision;
  if (plan_.bf16_matmul) precision.emplace(kernels::MatmulPrecision::BF16);
  // A wide-accumulation candidate turns oneDNN off for the region: its
  // kernel and contraction steps then run Canary's kernels, which sum in f64.
  std::optional<kernels::OnednnEnabledScope> own_kernels;
  if (plan_.wide_accumulation) own_kernels.emplace(false);
  // A variant with its own thread count runs its kernel steps (oneDNN) and
  // large fused groups on that many threads; the session's count comes back
  // after the region.
  std::optional<kernels::OnednnThreadScope> onednn_threads;
  RunContext local = ctx;
  if (plan_.threads > 0) {
    onednn_threads.emplace(plan_.threads);
    local.threads = plan_.threads;
  }
  if (scratch.alias_outputs.size() != plan_.fused.size()) scratch.alias_outputs.assign(plan_.fused.size(), {});
  if (scratch.row_outputs.size() != plan_.rows.size()) scratch.row_outputs.assign(plan_.rows.size(), {});
  if (scratch.contraction_outputs.size() != plan_.contractions.size())
    scratch.contraction_outputs.assign(plan_.contractions.size(), {});
  if (scratch.held.size() != plan_.hold_slots) scratch.held.assign(plan_.hold_slots, Tensor());
  if (scratch.hoisted.size() != plan_.hoisted_outputs.size()) {
    scratch.hoisted.resize(plan_.hoisted_outputs.size());
    scratch.parked.resize(plan_.hoisted_outputs.size());
    for (std::size_t i = 0; i < plan_.hoisted_outputs.size(); ++i) {
      scratch.hoisted[i].resize(plan_.hoisted_outputs[i].size());
      scratch.parked[i].resize(plan_.hoisted_outputs[i].size());
    }
  }
  // Saved hoisted results share buffers with registers: dropped when the run
  // ends, so the interpreter's next writes reuse those buffers.
  struct DropHoisted {
    TraceScratch& s;
    ~DropHoisted() {
      for (auto* slots : {&s.hoisted, &s.parked})
        for (auto& outputs : *slots)
          for (Tensor& t : outputs) t = Tensor();
    }
  } drop_hoisted{scratch};
  for (bool first = true;; first = false) {
    if (!run_steps(frame, local, scratch, run, first)) return run;
    if (!plan_.loops || !next_iteration(frame, local, run)) break;
  }
  if (run.outcome != TraceOutcome::Exited) {
    run.outcome = TraceOutcome::Completed;
    if (run.resume_pc == vm::kNoPc) run.resume_pc = plan_.end_pc;
  }
  return run;
}

// Gathers the entry registers' headers and calls the emitted guard function.
bool CompiledTrace::check_guards(const vm::FrameView& frame, TraceRun& run) const {
  const std::size_t n = plan_.entry_regs.size();
  // Left uninitialised: the loop below writes the n headers the guards
  // read, and default-constructing all 64 would cost more than the guards.
  union InlineHeaders {
    InlineHeaders() {}
    TensorHeader slot[kInlineHeaders];
  } inline_headers;
  std::vector<TensorHeader> heap_headers;
  TensorHeader* headers = inline_headers.slot;
  if (n > kInlineHeaders) {
    heap_headers.resize(n);
    headers = heap_headers.data();
  }
  for (std::size_t i = 0; i < n; ++i)
    new (&headers[i]) TensorHeader(header_of(frame.registers[plan_.entry_regs[i].index]));
  std::int64_t symbols[64];
  std::vector<std::int64_t> heap_symbols;
  std::int64_t* sym = symbols;
  if (plan_.guards.num_symbols > 64) {
    heap_symbols.resize(plan_.guards.num_symbols);
    sym = heap_symbols.data();
  }
  const std::uint32_t failed = code_.guards(headers, sym);
  if (failed == 0) return true;
  run.outcome = TraceOutcome::GuardFailed;
  run.exit = failed - 1;
  run.resume_pc = plan_.start_pc;
  return false;
}

// The timer bucket of a step; null for moves, branches, loop and scan steps,
// which are bookkeeping and left to the time outside the tiers.
vm::TierTimers::Bucket* CompiledTrace::timer_bucket(const Step& step, vm::TierTimers& timers) const {
  switch (step.kind) {
    case StepKind::Fused: return &timers.bucket(vm::TimedTier::FusedGroup);
    case StepKind::Row: return &timers.bucket(vm::TimedTier::RowKernel);
    case StepKind::Kernel:
    case StepKind::Contraction:
      return &timers.bucket(vm::TimedTier::KernelCall, vm::timed_op_of(*program_, program_->at(step.pc)));
    default: return nullptr;
  }
}

bool CompiledTrace::run_steps(const vm::FrameView& frame, const RunContext& ctx, TraceScratch& scratch,
                              TraceRun& run, bool first) const {
  std::size_t unpark = 0;
  std::size_t chain = 0;
  for (std::uint32_t index = 0; index < plan_.steps.size(); ++index) {
    const Step& step = plan_.steps[index];
    take_holds(step, frame, scratch);
    for (; unpark < plan_.unparks.size() && plan_.unparks[unpark].step == index; ++unpark) {
      const Plan::Unpark& u = plan_.unparks[unpark];
      Tensor& parked = scratch.parked[u.hoist][u.output];
      if (!first && parked.defined())
        frame.registers[plan_.hoisted_outputs[u.hoist][u.output].index] = std::move(parked);
    }
    // A chain's steps have no holds, replays or hoisting (device_chain.h);
    // with the device off they run one by one below.
    if (chain < plan_.device_chains.size() && plan_.device_chains[chain].first == index) {
      const DeviceChain& c = plan_.device_chains[chain++];
      if (!device_off_.load(std::memory_order_relaxed)) {
        const vm::ScopedTierTimer timer(ctx.timers ? &ctx.timers->bucket(vm::TimedTier::FusedGroup) : nullptr);
        if (!run_chain(c, frame, ctx, scratch, run)) return false;
        index += c.count - 1;
        continue;
      }
    }
    if (!step.hoisted) {
      if (!run_step(step, frame, ctx, scratch, run)) return replay_before_exit(step, frame, scratch);
      continue;
    }
    const std::vector<vm::RegId>& outputs = plan_.hoisted_outputs[step.hoist];
    std::vector<Tensor>& saved = scratch.hoisted[step.hoist];
    if (first) {
      if (!run_step(step, frame, ctx, scratch, run)) return replay_before_exit(step, frame, scratch);
      for (std::size_t i = 0; i < outputs.size(); ++i) saved[i] = frame.registers[outputs[i].index];
    } else {
      // The register's buffer (the value a later step left there) is parked
      // for that step; the saved result takes its place.
      for (std::size_t i = 0; i < outputs.size(); ++i) {
        Tensor& reg = frame.registers[outputs[i].index];
        scratch.parked[step.hoist][i] = std::move(reg);
        reg = saved[i];
      }
    }
  }
  return true;
}

// Keeps, before the step runs (and before an unpark writes a register), the
// values a sunk group reads from registers the step overwrites. A swapping
// hold moves the handle out and leaves the buffer the slot kept last time
// in the register, for the step to overwrite instead of allocating.
void CompiledTrace::take_holds(const Step& step, const vm::FrameView& frame, TraceScratch& scratch) const {
  for (const Hold& h : step.holds) {
    Tensor& reg = frame.registers[h.reg.index];
    if (!h.swap) {
      scratch.held[h.slot] = reg;
      continue;
    }
    Tensor previous = std::move(scratch.held[h.slot]);
    scratch.held[h.slot] = std::move(reg);
    reg = std::move(previous);
  }
}

// Before an exit from a step that sunk ops overtook: runs them with the
// interpreter's kernels, in recorded order, so that the interpreter resumes
// at the exit's pc with everything recorded before it done. Each reads the
// inputs it read when recorded: from its register, or, where an op that ran
// since overwrote it, through the handle kept for it (ReplayOp::held). A
// kernel error here is the one the interpreter raises at that op (the ops that ran
// after it cannot run twice, so it cannot resume there): it reaches the
// caller with the op's node, as from the interpreter. Returns false.
bool CompiledTrace::replay_before_exit(const Step& step, const vm::FrameView& frame, TraceScratch& scratch) const {
  // The interpreter re-runs this step: its registers hold what they held before it.
  for (const Hold& h : step.holds)
    if (h.swap) frame.registers[h.reg.index] = scratch.held[h.slot];
  // Registers an op in between overwrote hold the kept values for the call.
  struct SwapHeld {
    const ReplayOp& op;
    const vm::FrameView& frame;
    TraceScratch& scratch;
    void swap() const {
      for (const Hold& h : op.held) std::swap(frame.registers[h.reg.index], scratch.held[h.slot]);
    }
    SwapHeld(const ReplayOp& o, const vm::FrameView& f, TraceScratch& s) : op(o), frame(f), scratch(s) { swap(); }
    ~SwapHeld() { swap(); }
  };
  for (const ReplayOp& op : step.replay) {
    const SwapHeld held(op, frame, scratch);
    try {
      run_kernel_at(op.pc, frame);
    } catch (const Error& e) {
      throw Error(e.kind(), program_->node_context(program_->at(op.pc)) + e.detail());
    } catch (const std::bad_alloc&) {
      throw Error(ErrorKind::Resource, program_->node_context(program_->at(op.pc)) + "out of memory");
    }
  }
  return false;
}

// Runs one step; false after taking a side exit (run says where).
bool CompiledTrace::run_step(const Step& step, const vm::FrameView& frame, const RunContext& ctx,
                             TraceScratch& scratch, TraceRun& run) const {
  try {
    const vm::ScopedTierTimer timer(ctx.timers ? timer_bucket(step, *ctx.timers) : nullptr);
    throw_if_kernel_fault(step.kind);
    switch (step.kind) {
      case StepKind::Fused:
        if (!run_fused(step, frame, ctx, scratch, run)) return false;
        break;
      case StepKind::Row:
        if (!run_row(step, frame, scratch, run)) return false;
        break;
      case StepKind::Kernel: run_kernel(step, frame, run); break;
      case StepKind::Contraction:
        if (!run_contraction(step, frame, ctx, scratch, run)) return false;
        break;
      case StepKind::Move: run_move(step, frame, scratch); break;
      case StepKind::LoopNext: ++frame.loops[plan_.loop_slot].iteration; break;
      case StepKind::ScanSlice: {
        const vm::Instruction& in = program_->at(step.pc);
        vm::slice_scan(static_cast<const vm::SliceParams&>(*in.params), frame.loops[in.slot],
                       frame.registers[program_->inputs_of(in)[0].index],
                       frame.registers[program_->outputs_of(in)[0].index]);
        break;
      }
      case StepKind::ScanAppend: {
        const vm::Instruction& in = program_->at(step.pc);
        vm::append_scan(frame.scans[in.slot], frame.registers[program_->inputs_of(in)[0].index],
                        ctx.max_tensor_bytes);
        break;
      }
      case StepKind::Branch: {
        const vm::RegId cond = program_->inputs_of(program_->at(step.pc))[0];
        const std::optional<bool> value = read_condition(frame.registers[cond.index]);
        if (!value || *value != step.expect_true) {
          run.outcome = TraceOutcome::Exited;
          // A malformed condition is an error the interpreter reports, not a flip.
          run.exit = value ? step.exit : static_cast<std::uint32_t>(plan_.exits.size());
          run.resume_pc = step.pc;
          return false;
        }
        break;
      }
    }
  } catch (const std::exception&) {
    return kernel_error_exit(step, run);
  }
  return true;
}

// Kernel errors (bad shapes, allocation limits, injected faults) are
// re-raised by the interpreter at the same instruction, with its node in
// the message, or do not recur there and the call goes on.
bool CompiledTrace::kernel_error_exit(const Step& step, TraceRun& run) const {
  run.outcome = TraceOutcome::Exited;
  run.exit = static_cast<std::uint32_t>(plan_.exits.size());  // "kernel error" pseudo-exit
  run.resume_pc = step.pc;
  return false;
}

// Broadcast shape of a fused group's inputs (plus the rank of folded
// constants) into out; returns its rank, or -1 when an input's rank differs
// from the one the kernel was compiled for.
// held: per input, the hold slot it reads from (-1: its register); may be empty.
static int broadcast_inputs(const vm::FrameView& frame, const std::vector<vm::RegId>& regs,
                            const std::vector<std::int32_t>& held, const std::vector<Tensor>& holds,
                            const std::vector<std::uint8_t>& ranks, std::size_t constant_rank, const float** inputs,
                            std::span<const std::int64_t>* shapes, std::int64_t* out) {
  std::size_t rank = constant_rank;
  std::fill(out, out + rank, 1);
  for (std::size_t i = 0; i < regs.size(); ++i) {
    const bool from_hold = i < held.size() && held[i] >= 0;
    const Tensor& t = from_hold ? holds[static_cast<std::size_t>(held[i])] : frame.registers[regs[i].index];
    inputs[i] = static_cast<const float*>(t.raw());
    shapes[i] = t.shape();
    const std::size_t r = shapes[i].size();
    if (r != ranks[i]) return -1;
    if (r > rank) {
      std::copy_backward(out, out + rank, out + r);
      std::fill(out, out + (r - rank), 1);
      rank = r;
    }
    for (std::size_t d = 0; d < r; ++d) {
      std::int64_t& o = out[rank - r + d];
      if (o == 1) o = shapes[i][d];
    }
  }
  return static_cast<int>(rank);
}

// Leaves compiled code before a fused group whose inputs no longer have the
// layout it was compiled for; the interpreter runs the group's ops.
bool CompiledTrace::layout_exit(const Step& step, TraceRun& run) const {
  run.outcome = TraceOutcome::Exited;
  run.exit = step.exit;
  run.resume_pc = step.pc;
  return false;
}

// Collapses the inputs' run-time shapes and checks the layout still matches
// the compiled kernel (false, with nothing changed, when it does not); then
// sizes the outputs. An output that is also an input is sized in scratch
// (commit_aliases swaps it in). A failed allocation throws with no register
// but this step's own outputs changed.
bool CompiledTrace::prepare_fused(const Step& step, const vm::FrameView& frame, TraceScratch& scratch,
                                  PreparedCall& call) const {
  const FusedStep& fs = plan_.fused[step.fused];
  const std::size_t n = fs.inputs.size();
  std::span<const std::int64_t> shapes[kMaxFusedInputs];
  std::int64_t out[kMaxTensorRank];
  const int broadcast_rank = broadcast_inputs(frame, fs.inputs, fs.held_inputs, scratch.held, fs.input_ranks,
                                              fs.constant_rank, call.inputs, shapes, out);
  if (broadcast_rank < 0) return false;
  const std::span<const std::int64_t> out_shape(out, static_cast<std::size_t>(broadcast_rank));
  CollapsedLayout& layout = call.layout;
  bool ok = collapse_layout(out_shape, {shapes, n}, layout);
  for (int d = 0; d < 3 && ok; ++d) ok = layout.full[d] == fs.full_masks[d];
  if (ok && fs.exact_layout)
    for (int d = 0; d < 3; ++d) ok = ok && (*fs.exact_layout)[d] == layout.dims[d];
  if (!ok) return false;
  std::vector<Tensor>& alias = scratch.alias_outputs[step.fused];
  if (alias.size() != fs.outputs.size()) alias.resize(fs.outputs.size());
  for (std::size_t o = 0; o < fs.outputs.size(); ++o) {
    Tensor& t = fs.output_aliases_input[o] ? alias[o] : frame.registers[fs.outputs[o].index];
    t.reset(DType::F32, out_shape);
    call.outputs[o] = static_cast<float*>(t.raw());
  }
  call.empty = call.rows() * layout.dims[2] == 0;
  return true;
}

// Puts the outputs a prepared step sized in scratch (those that are also its
// inputs) into their registers; scratch keeps the input buffers, which the
// call still reads. After the call, so an exception while it runs leaves
// the inputs in place for the interpreter; a chain commits at once, for its
// later steps to read the new values.
void CompiledTrace::commit_aliases(const Step& step, const vm::FrameView& frame, TraceScratch& scratch) const {
  if (step.kind == StepKind::Row) {
    const RowStep& rs = plan_.rows[step.fused];
    if (rs.output_aliases_input) std::swap(scratch.row_outputs[step.fused], frame.registers[rs.output.index]);
    return;
  }
  const FusedStep& fs = plan_.fused[step.fused];
  std::vector<Tensor>& alias = scratch.alias_outputs[step.fused];
  for (std::size_t o = 0; o < fs.outputs.size(); ++o)
    if (fs.output_aliases_input[o]) std::swap(alias[o], frame.registers[fs.outputs[o].index]);
}

bool CompiledTrace::run_fused(const Step& step, const vm::FrameView& frame, const RunContext& ctx,
                              TraceScratch& scratch, TraceRun& run) const {
  PreparedCall& call = scratch.call;
  if (!prepare_fused(step, frame, scratch, call)) return layout_exit(step, run);
  execute_fused(step, call, ctx, scratch, run);
  commit_aliases(step, frame, scratch);
  return true;
}

// Runs a prepared group: on the device when it is placed there and takes
// the call, otherwise with the x86 kernel.
void CompiledTrace::execute_fused(const Step& step, const PreparedCall& call, const RunContext& ctx,
                                  TraceScratch& scratch, TraceRun& run) const {
  if (call.empty) return;
  const FusedStep& fs = plan_.fused[step.fused];
  const FusedFn fn = code_.fused[step.fused];
  const std::size_t n = fs.inputs.size();
  const CollapsedLayout& layout = call.layout;
  const std::int64_t rows = call.rows();
  const std::int64_t numel = rows * layout.dims[2];
  const FusedArgs args = call.fused_args();
  std::uint32_t canaries = 0;
  if (!fs.on_device || !run_on_device(fs, args, rows, run, canaries)) {
    // Per-row inputs expand chunk by chunk on the calling thread, so a call
    // large enough to split across threads runs row by row instead.
    const FusedFn per_element = code_.fused_per_element[step.fused];
    const bool threaded = ctx.threads > 1 && numel >= kParallelMinElements;
    const std::optional<RowTiling> tiling =
        fs.tile_short_rows ? plan_row_tiling(layout, n, per_element && !threaded ? fs.per_row_max_row : 0)
                           : std::nullopt;
    canaries = tiling ? call_fused_tiled(fn, per_element, args, layout, *tiling, n, fs.outputs.size(), scratch,
                                         ctx.threads)
                      : call_fused(fn, args, rows, numel, ctx.threads);
    if (tiling) ++run.tiled_calls;
  }
  take_canaries(canaries, step.fused, run);
}

void CompiledTrace::take_canaries(std::uint32_t canaries, std::uint32_t group, TraceRun& run) const {
  if (canaries & kNonFiniteCanary) run.value_canary = true;
  if ((canaries & kRangeCanary) && !run.range_canary) {
    run.range_canary = true;
    run.range_group = group;
  }
}

bool CompiledTrace::run_on_device(const FusedStep& fs, FusedArgs args, std::int64_t rows, TraceRun& run,
                                  std::uint32_t& canaries) const {
  if (device_off_.load(std::memory_order_relaxed)) return false;
  args.row_begin = 0;
  args.row_end = rows;
  return accept_device_run(code_.device->run(fs.spec, args), run, canaries);
}

bool CompiledTrace::run_row_on_device(const RowStep& rs, const RowArgs& args, TraceRun& run,
                                      std::uint32_t& canaries) const {
  if (device_off_.load(std::memory_order_relaxed)) return false;
  return accept_device_run(code_.device->run_row(rs.spec, args), run, canaries);
}

bool CompiledTrace::accept_device_run(const DeviceRun& r, TraceRun& run, std::uint32_t& canaries) const {
  if (r.ok) {
    canaries = r.canaries;
    ++run.device_calls;
    run.device_bytes += r.bytes_moved;
    return true;
  }
  if (r.declined) return false;  // this call's shapes only: the next call tries again
  std::lock_guard lock(device_mu_);
  if (!device_off_.exchange(true)) {  // the first failure reports; racing ones just fall back
    device_error_ = r.error.empty() ? "the device reported no reason" : r.error;
    run.device_failed = true;
  }
  return false;
}

std::string CompiledTrace::device_error() const {
  std::lock_guard lock(device_mu_);
  return device_error_;
}

// A row kernel: the prologue's inputs collapse with the last axis kept as
// d2; reductions write one value per row, Softmax/LayerNorm a full row.
// Prepared as a fused group is: false with nothing changed on a layout
// mismatch, and an output that is also an input sized in scratch.
bool CompiledTrace::prepare_row(const Step& step, const vm::FrameView& frame, TraceScratch& scratch,
                                PreparedCall& call) const {
  const RowStep& rs = plan_.rows[step.fused];
  std::span<const std::int64_t> shapes[kMaxFusedInputs];
  std::int64_t shape[kMaxTensorRank];
  const int rank = broadcast_inputs(frame, rs.inputs, {}, scratch.held, rs.input_ranks, rs.constant_rank,
                                    call.inputs, shapes, shape);
  if (rank <= 0) return false;
  const std::span<const std::int64_t> in_shape(shape, static_cast<std::size_t>(rank));
  CollapsedLayout& layout = call.layout;
  bool ok = collapse_layout(in_shape, {shapes, rs.inputs.size()}, layout, true);
  for (int d = 0; d < 3 && ok; ++d) ok = layout.full[d] == rs.full_masks[d];
  const std::int64_t d2 = layout.dims[2];
  if (ok && rs.spec.op == RowOp::Max) ok = d2 > 0;  // the interpreter reports an empty ReduceMax
  call.scale = call.bias = nullptr;
  if (ok && rs.spec.has_scale) {
    const Tensor& t = frame.registers[rs.scale.index];
    ok = t.defined() && t.dtype() == DType::F32 && t.rank() == 1 && t.dim(0) == d2;
    if (ok) call.scale = t.data<float>();
  }
  if (ok && rs.spec.has_bias) {
    const Tensor& t = frame.registers[rs.bias.index];
    ok = t.defined() && t.dtype() == DType::F32 && t.rank() == 1 && t.dim(0) == d2;
    if (ok) call.bias = t.data<float>();
  }
  if (!ok) return false;
  // Output shape: reductions drop the last axis or keep it as 1.
  std::int64_t out_dims[kMaxTensorRank];
  std::size_t out_rank = static_cast<std::size_t>(rank);
  std::copy(shape, shape + rank, out_dims);
  const bool reduces = rs.spec.op == RowOp::Sum || rs.spec.op == RowOp::Mean || rs.spec.op == RowOp::Max;
  if (reduces) {
    if (rs.keepdims) out_dims[rank - 1] = 1;
    else --out_rank;
  }
  Tensor& out = rs.output_aliases_input ? scratch.row_outputs[step.fused] : frame.registers[rs.output.index];
  out.reset(DType::F32, std::span<const std::int64_t>(out_dims, out_rank));
  call.outputs[0] = static_cast<float*>(out.raw());
  call.empty = call.rows() == 0 || (d2 == 0 && !reduces);
  return true;
}

bool CompiledTrace::run_row(const Step& step, const vm::FrameView& frame, TraceScratch& scratch,
                            TraceRun& run) const {
  PreparedCall& call = scratch.call;
  if (!prepare_row(step, frame, scratch, call)) return layout_exit(step, run);
  execute_row(step, call, run);
  commit_aliases(step, frame, scratch);
  return true;
}

void CompiledTrace::execute_row(const Step& step, const PreparedCall& call, TraceRun& run) const {
  if (call.empty) return;
  const RowStep& rs = plan_.rows[step.fused];
  const RowArgs args = call.row_args();
  std::uint32_t canaries = 0;
  if (!rs.on_device || !run_row_on_device(rs, args, run, canaries)) canaries = code_.rows[step.fused](&args);
  if (canaries != 0) run.value_canary = true;
}

// A device chain (device_chain.h): every step is prepared first, keeping a
// handle on each input so that a later step's output cannot reuse its
// buffer; a layout mismatch or an error while preparing step k runs steps
// before k one by one and exits at k, as if the chain were not there. Then
// the device runs the chain in one call; where it declines or fails, the
// steps run one by one from the host inputs, which the device leaves as they were.
bool CompiledTrace::run_chain(const DeviceChain& chain, const vm::FrameView& frame, const RunContext& ctx,
                              TraceScratch& scratch, TraceRun& run) const {
  std::vector<PreparedCall>& calls = scratch.chain_calls;
  if (calls.size() < chain.count) calls.resize(chain.count);
  std::vector<Tensor>& kept = scratch.chain_inputs;
  struct Release {
    std::vector<Tensor>& kept;
    ~Release() { kept.clear(); }
  } release{kept};
  const Step* const steps = plan_.steps.data() + chain.first;
  // Running prepared steps can only fail for memory (the tiling scratch):
  // steps after the failing one are committed but unwritten, so the call
  // cannot resume in the interpreter and fails with a typed error.
  const auto run_prepared = [&](std::uint32_t count) {
    try {
      for (std::uint32_t k = 0; k < count; ++k) execute_prepared(steps[k], calls[k], ctx, scratch, run);
    } catch (const std::bad_alloc&) {
      throw Error(ErrorKind::Resource, "out of memory running the steps of a device chain");
    }
  };
  bool any_empty = false;
  for (std::uint32_t k = 0; k < chain.count; ++k) {
    const Step& step = steps[k];
    keep_inputs(step, frame, kept);
    bool prepared = false;
    try {
      throw_if_kernel_fault(step.kind);
      prepared = step.kind == StepKind::Fused ? prepare_fused(step, frame, scratch, calls[k])
                                              : prepare_row(step, frame, scratch, calls[k]);
    } catch (const std::exception&) {
      run_prepared(k);
      return kernel_error_exit(step, run);
    }
    if (!prepared) {
      run_prepared(k);
      return layout_exit(step, run);
    }
    commit_aliases(step, frame, scratch);
    any_empty = any_empty || calls[k].empty;
    // An output nothing reads may share its register with a later step's
    // output: the handle keeps its buffer alive until the chain has run.
    if (step.kind == StepKind::Fused) {
      for (vm::RegId r : plan_.fused[step.fused].outputs) kept.push_back(frame.registers[r.index]);
    } else {
      kept.push_back(frame.registers[plan_.rows[step.fused].output.index]);
    }
  }
  if (!any_empty && !device_off_.load(std::memory_order_relaxed)) {
    std::vector<ChainStep>& links = scratch.chain_steps;
    links.assign(chain.count, ChainStep());
    for (std::uint32_t k = 0; k < chain.count; ++k) {
      ChainStep& link = links[k];
      if (steps[k].kind == StepKind::Fused) {
        link.fused = &plan_.fused[steps[k].fused].spec;
        link.fused_args = calls[k].fused_args();
      } else {
        link.row = &plan_.rows[steps[k].fused].spec;
        link.row_args = calls[k].row_args();
      }
      link.sources = chain.sources[k].data();
      link.num_sources = chain.sources[k].size();
      link.host_outputs = chain.host_outputs[k];
    }
    std::uint32_t canaries = 0;
    if (accept_device_run(code_.device->run_chain(links.data(), links.size()), run, canaries)) {
      run.device_calls += chain.count - 1;  // accept_device_run counted one
      ++run.device_chains;
      take_canaries(canaries & kNonFiniteCanary, 0, run);
      return true;
    }
  }
  run_prepared(chain.count);
  return true;
}

// Handles on the registers a chained step reads, kept until the chain ends.
void CompiledTrace::keep_inputs(const Step& step, const vm::FrameView& frame, std::vector<Tensor>& kept) const {
  const auto keep = [&](vm::RegId r) {
    if (r.valid()) kept.push_back(frame.registers[r.index]);
  };
  if (step.kind == StepKind::Fused) {
    for (vm::RegId r : plan_.fused[step.fused].inputs) keep(r);
    return;
  }
  const RowStep& rs = plan_.rows[step.fused];
  for (vm::RegId r : rs.inputs) keep(r);
  if (rs.spec.has_scale) keep(rs.scale);
  if (rs.spec.has_bias) keep(rs.bias);
}

void CompiledTrace::execute_prepared(const Step& step, const PreparedCall& call, const RunContext& ctx,
                                     TraceScratch& scratch, TraceRun& run) const {
  if (step.kind == StepKind::Fused) execute_fused(step, call, ctx, scratch, run);
  else execute_row(step, call, run);
}

// The frame's registers as the kernel adapter of the instruction at pc sees them.
vm::KernelCall CompiledTrace::kernel_call(vm::Pc pc, const vm::FrameView& frame) const {
  const vm::Instruction& in = program_->at(pc);
  const vm::RegId* operands = program_->operands().data() + in.operands;
  return {frame.registers.data(), operands, operands + in.num_inputs, in.num_inputs, in.num_outputs};
}

// A direct call of the instruction's kernel adapter (the interpreter's own).
void CompiledTrace::run_kernel_at(vm::Pc pc, const vm::FrameView& frame) const {
  const vm::Instruction& in = program_->at(pc);
  in.fn(*in.params, kernel_call(pc, frame));
}

void CompiledTrace::run_kernel(const Step& step, const vm::FrameView& frame, TraceRun& run) const {
  if (step.on_device) {
    const std::optional<vm::ContractionInfo> info = device_matmul_info(program_->at(step.pc));
    if (info && run_matmul_on_device(step, *info, frame, run)) return;
  }
  run_kernel_at(step.pc, frame);
}

bool CompiledTrace::run_matmul_on_device(const Step& step, const vm::ContractionInfo& info,
                                         const vm::FrameView& frame, TraceRun& run) const {
  if (device_off_.load(std::memory_order_relaxed)) return false;
  const vm::KernelCall call = kernel_call(step.pc, frame);
  MatmulCall mc;
  Shape shape;
  if (!make_matmul_call(info, call.input(0), call.input(1), call.optional_input(2), mc, shape)) return false;
  // An output register that is also an operand (the allocator reuses a
  // register that dies here) is written only once the device has read it.
  bool aliases = false;
  for (int i = 0; i < call.num_inputs; ++i) aliases = aliases || call.inputs[i] == call.outputs[0];
  Tensor fresh;
  Tensor& out = aliases ? fresh : call.output(0);
  out.reset(DType::F32, shape);
  mc.c = out.data<float>();
  std::uint32_t canaries = 0;  // products carry no value canary
  if (!accept_device_run(code_.device->run_matmul(mc), run, canaries)) return false;
  if (aliases) call.output(0) = std::move(fresh);
  return true;
}

// On a large result, one oneDNN call computes the contraction and its
// epilogue into the last absorbed op's register. Otherwise, or where oneDNN
// declines (disabled, a case it does not take, a result that could hold a
// NaN under Relu or Clip), the interpreter's adapter runs the contraction
// and the separate fused group the absorbed ops.
bool CompiledTrace::run_contraction(const Step& step, const vm::FrameView& frame, const RunContext& ctx,
                                    TraceScratch& scratch, TraceRun& run) const {
  const ContractionStep& cs = plan_.contractions[step.fused];
  const vm::KernelCall call = kernel_call(step.pc, frame);
  Tensor& out = cs.output_aliases_input ? scratch.contraction_outputs[step.fused] : frame.registers[cs.output.index];
  bool done = false;
  const Tensor* bias = call.optional_input(2);
  const Tensor* addend = cs.addend.valid() ? &frame.registers[cs.addend.index] : nullptr;
  const Tensor* extra = addend ? addend : bias;
  // A product placed on the device runs there alone; its epilogue is the
  // separate fused group (placed or not).
  if (step.on_device && run_matmul_on_device(step, cs.info, frame, run))
    return run_fused(cs.separate, frame, ctx, scratch, run);
  if (kernels::onednn_enabled() && call.input(0).defined() && call.input(1).defined() &&
      (!addend || addend->defined()) &&
      prefer_epilogue(cs, call.input(0).shape(), call.input(1).shape(), extra && extra->defined() ? extra->numel() : 0)) {
    switch (cs.info.kind) {
      case vm::ContractionInfo::Kind::MatMul:
        done = addend ? kernels::onednn_matmul_add(call.input(0), call.input(1), *addend, out, cs.epilogue)
                      : kernels::onednn_matmul(call.input(0), call.input(1), out, cs.epilogue);
        break;
      case vm::ContractionInfo::Kind::Gemm:
        done = kernels::onednn_gemm(*cs.info.gemm, call.input(0), call.input(1), call.optional_input(2), out,
                                    cs.epilogue);
        break;
      case vm::ContractionInfo::Kind::Conv:
        done = kernels::onednn_conv(*cs.info.conv, call.input(0), call.input(1), call.optional_input(2), out,
                                    cs.info.weights_are_constant, cs.epilogue);
        break;
    }
  }
  if (done) {
    if (cs.output_aliases_input) std::swap(out, frame.registers[cs.output.index]);
    return true;
  }
  run_kernel_at(step.pc, frame);
  return run_fused(cs.separate, frame, ctx, scratch, run);
}

// Register moves with the interpreter's semantics (steal, share or copy through scratch).
void CompiledTrace::run_move(const Step& step, const vm::FrameView& frame, TraceScratch& scratch) const {
  const vm::Instruction& in = program_->at(step.pc);
  const auto& mp = static_cast<const vm::MoveParams&>(*in.params);
  Tensor* regs = frame.registers.data();
  const vm::RegId* srcs = program_->operands().data() + in.operands;
  const vm::RegId* dsts = srcs + in.num_inputs;
  if (!mp.parallel) {
    for (std::uint32_t i = 0; i < in.num_inputs; ++i) {
      if (mp.steal[i]) std::swap(regs[dsts[i].index], regs[srcs[i].index]);
      else regs[dsts[i].index] = regs[srcs[i].index];
    }
    return;
  }
  std::vector<Tensor>& tmp = scratch.moves;
  if (tmp.size() < in.num_inputs) tmp.resize(in.num_inputs);
  for (std::uint32_t i = 0; i < in.num_inputs; ++i) tmp[i] = regs[srcs[i].index];
  // Moving out of the scratch drops its extra handles, so buffers stay solely owned.
  for (std::uint32_t i = 0; i < in.num_inputs; ++i) regs[dsts[i].index] = std::move(tmp[i]);
}

// The loop header's work: ends the loop at its trip count or false
// condition, leaves limit and condition errors to the interpreter, writes the
// iteration number and re-checks the entry guards for the next iteration.
bool CompiledTrace::next_iteration(const vm::FrameView& frame, const RunContext& ctx, TraceRun& run) const {
  vm::LoopState& s = frame.loops[plan_.loop_slot];
  if (s.iteration >= s.trip_count) return false;
  if (plan_.loop_condition.valid()) {
    const std::optional<bool> cond = read_condition(frame.registers[plan_.loop_condition.index]);
    if (cond && !*cond) return false;
    if (!cond) {
      run.resume_pc = plan_.anchor_pc;  // the interpreter's header reports the bad condition
      return false;
    }
  }
  if (s.iteration >= ctx.max_loop_iterations) {
    run.resume_pc = plan_.anchor_pc;  // the interpreter's header raises the limit error
    return false;
  }
  if (plan_.loop_iteration.valid()) {
    Tensor& t = frame.registers[plan_.loop_iteration.index];
    t.reset(DType::I64, {});
    t.data<std::int64_t>()[0] = s.iteration;
  }
  if (!check_guards(frame, run)) {
    run.outcome = TraceOutcome::Exited;  // earlier iterations ran: this is a deopt
    return false;
  }
  return true;
}

}  // namespace canary::jit
