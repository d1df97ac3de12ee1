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

// Sets mask (a ymm) to all ones in its first `rem` (1 .. 7) dwords and zero
// in the rest: the AVX2 tail mask of elementwise and row kernels alike.
void load_avx2_tail_mask(asmjit::x86::Compiler& cc, const asmjit::x86::Vec& mask, const asmjit::x86::Gp& rem);

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

// --- The row loop both kernel families run over the flattened (i0, i1) space.

// i0 = row / d1, i1 = row % d1 for the first row (rows are not negative);
// creates i0 and i1.
void emit_split_row(asmjit::x86::Compiler& cc, const asmjit::x86::Gp& row, const asmjit::x86::Gp& d1,
                    asmjit::x86::Gp& i0, asmjit::x86::Gp& i1);
// row += 1 and (i0, i1) += (0, 1) with carry into i0 at d1.
void emit_advance_row(asmjit::x86::Compiler& cc, const asmjit::x86::Gp& row, const asmjit::x86::Gp& d1,
                      const asmjit::x86::Gp& i0, const asmjit::x86::Gp& i1);
// Per row, for each used input k: the pointer at i0 * stride0 + i1 * stride1
// into in_ptr[k], or (inner_broadcast) that one value into broadcast[k].
// `off` and `t` are scratch registers.
void emit_input_row_pointers(asmjit::x86::Compiler& cc, const FusedElementwiseSpec& spec,
                             const std::vector<bool>& used, const asmjit::x86::Gp& inputs,
                             const asmjit::x86::Gp& strides, const asmjit::x86::Gp& i0, const asmjit::x86::Gp& i1,
                             const std::vector<asmjit::x86::Gp>& in_ptr,
                             const std::vector<asmjit::x86::Vec>& broadcast, const asmjit::x86::Gp& off,
                             const asmjit::x86::Gp& t);
// result = 1 when `flag` or any lane of the non-finite accumulator `acc`
// (unused on the Scalar tier) is set, else 0.
void emit_non_finite_result(asmjit::x86::Compiler& cc, Isa isa, const asmjit::x86::Vec& acc,
                            const asmjit::x86::Gp& flag, const asmjit::x86::Gp& result);
// Frame attributes every vector kernel needs: VEX spills, all 32 vector
// registers on AVX-512, vzeroupper before returning.
void enable_vector_frame(asmjit::FuncNode* fn, Isa isa);

// Emits the whole kernel function (FusedFn) for a checked spec into `cc`.
// Returns false with `error` set when a node cannot be emitted.
bool emit_elementwise_function(asmjit::x86::Compiler& cc, const FusedElementwiseSpec& spec, Isa isa,
                               std::string& error);

}  // namespace canary::jit::x86
