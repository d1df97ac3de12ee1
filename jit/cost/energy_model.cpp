// The energy model used where RAPL is not readable: core power by ISA
// while busy plus DRAM energy per byte moved.
#include "jit/cost/energy.h"
#include "jit/cost/objective.h"

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

// Groups on a GPU (the CUDA backend stages each one's inputs over the bus
// and copies its outputs back). While the copies run, the board draws
// active power above idle: a data-centre GPU (A100, H100, H200: 300-700 W
// TDP, 50-100 W idle) running copies and a memory-bound kernel that fills
// a few SMs sits well below TDP, so 60 W above idle is charged for the bus
// time at kModelledBusBytesPerSecond. The link itself: PCIe spends about
// 5-7 pJ per bit, 50 pJ per byte.
constexpr double kDeviceActiveWatts = 60.0;
constexpr double kBusJoulesPerByte = 50e-12;

}  // namespace

// Core energy for the busy time (the calling thread waits for the GPU's
// copies too) plus memory energy for the bytes moved, plus the GPU's.
double modelled_joules(const WorkEstimate& work, x86::Isa isa, double seconds) {
  const auto non_negative = [](double v) { return std::isfinite(v) && v > 0 ? v : 0.0; };
  const double busy = non_negative(seconds);
  const double bytes = non_negative(work.bytes_moved);
  const double device_bytes = non_negative(work.device_bytes);
  const double bus_seconds = device_bytes / kModelledBusBytesPerSecond;
  return core_watts(isa) * busy + kJoulesPerByte * bytes + kDeviceActiveWatts * bus_seconds +
         kBusJoulesPerByte * device_bytes;
}

}  // namespace canary::jit::cost
