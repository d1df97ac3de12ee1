// The calling thread's MatMul/Gemm/Conv precision and the host's native bf16 support.
#include "kernels/onednn/precision.h"

#include <oneapi/dnnl/dnnl.hpp>

namespace canary::kernels {
namespace {

thread_local MatmulPrecision thread_precision = MatmulPrecision::F32;
thread_local bool thread_emulates_bf16 = false;

// True when oneDNN's effective ISA has bf16 dot products (avx512_bf16 or AMX).
bool probe_native_bf16() {
  try {
    const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace

// The calling thread's precision.
MatmulPrecision current_matmul_precision() { return thread_precision; }

// Saves the calling thread's precision and sets `precision`.
ScopedMatmulPrecision::ScopedMatmulPrecision(MatmulPrecision precision) : previous_(thread_precision) {
  thread_precision = precision;
}

// Restores the saved precision.
ScopedMatmulPrecision::~ScopedMatmulPrecision() { thread_precision = previous_; }

// The ISA probe, run once per process.
bool host_has_native_bf16() {
  static const bool native = probe_native_bf16();
  return native;
}

// Native bf16 on this host and not emulated by a scope on this thread.
bool native_bf16_enabled() { return host_has_native_bf16() && !thread_emulates_bf16; }

// Saves the calling thread's emulation flag and forces emulation.
ScopedBf16Emulation::ScopedBf16Emulation() : previous_(thread_emulates_bf16) { thread_emulates_bf16 = true; }

// Restores the saved emulation flag.
ScopedBf16Emulation::~ScopedBf16Emulation() { thread_emulates_bf16 = previous_; }

}  // namespace canary::kernels
