// PTX emission for a FusedElementwiseSpec: one kernel over the spec's 3-dim
// iteration space, and the launch-parameter layout it expects.
//
// The kernel is a grid-stride loop over flat element indices e in
// [begin, end) of the dense output space [d0, d1, d2] (32-bit indices: a
// launch covers fewer than 2^31 elements). Each e is split into
// row = e / d2, i2 = e % d2, i0 = row / d1, i1 = row % d1 with
// multiply-high "magic number" division (no hardware divide), and input k
// is read at i0 * stride0 + i1 * stride1 + (inner_broadcast ? 0 : i2), as
// FusedArgs describes. Outputs are written at e.
//
// When the launcher sets vector_ok (every input contiguous, so it is read
// at e too; every base 16-byte aligned; begin a multiple of 4), a first loop
// handles four elements per thread with 16-byte loads and stores and no
// index decoding, and the general loop above only finishes the tail. This
// keeps enough bytes in flight to approach the copy bandwidth.
//
// Parameters, in order:
//   .u64 in_0 .. in_{n-1}          input base addresses
//   .u64 out_0 .. out_{m-1}        output base addresses (element e at base + 4 e)
//   .s64 s0_0, s1_0, s0_1, ...     per input: stride0, stride1 (elements)
//   .u32 d1, d2, begin, end, magic1, shift1, magic2, shift2, vector_ok
//                                  (FusedLaunchScalars)
//   .u64 flag                      value canary word (atomically OR-ed with 1)
// The exact-shape variant bakes d1, d2 and their magic numbers into the
// code and ignores those four parameters; the symbolic variant reads them,
// so one module serves every shape.
#pragma once

#include <cstdint>
#include <string>

#include "jit/fused_kernel.h"

namespace canary::jit::cuda {

// The name of the kernel entry in every module emit_fused_ptx returns.
inline constexpr const char* kFusedEntryName = "canary_fused";
// The most elements one launch covers.
inline constexpr std::int64_t kMaxGpuElements = (std::int64_t{1} << 31) - 1;

// Unsigned division by a fixed d in [1, 2^31) for dividends below 2^31:
// q = (mulhi(n, magic) + n) >> shift.
struct Divider {
  std::uint32_t magic = 0;
  std::uint32_t shift = 0;
  // n / d the way the kernel computes it.
  std::uint32_t divide(std::uint32_t n) const;
};
Divider make_divider(std::uint32_t d);

// The scalar launch parameters, in parameter order.
struct FusedLaunchScalars {
  std::uint32_t d1 = 1, d2 = 1;
  std::uint32_t begin = 0, end = 0;
  std::uint32_t magic1 = 0, shift1 = 0;
  std::uint32_t magic2 = 0, shift2 = 0;
  std::uint32_t vector_ok = 0;  // set by the launcher when the 4-wide loop may run
};
// Scalars for rows [row_begin, row_end) of a [*, d1, d2] space. The caller
// checks the ranges first (d1, d2 >= 1, row_end * d2 <= kMaxGpuElements).
FusedLaunchScalars make_launch_scalars(std::int64_t d1, std::int64_t d2, std::int64_t row_begin,
                                       std::int64_t row_end);

// The PTX module text for `spec`, targeting `target` ("sm_90", "sm_80").
// The spec must pass check_fused_spec.
std::string emit_fused_ptx(const FusedElementwiseSpec& spec, const std::string& target = "sm_90");

}  // namespace canary::jit::cuda
