// Emits a FusedRowSpec as an x86-64 row kernel (RowFn) for one Isa tier.
#pragma once

#include <memory>
#include <string>

#include "jit/fused_row.h"
#include "jit/x86/code_cache.h"
#include "jit/x86/isa.h"

namespace canary::jit::x86 {

struct CompiledRow {
  std::shared_ptr<const CodeBlock> code;
  RowFn fn = nullptr;
  std::size_t code_bytes = 0;
};

// Returns the kernel, or an empty result with `error` set.
CompiledRow compile_row(const FusedRowSpec& spec, Isa isa, CodeCache& cache, std::string& error);

}  // namespace canary::jit::x86
