// Vector ISA tiers the x86 backend emits, and run-time CPU detection.
#pragma once

#include <optional>
#include <string_view>

namespace canary::jit::x86 {

// Avx512: zmm, 16 lanes, k-mask tails (needs AVX512 F, DQ, BW, VL).
// Avx2: ymm, 8 lanes, vmaskmovps tails in elementwise kernels, one-lane
// tails in row kernels (needs AVX2 and FMA).
// Scalar: one lane at a time in xmm registers with the same VEX instructions
// (needs AVX2 and FMA); used for tiny loops and forced for testing.
// A CPU without AVX2+FMA gets no compiled code: the interpreter runs.
enum class Isa { Scalar, Avx2, Avx512 };

std::string_view isa_name(Isa isa);
// The best tier this CPU supports, or nullopt when it lacks AVX2+FMA.
std::optional<Isa> detect_host_isa();
// True when this CPU can run code of the given tier.
bool host_supports(Isa isa);
// Lanes of one vector register in the tier (16, 8, 1).
int isa_lanes(Isa isa);

}  // namespace canary::jit::x86
