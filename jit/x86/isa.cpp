// Vector ISA tiers: names, lane counts and which tiers this CPU can run,
// read once from AsmJit's CPUID-based feature detection.
#include "jit/x86/isa.h"

#include <asmjit/core.h>

namespace canary::jit::x86 {
namespace {

// The host's x86 features (CPUID with the OS-enabled register state applied).
const asmjit::CpuFeatures::X86& host_features() { return asmjit::CpuInfo::host().features().x86(); }

// AVX2 with FMA: the floor of every compiled tier.
bool host_has_avx2_fma() {
  const auto& f = host_features();
  return f.hasAVX2() && f.hasFMA();
}

// The AVX-512 subsets the Avx512 tier emits (F, DQ, BW, VL).
bool host_has_avx512() {
  const auto& f = host_features();
  return host_has_avx2_fma() && f.hasAVX512_F() && f.hasAVX512_DQ() && f.hasAVX512_BW() && f.hasAVX512_VL();
}

}  // namespace

// "scalar", "avx2", "avx512": part of every code cache key.
std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
  }
  return "?";
}

// Avx512, else Avx2, else nothing.
std::optional<Isa> detect_host_isa() {
  if (host_has_avx512()) return Isa::Avx512;
  if (host_has_avx2_fma()) return Isa::Avx2;
  return std::nullopt;
}

// Scalar and Avx2 need AVX2+FMA; Avx512 also F, DQ, BW and VL.
bool host_supports(Isa isa) {
  if (isa == Isa::Avx512) return host_has_avx512();
  return host_has_avx2_fma();
}

// f32 lanes of the tier's vector register.
int isa_lanes(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return 1;
    case Isa::Avx2: return 8;
    case Isa::Avx512: return 16;
  }
  return 1;
}

}  // namespace canary::jit::x86
