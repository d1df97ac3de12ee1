// A parsed PTX kernel for the CPU emulator of the CUDA backend: the subset
// of PTX that jit/cuda emits (one .entry per module, .reg and .shared
// declarations, scalar and 4-wide f32 loads and stores, 32- and 64-bit
// integer arithmetic, f32 arithmetic and conversions, predicates, branches,
// bar.sync, shfl.sync.bfly, red.global.or). Anything else is a parse error
// that names the line, so a new instruction in the emitter fails the
// emulated tests loudly instead of being skipped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace canary::ptx_emulator {

enum class Op : std::uint8_t {
  // data movement
  Mov32, Mov64, LdParam32, LdParam64, Cvta,
  LdGlobalF32, LdGlobalV4F32, StGlobalF32, StGlobalV4F32, LdSharedF32, StSharedF32, RedGlobalOr32,
  // 32-bit integers
  Add32, Sub32, MulLo32, MulHiU32, MadLo32, Shl32, ShrU32, ShrS32, And32, Or32,
  // 64-bit integers
  Add64, Sub64, MulLo64, MadLo64, MulWideU32, Shl64, CvtU64U32,
  // f32
  AddF32, SubF32, MulF32, FmaF32, DivF32, DivApproxF32, RcpF32, RcpApproxF32, SqrtF32, Ex2ApproxF32,
  Lg2ApproxF32, AbsF32, NegF32, MinF32, MaxF32, CopysignF32,
  // conversions
  CvtRniF32, CvtRpiF32, CvtRmiF32, CvtRziF32, CvtRniS32F32, CvtRnF32S32,
  // comparisons and predicates
  SetpF32, SetpU32, SetpS32, SelpB32, TestpNan, TestpFinite, OrPred, AndPred, NotPred,
  // control
  Bra, Ret, BarSync, ShflBfly,
};

// Comparison of a setp.
enum class Cmp : std::uint8_t { Eq, Ne, Lt, Le, Gt, Ge, Equ, Neu, Ltu, Leu, Gtu, Geu, Num, Nan };

// Special registers a kernel may read.
enum class Special : std::uint8_t { TidX, NtidX, CtaidX, NctaidX, LaneId };

struct Operand {
  enum class Kind : std::uint8_t { None, Reg, Imm, Special, Label, Address };
  Kind kind = Kind::None;
  int reg = -1;             // register slot (Reg; the base of an Address in a register)
  std::uint64_t imm = 0;    // raw bits: an integer, or an f32's bits (Imm); a symbol's offset (Address)
  Special special = Special::TidX;
  int target = -1;          // instruction index (Label)
  std::int64_t offset = 0;  // displacement of an Address
  bool symbol = false;      // an Address based on a symbol (imm) rather than a register
};

struct Instruction {
  Op op = Op::Ret;
  Cmp cmp = Cmp::Eq;
  int guard = -1;            // predicate slot, or -1
  bool guard_negated = false;
  int dst[4] = {-1, -1, -1, -1};  // destination slots: one, or four for a v4 load
  Operand src[4];                 // value operands in PTX order (the four values of a v4 store; the label of bra)
  Operand address;                // the [...] operand of loads, stores and red
  int line = 0;                   // source line, for messages
};

// One kernel parameter: its name, bytes (4 or 8) and offset in the block.
struct Param {
  std::string name;
  int bytes = 0;
  int offset = 0;
};

struct Program {
  std::string entry;
  std::vector<Param> params;
  int param_bytes = 0;
  int registers = 0;     // slots per thread
  int shared_bytes = 0;  // static shared memory per block
  std::vector<Instruction> code;
};

// Parses a module holding one .entry; on failure returns false and sets
// *error to "line N: what".
bool parse_program(const std::string& text, Program* out, std::string* error);

}  // namespace canary::ptx_emulator
