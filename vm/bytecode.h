// Bytecode: typed register, pc, anchor and exit indices, the opcode enum and the instruction record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "canary/tensor.h"
#include "graph/symbolic.h"

namespace canary::vm {

// A register of the frame; every graph value is held in one.
struct RegId {
  std::uint32_t index = UINT32_MAX;
  static constexpr RegId none() { return {}; }
  constexpr bool valid() const { return index != UINT32_MAX; }
  friend constexpr bool operator==(RegId a, RegId b) { return a.index == b.index; }
};

// Index of an instruction in Program::code().
using Pc = std::uint32_t;
inline constexpr Pc kNoPc = UINT32_MAX;

// A place where hot counters count and compiled code may be entered:
// anchor 0 is the graph entry, the others are loop headers.
struct AnchorId {
  std::uint32_t index = UINT32_MAX;
  constexpr bool valid() const { return index != UINT32_MAX; }
  friend constexpr bool operator==(AnchorId a, AnchorId b) { return a.index == b.index; }
};

// A side exit of compiled code, numbered by the JIT.
struct ExitId {
  std::uint32_t index = UINT32_MAX;
  constexpr bool valid() const { return index != UINT32_MAX; }
  friend constexpr bool operator==(ExitId a, ExitId b) { return a.index == b.index; }
};

enum class Opcode : std::uint8_t {
#define X(kind, name) kind,
#include "vm/opcodes.def"
#undef X
};

// The opcode's listing name ("loop_header").
std::string_view opcode_name(Opcode op);

// Base of every per-instruction parameter struct (decoded once, at compile time).
struct InstrParams {
  virtual ~InstrParams() = default;
};

// What a kernel adapter sees: the frame's registers and its operand list.
struct KernelCall {
  Tensor* regs;
  const RegId* inputs;
  const RegId* outputs;
  std::uint16_t num_inputs;
  std::uint16_t num_outputs;

  const Tensor& input(int i) const { return regs[inputs[i].index]; }
  // nullptr when the optional input is absent.
  const Tensor* optional_input(int i) const {
    return i < num_inputs && inputs[i].valid() ? &regs[inputs[i].index] : nullptr;
  }
  Tensor& output(int i) const { return regs[outputs[i].index]; }
  // nullptr when the optional output is absent.
  Tensor* optional_output(int i) const {
    return i < num_outputs && outputs[i].valid() ? &regs[outputs[i].index] : nullptr;
  }
};

// A kernel adapter: unpacks registers and calls one reference kernel.
using KernelFn = void (*)(const InstrParams& params, const KernelCall& call);

// One instruction. Operands live in Program::operands() from `operands`:
// num_inputs input registers followed by num_outputs output registers
// (RegId::none() for an absent optional operand).
struct Instruction {
  Opcode op = Opcode::Return;
  std::uint16_t num_inputs = 0;
  std::uint16_t num_outputs = 0;
  std::uint32_t operands = 0;
  std::uint32_t node = UINT32_MAX;  // index into Program::nodes(), for messages
  std::uint32_t target = 0;         // jump target / loop exit / loop header
  std::uint32_t slot = 0;           // anchor, loop, scan buffer or profile slot (see opcodes.def)
  std::uint32_t aux = 0;            // LoopHeader: anchor
  KernelFn fn = nullptr;
  const InstrParams* params = nullptr;
};

// Move: which pairs may steal the source's buffer (the source dies here).
// Pairs without overlap run in place; `parallel` (a destination is also a
// source) goes through the frame's scratch registers, copying.
struct MoveParams : InstrParams {
  std::vector<std::uint8_t> steal;
  bool parallel = false;
};

// LoopInit / ScanInit: the loop slot, its scan buffers and (Scan) the axes
// of the scanned inputs whose common length is the trip count.
struct LoopParams : InstrParams {
  std::uint32_t loop = 0;
  std::uint32_t first_scan = 0;
  std::uint32_t scan_count = 0;
  std::vector<int> axes;
};

// ScanSlice: take index i (or length-1-i when reverse) along axis.
struct SliceParams : InstrParams {
  int axis = 0;
  bool reverse = false;
};

// ScanStack: insert the iteration axis at `axis`, in reverse order when asked;
// elem_dtype/elem_dims give the shape of a zero-iteration result.
struct StackParams : InstrParams {
  int axis = 0;
  bool reverse = false;
  DType elem_dtype = DType::F32;
  graph::DimVector elem_shape;  // evaluated with the run's bindings; unknown dims become 0
};

}  // namespace canary::vm
