// Guards ("canaries"): the checks a compiled trace makes on entry to each
// fusion group, as data (planned by jit/plan) and as emitted machine code
// (jit/x86/guard_codegen).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace canary::jit {

// What guard code reads for one tensor: gathered by the trace driver from the
// frame's registers (one pass over the group's inputs), then checked by code.
struct TensorHeader {
  const void* data = nullptr;
  const std::int64_t* dims = nullptr;
  std::int64_t rank = -1;   // -1: undefined register
  std::int64_t dtype = -1;  // static_cast<int64_t>(canary::DType)
};

enum class GuardKind : std::uint8_t {
  Rank,          // headers[t].rank == value
  DType,         // headers[t].dtype == value
  DimEquals,     // dims[axis] == value
  DimRange,      // value <= dims[axis] <= value2
  DimDivisible,  // dims[axis] % value == 0 (value > 0)
  DimsEqual,     // headers[t].dims[axis] == headers[t2].dims[axis2]
  Aligned,       // (uintptr_t)data % value == 0 (value a power of two)
  CaptureDim,    // not a check: symbols[value] = dims[axis] (after the checks before it passed)
};

struct Guard {
  GuardKind kind = GuardKind::Rank;
  std::uint32_t tensor = 0;   // index into the header array
  std::uint32_t axis = 0;
  std::uint32_t tensor2 = 0;  // DimsEqual
  std::uint32_t axis2 = 0;
  std::int64_t value = 0;
  std::int64_t value2 = 0;
};

// Guards run in order; a dim guard on a tensor must come after that tensor's
// Rank guard (the planner orders them so), so no check reads past dims.
struct GuardSet {
  std::vector<Guard> guards;
  std::uint32_t num_tensors = 0;
  std::uint32_t num_symbols = 0;  // size of the symbols array CaptureDim writes
};

// Emitted guard function: 0 when every guard passed (symbols filled), else
// the index + 1 of the first failing guard.
using GuardFn = std::uint32_t (*)(const TensorHeader* headers, std::int64_t* symbols);

// Evaluates a guard set in C++ (the oracle for the emitted code, and the
// fallback where no code can be emitted). Same result convention as GuardFn.
std::uint32_t evaluate_guards(const GuardSet& set, const TensorHeader* headers, std::int64_t* symbols);

// "x.dim1 == 128", "x.rank == 3", "x.dim0 % 8 == 0", "x.dim1 == h.dim0", with
// `names` giving a display name per header index.
std::string describe_guard(const Guard& g, const std::vector<std::string>& names);
// What a header actually held for a failed guard: "saw 96", "saw rank 2".
std::string describe_observed(const Guard& g, const TensorHeader* headers);

}  // namespace canary::jit
