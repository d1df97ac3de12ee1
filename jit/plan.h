// Plan: what a compiled trace does, decided from a Trace — the steps (fused
// elementwise groups, direct kernel calls, register moves, branch checks), the
// entry guards, and the exits. Backends turn the fused groups into code; the
// driver (jit/compiled_trace) runs the steps.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "jit/device_chain.h"
#include "jit/shape_knowledge.h"
#include "jit/fused_kernel.h"
#include "jit/fused_row.h"
#include "jit/guard.h"
#include "jit/trace.h"
#include "kernels/onednn.h"
#include "vm/elementwise_info.h"
#include "vm/program.h"

namespace canary::jit {

// The rungs of the ladder a region walks down on repeated failure.
enum class Tier : std::uint8_t {
  ExactFused,     // fused groups, every entry dim guarded by value
  SymbolicFused,  // fused groups, learned dims guarded by constraints
  Unfused,        // every op a direct kernel call, same guards as SymbolicFused
};
std::string_view tier_name(Tier tier);

// An entry dim, by its position in Trace::entry and axis.
struct DimRef {
  std::uint32_t entry = 0;
  std::uint32_t axis = 0;
  friend bool operator<(DimRef a, DimRef b) { return std::pair(a.entry, a.axis) < std::pair(b.entry, b.axis); }
  friend bool operator==(DimRef a, DimRef b) { return a.entry == b.entry && a.axis == b.axis; }
};

struct FusedStep {
  FusedElementwiseSpec spec;
  std::vector<vm::RegId> inputs;    // per spec input
  std::vector<vm::RegId> outputs;   // per spec output
  // Outputs whose register is also one of the inputs: written to a scratch
  // tensor first, then swapped in.
  std::vector<bool> output_aliases_input;
  std::vector<vm::Pc> pcs;          // the fused instructions, in order
  // Rank of the folded scalar constants (shape [1], [1, 1], ...): they add
  // leading 1-dims to the output shape the inputs broadcast to.
  std::size_t constant_rank = 0;
  // The recorded layout the kernel is valid for: per collapsed dim, which
  // inputs span it, and each input's rank. Together they guarantee every
  // fused op still produces the group's shape (a symbolic dim of an
  // intermediate value turning into 1 changes them).
  std::uint32_t full_masks[3] = {0, 0, 0};
  std::vector<std::uint8_t> input_ranks;
  // Exact tier: the collapsed dims every call must have. The kernel bakes
  // them in (spec.exact_dims) unless the step tiles them (below).
  std::optional<std::array<std::int64_t, 3>> exact_layout;
  // Calls whose rows are short run as long tiles (fused_tiling.h); the
  // kernel then reads its dims from its arguments.
  bool tile_short_rows = false;
  // Recorded with inputs holding one value per row on short rows: the same
  // group with every input read per element, which tiled calls run with
  // those inputs expanded (fused_tiling.h), on rows of up to
  // per_row_max_row floats.
  std::optional<FusedElementwiseSpec> per_element_spec;
  std::int64_t per_row_max_row = 0;
  // Non-adjacent fusion moved the earlier members to the last one's place
  // (plan_groups.h): the step runs, and its exits resume, at the last pc.
  bool sunk = false;
  // Per input: the hold slot it is read from (an op before the group
  // overwrote its register), or -1 for the register itself. Empty: all registers.
  std::vector<std::int32_t> held_inputs;
  // Runs on the plan's device (device_placement.h) rather than the x86
  // kernel, which still runs it when the device fails.
  bool on_device = false;
  // Placement asked and the device refused this group: why (for listings).
  std::string device_refusal;
};

// A register's handle kept just before a step overwrites it, for a sunk
// fused group (or an exit's replay) that reads the value it held then.
struct Hold {
  vm::RegId reg;
  std::uint32_t slot = 0;
  // The step does not read the register: the kept handle is moved out and
  // the slot's previous buffer goes in for the step to overwrite, so no
  // call allocates for it. (Otherwise the handle is shared, and the step's
  // write allocates.)
  bool swap = false;
};

// An op an exit runs with the interpreter's kernel before resuming; `held`
// lists the registers it reads through a hold (swapped in for the call).
struct ReplayOp {
  vm::Pc pc = 0;
  std::vector<Hold> held;
};

// A row kernel: an elementwise prologue (possibly just the row op's input)
// then a reduction / Softmax / LayerNorm along the last axis.
struct RowStep {
  FusedRowSpec spec;
  std::vector<vm::RegId> inputs;    // prologue inputs
  vm::RegId output;                 // the row op's output register
  vm::RegId scale, bias;            // LayerNorm (bias may be none)
  bool keepdims = true;             // reductions: keep the reduced axis as 1
  std::size_t constant_rank = 0;
  std::uint32_t full_masks[3] = {0, 0, 0};
  std::vector<std::uint8_t> input_ranks;
  bool output_aliases_input = false;
  std::vector<vm::Pc> pcs;          // prologue ops then the row op
  // As FusedStep: runs on the plan's device, the x86 kernel when it fails.
  bool on_device = false;
  std::string device_refusal;
};

// ScanSlice/ScanAppend: a loop trace's per-iteration scan steps (vm/scan_ops.h).
enum class StepKind : std::uint8_t { Fused, Kernel, Move, Branch, LoopNext, Row, Contraction, ScanSlice, ScanAppend };

struct Step {
  StepKind kind = StepKind::Kernel;
  vm::Pc pc = 0;              // Kernel/Move/Branch/LoopNext/Scan*: the instruction; Fused: its first one
  // Fused: index into Plan::fused; Row: into Plan::rows; Contraction: into Plan::contractions
  std::uint32_t fused = 0;
  bool expect_true = false;   // Branch: the direction recorded
  std::uint32_t exit = 0;     // Fused/Branch: the exit taken when the step's check fails
  // Loop traces: the step reads only loop invariants, so it runs on the first
  // iteration of each trace run; later ones put its saved results back
  // (Plan::hoisted_outputs[hoist] are the registers).
  bool hoisted = false;
  std::uint32_t hoist = 0;
  // Ops recorded before this step's pc that run after it (members of a
  // fused group sunk past it, plan_groups.h): an exit from the step runs
  // them with the interpreter's kernels, in recorded order, before the
  // interpreter resumes at the exit's pc.
  std::vector<ReplayOp> replay;
  // Registers to keep before the step runs (it overwrites what a sunk group reads).
  std::vector<Hold> holds;
  // Fused and row steps: the registers read after the step (by later steps,
  // at exits, at the end, by the next iteration), sorted; what a device
  // chain ending here must copy back (device_placement.h).
  std::vector<std::uint32_t> live_after;
  // Kernel and Contraction steps of a MatMul or Gemm: the product runs on
  // the plan's device (FusedDevice::run_matmul; device_matmul.h), the CPU
  // kernel when the device declines or fails; or why the device refused it.
  bool on_device = false;
  std::string device_refusal;
};

// A MatMul, Gemm or Conv and the unary elementwise ops after it, which read
// nothing else (each intermediate dies at the next op). Per call, either
// one oneDNN call applies the ops as post-ops (its own result is never
// stored), or the contraction runs alone and `separate`, a fused group of the
// ops, follows: post-ops pay off only on results too large for the cache
// (plan_contraction.h, prefer_epilogue), and oneDNN declines Relu and Clip
// post-ops on results that could hold a NaN.
struct ContractionStep {
  vm::ContractionInfo info;
  kernels::Epilogue epilogue;
  // MatMul only: the absorbed chain starts with an Add of this register (a
  // bias or a residual), a binary post-op before the epilogue; or none.
  vm::RegId addend;
  std::vector<vm::Pc> epilogue_pcs;   // the absorbed ops, in order
  vm::RegId output;                   // the last absorbed op's output register
  // The output register is also one of the contraction's inputs (the
  // allocator may reuse an input that dies there): written to scratch first.
  bool output_aliases_input = false;
  Step separate;                      // the fused group of the ops (kind Fused)
  std::int64_t min_elements = 0;      // smallest result that takes the post-ops
};

enum class ExitKind : std::uint8_t { EntryGuard, Branch, Layout };

// Where a failed check leaves compiled code. Every register live at pc is
// materialised when the exit is taken (exits sit at step boundaries).
struct ExitRecord {
  ExitKind kind = ExitKind::EntryGuard;
  vm::Pc pc = 0;
  std::string description;  // "x.dim1 == 128", "branch at pc 12 taken", ...
  std::uint32_t guard = 0;  // EntryGuard: the guard's index
};

struct Plan {
  Tier tier = Tier::ExactFused;
  MathMode math = MathMode::Exact;
  bool bf16_matmul = false;             // MatMul/Gemm/Conv kernel steps round operands to bf16
  bool wide_accumulation = false;       // MatMul/Gemm/Conv/LSTM/GRU steps sum in f64 (Canary's kernels)
  Accumulation accumulation = Accumulation::Plain;  // of the row kernels' sums
  int threads = 0;                      // intra-op threads of this variant (0: the session's)
  GuardSet guards;                      // on Trace::entry, in order
  std::vector<TraceValue> entry;        // the entry values as recorded
  std::vector<vm::RegId> entry_regs;    // header i is read from this register
  std::vector<std::string> entry_names; // value names, for guard descriptions
  std::vector<Step> steps;
  std::vector<FusedStep> fused;
  std::vector<RowStep> rows;
  std::vector<ContractionStep> contractions;
  std::vector<ExitRecord> exits;        // exits[i] for guard i come first
  std::vector<std::vector<vm::RegId>> hoisted_outputs;  // per hoisted step (Step::hoist)
  // A hoisted result's register that a later step of the body writes again:
  // on later iterations, the buffer the restore parked goes back into the
  // register before that step, which then reuses it instead of allocating
  // (the restored handle shares the saved result's buffer). Sorted by step.
  struct Unpark {
    std::uint32_t step = 0;    // index into steps
    std::uint32_t hoist = 0;   // Step::hoist of the hoisted step
    std::uint32_t output = 0;  // index into hoisted_outputs[hoist]
  };
  std::vector<Unpark> unparks;
  // Symbolic dims, by symbol slot: the entry dims a slot stands for, and
  // what was seen of its first dim (ShapeKnowledge; not guarded).
  struct Symbol {
    std::vector<DimRef> dims;  // never empty
    DimFacts facts;
  };
  std::vector<Symbol> symbols;
  bool loops = false;                   // iterate the steps (loop trace)
  bool side = false;                    // a side trace, entered from exits that resume at start_pc
  vm::Pc anchor_pc = 0, start_pc = 0, end_pc = 0;
  std::uint32_t loop_slot = 0;
  vm::RegId loop_condition;             // loop traces: the header's condition register
  vm::RegId loop_iteration;             // loop traces: the header's iteration register
  std::size_t fused_ops = 0;            // instructions inside fused groups and contraction epilogues
  std::size_t sunk_ops = 0;             // ops a fused group runs later than recorded (non-adjacent fusion)
  std::uint32_t hold_slots = 0;         // Step::holds slots (TraceScratch::held)
  std::string device;                   // the device fused groups were placed on, or "" (device_placement.h)
  std::vector<DeviceChain> device_chains;  // runs of placed steps that run as one device call, by first step

  // A readable listing: guards, steps, groups (what `canary inspect` prints).
  std::string describe(const vm::Program& program) const;
};

struct PlanOptions {
  Tier tier = Tier::ExactFused;
  MathMode math = MathMode::Exact;
  bool value_canaries = false;
  // Range canaries on fused outputs (JitOptions::range_canaries, range_margin).
  bool range_canaries = false;
  double range_margin = 0.5;
  // Kernel steps run MatMul/Gemm/Conv with bf16 operands (a cost-model candidate).
  bool bf16_matmul = false;
  // Kernel and contraction steps run MatMul, Gemm, Conv, LSTM and GRU on
  // Canary's own kernels, which sum products in f64 and round once to f32,
  // instead of oneDNN's f32 sums (a cost-model candidate).
  bool wide_accumulation = false;
  // How row kernels accumulate their sums (compensated: a cost-model candidate).
  Accumulation accumulation = Accumulation::Plain;
  // Intra-op threads for the region's kernel steps and fused groups; 0: the
  // session's (Options::intra_op_threads). A cost-model candidate.
  int threads = 0;
  // Unary ops after a MatMul/Gemm/Conv become its oneDNN epilogue
  // (JitOptions::contraction_epilogues); off: they form fused groups.
  bool contraction_epilogues = true;
  // Smallest result that takes the post-ops (JitOptions::epilogue_min_elements; 0: from the L2 size).
  std::int64_t epilogue_min_elements = 0;
  // Loop traces run loop-invariant steps once per trace run (JitOptions::hoist_loop_invariants).
  bool hoist_invariants = true;
  // Fused groups take ops of their shape further on when nothing in between
  // needs the earlier ones (JitOptions::nonadjacent_fusion, plan_groups.h).
  bool nonadjacent_fusion = true;
  // Fused groups whose rows are short run them as long tiles where the
  // inputs allow (JitOptions::short_row_tiles, fused_tiling.h).
  bool short_row_tiles = true;
  // Fused elementwise groups run on the engine's device where it can run
  // them (JitOptions::device, device_placement.h); a cost-model axis.
  bool fused_on_device = false;
};

// Plans a trace. Never fails: ops it cannot fuse become kernel steps.
Plan plan_trace(const vm::Program& program, const Trace& trace, const ShapeKnowledge& knowledge,
                const PlanOptions& options);

}  // namespace canary::jit
