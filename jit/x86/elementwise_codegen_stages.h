// The stages of elementwise kernel emission, shared by the files that
// implement them: the function body with its row and d2 loops
// (elementwise_codegen_loops.cpp) and the per-vector evaluation of the node
// DAG (elementwise_codegen_nodes.cpp). compile_elementwise runs them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <asmjit/x86.h>

#include "jit/fused_kernel.h"
#include "jit/x86/isa.h"
#include "jit/x86/vector_math.h"

namespace canary::jit::x86 {

// Produces the value of kernel input `input` for the vector being evaluated
// (a load, or the row's broadcast register).
using InputLoader = std::function<asmjit::x86::Vec(std::uint16_t input)>;

// Memory holding `bits` in every lane of the context's register width.
asmjit::x86::Mem lane_constant(VecContext& ctx, std::uint32_t bits);

// Which nodes the outputs need (dead nodes are not emitted).
std::vector<bool> live_nodes(const FusedElementwiseSpec& spec);

// Emits the live nodes of spec in order at the context's width and returns
// one register per node (default-constructed for dead nodes). Each Input
// node's value comes from `load`, called once per input used. Returns false
// with `error` set for an op the backend cannot emit.
bool emit_fused_nodes(VecContext& ctx, const FusedElementwiseSpec& spec, const std::vector<bool>& live,
                      const InputLoader& load, std::vector<asmjit::x86::Vec>& values, std::string& error);

// Emits the whole kernel function (FusedFn) for a checked spec into `cc`.
// Returns false with `error` set when a node cannot be emitted.
bool emit_elementwise_function(asmjit::x86::Compiler& cc, const FusedElementwiseSpec& spec, Isa isa,
                               std::string& error);

}  // namespace canary::jit::x86
