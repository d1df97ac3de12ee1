// The energy model used where RAPL is not readable: core power by ISA
// while busy plus DRAM energy per byte moved.
#include "jit/cost/energy.h"

#include <cmath>

namespace canary::jit::cost {

// Core power per busy core by ISA tier. Server Xeons (Skylake-SP to Sapphire
// Rapids) spend roughly 150-350 W of TDP over 20-56 cores, i.e. 4-7 W per
// fully busy core including its share of uncore; wide vectors draw more
// (the reason for the AVX2 / AVX-512 frequency licences), so the tiers step
// up by 1 W each: scalar 4 W, AVX2 5 W, AVX-512 6 W. One busy core is
// assumed (the measured time is wall time of a call on the calling thread).
//
// Memory traffic: 20 pJ per byte moved. A DRAM access itself costs about
// 20 pJ per bit (1.3-2.6 nJ per 64-bit word in published 45 nm figures), an L2 or
// L3 access 1-2 pJ per byte; bytes_moved counts every operand a step reads
// or writes, most of which stay in cache for per-call tensors, so the
// constant is a blended figure that charges traffic without letting it
// dominate the core term. It matters for comparisons between candidates
// (fused vs unfused moves fewer bytes), not for absolute joules.
namespace {

// Power of one busy core running code of the tier.
double core_watts(x86::Isa isa) {
  switch (isa) {
    case x86::Isa::Scalar: return 4.0;
    case x86::Isa::Avx2: return 5.0;
    case x86::Isa::Avx512: return 6.0;
  }
  return 4.0;
}

constexpr double kJoulesPerByte = 20e-12;

}  // namespace

// Core energy for the busy time plus memory energy for the bytes moved.
double modelled_joules(const WorkEstimate& work, x86::Isa isa, double seconds) {
  const double busy = std::isfinite(seconds) && seconds > 0 ? seconds : 0.0;
  const double bytes = std::isfinite(work.bytes_moved) && work.bytes_moved > 0 ? work.bytes_moved : 0.0;
  return core_watts(isa) * busy + kJoulesPerByte * bytes;
}

}  // namespace canary::jit::cost
