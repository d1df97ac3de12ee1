// Emission through the code cache, shared by every x86 code generator: find
// the block cached under a key, or set up a CodeHolder for the host with an
// error handler that keeps AsmJit's first error, let the generator emit and
// finalize into it, and install the result.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <asmjit/core.h>

#include "jit/x86/code_cache.h"

namespace canary::jit::x86 {

// Attaches an emitter to `code`, emits the function and finalizes; returns
// false with `error` set for a failure of its own (AsmJit errors are caught
// by emit_cached).
using CodeEmitter = std::function<bool(asmjit::CodeHolder& code, std::string& error)>;

// The block cached under key, or a newly emitted and installed one; nullptr
// with `error` set (prefixed with `what`) when emission or installation fails.
std::shared_ptr<const CodeBlock> emit_cached(CodeCache& cache, const std::string& key, const std::string& what,
                                             const CodeEmitter& emit, std::string& error);

}  // namespace canary::jit::x86
