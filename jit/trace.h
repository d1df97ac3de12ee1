// Trace: the straight-line record of one execution of an anchor's region —
// the instructions actually run, the shapes and dtypes they saw, and the
// branch directions taken. Produced by TraceRecorder, consumed by planning.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "canary/tensor.h"
#include "vm/bytecode.h"

namespace canary::jit {

// The smallest and largest finite elements of an f32 value the recorder saw
// an instruction write (what range value canaries are built from).
struct ValueSpan {
  float min = 0.0f;
  float max = 0.0f;
};

// A register's value as the recorder saw it.
struct TraceValue {
  vm::RegId reg;
  bool defined = false;
  DType dtype = DType::F32;
  Shape shape;
  // Instruction outputs of dtype f32 with at least one finite element.
  std::optional<ValueSpan> span;
};

struct TraceOp {
  vm::Pc pc = 0;
  vm::Opcode opcode = vm::Opcode::Kernel;  // Kernel, Move, JumpIfFalse, LoopNext, ScanSlice or ScanAppend
  std::vector<TraceValue> inputs;          // before the instruction ran
  std::vector<TraceValue> outputs;         // after it ran
  bool condition = false;                  // JumpIfFalse: the condition was true (fell through)
};

// Why recording stopped where it did.
enum class TraceEnd {
  Return,      // the graph entry's region ran to the end of the program
  LoopBack,    // a loop header's region ran one whole iteration (ends at LoopNext)
  Unsupported, // an instruction compiled code does not run (loop or scan set-up, stacking, nested loop)
  Cut,         // the planner asked to stop at this pc (a branch that kept deoptimising)
  TooLong,     // more than kMaxTraceOps instructions
  BackEdge,    // a side trace in a loop body reached the loop's back edge (the interpreter takes it)
};

struct Trace {
  std::uint32_t id = 0;
  vm::AnchorId anchor;
  vm::Pc anchor_pc = 0;   // the Entry or LoopHeader instruction
  vm::Pc start_pc = 0;    // first instruction of the region (anchor_pc + 1, or a side trace's exit pc)
  vm::Pc end_pc = 0;      // where the interpreter continues after the region
  TraceEnd end = TraceEnd::Return;
  std::vector<TraceOp> ops;
  // Registers the region reads before writing them, in first-read order,
  // with their values at entry. These are what entry guards check.
  std::vector<TraceValue> entry;
  // A side trace: recorded from a side exit of another trace of the anchor,
  // at the pc that exit resumes at (start_pc), to the region's end. The
  // exit's resume state is its entry; it never iterates.
  bool side = false;

  // True when the ops form one whole loop iteration (compiled code iterates).
  bool loops() const { return end == TraceEnd::LoopBack; }
};

inline constexpr std::size_t kMaxTraceOps = 4096;

std::string_view trace_end_name(TraceEnd end);

}  // namespace canary::jit
