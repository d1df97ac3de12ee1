// PTX emission for a FusedRowSpec: one kernel that runs the elementwise
// prologue and the row op (Sum, Mean, Max, Softmax, LayerNorm along d2) with
// one thread block per row.
//
// Blocks take rows row_begin + ctaid, + nctaid, ... of the (d0 * d1) rows.
// Thread t of a block of T threads owns the elements j = t, t + T, ... of
// its row and folds them into one accumulator in that order. The block then
// combines the accumulators: a butterfly across each warp's 32 lanes
// (shfl.sync.bfly with offsets 16, 8, 4, 2, 1), one partial per warp in
// shared memory, and every thread folding the partials in warp order. The
// order is fixed by T alone (row_block_threads), so a run is deterministic
// and a host model can reproduce its bits (tests/cuda/row_model.h).
//
// Softmax and LayerNorm write their row values into the output in the first
// pass and read them back in the later ones (each thread rereads only what it
// wrote, so no barrier is needed between passes); the prologue runs once per
// element. Softmax: max (NaNs ignored, as the reference), then the sum of
// exp(v - max), then exp(v - max) / sum. LayerNorm: mean, then the sum of
// squared deviations, then (v - mean) / sqrt(var + epsilon) * scale + bias.
// Compensated accumulation keeps a Neumaier compensation per thread and
// folds (sum, compensation) pairs with a two-sum.
//
// Parameters, in order:
//   .u64 in_0 .. in_{n-1}      prologue input base addresses
//   .u64 out                   output (Sum/Mean/Max: one float per row at
//                              out + 4 row; Softmax/LayerNorm: d2 floats at
//                              out + 4 row d2)
//   .u64 scale, bias           LayerNorm vectors of d2 floats (0 when unused)
//   .s64 s0_0, s1_0, ...       per input: stride0, stride1 (elements)
//   .u32 d1, d2, row_begin, row_end, magic1, shift1   (RowLaunchScalars)
//   .u64 flag                  value canary word (atomically OR-ed with 1)
// The exact-shape variant bakes d1, d2 and d1's magic numbers in and
// ignores those parameters.
#pragma once

#include <cstdint>
#include <string>

#include "jit/fused_row.h"

namespace canary::jit::cuda {

// The name of the kernel entry in every module emit_row_ptx returns.
inline constexpr const char* kRowEntryName = "canary_row";
// The most threads a row's block has.
inline constexpr unsigned kMaxRowThreads = 256;

// Threads per block for rows of d2 elements: d2 rounded up to whole warps,
// at least one warp and at most kMaxRowThreads.
unsigned row_block_threads(std::int64_t d2);

// The scalar launch parameters, in parameter order.
struct RowLaunchScalars {
  std::uint32_t d1 = 1, d2 = 0;
  std::uint32_t row_begin = 0, row_end = 0;
  std::uint32_t magic1 = 0, shift1 = 0;
};
// The caller checks the ranges first (d1 >= 1, rows and d2 below 2^31).
RowLaunchScalars make_row_scalars(std::int64_t d1, std::int64_t d2, std::int64_t row_begin, std::int64_t row_end);

// The PTX module text for `spec`, targeting `target` ("sm_90", "sm_80").
// The spec must pass check_row_spec.
std::string emit_row_ptx(const FusedRowSpec& spec, const std::string& target = "sm_90");

}  // namespace canary::jit::cuda
