// Emits a FusedElementwiseSpec as an x86-64 kernel (FusedFn) for one Isa tier:
// per row, a vector main loop over d2 with a masked (AVX-512) or scalar
// (AVX2) tail; inputs with inner_broadcast are loaded once per row and
// broadcast; transcendental nodes go through jit/x86/vector_math.
#pragma once

#include <memory>
#include <string>

#include "jit/fused_kernel.h"
#include "jit/x86/code_cache.h"
#include "jit/x86/isa.h"

namespace canary::jit::x86 {

struct CompiledElementwise {
  std::shared_ptr<const CodeBlock> code;
  FusedFn fn = nullptr;
  std::size_t code_bytes = 0;
};

// Returns the kernel, or an empty result with `error` set (unsupported node,
// AsmJit error, cache full). Specs with equal key() and isa share code.
CompiledElementwise compile_elementwise(const FusedElementwiseSpec& spec, Isa isa, CodeCache& cache,
                                        std::string& error);

}  // namespace canary::jit::x86
