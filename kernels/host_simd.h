// The widest vector ISA of this host, for kernels compiled once per ISA
// (functions with __attribute__((target(...)))) and dispatched at run time.
//
// GCC's target_clones would dispatch through an ifunc resolver, but that
// resolver runs while the loader relocates the binary, before a sanitizer's
// runtime is up, and crashed the ThreadSanitizer build; so each kernel picks
// its clone through host_simd(), read once per process.
#pragma once

namespace canary::kernels {

enum class Simd { Avx512, Avx2, Baseline };

inline Simd host_simd() {
  static const Simd simd = __builtin_cpu_supports("avx512f")                                    ? Simd::Avx512
                           : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? Simd::Avx2
                                                                                              : Simd::Baseline;
  return simd;
}

}  // namespace canary::kernels
