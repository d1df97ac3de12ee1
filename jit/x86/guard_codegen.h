// Emits a GuardSet as one straight-line x86-64 function (GuardFn): loads from
// the header array, compares against immediates, branches to a shared fail
// path that returns the failing guard's index + 1.
#pragma once

#include <memory>
#include <string>

#include "jit/guard.h"
#include "jit/x86/code_cache.h"

namespace canary::jit::x86 {

struct CompiledGuards {
  std::shared_ptr<const CodeBlock> code;  // keeps the function alive
  GuardFn fn = nullptr;
};

// Returns the compiled guards, or an empty result with `error` set (AsmJit
// error, cache full). Identical guard sets share code through the cache.
CompiledGuards compile_guards(const GuardSet& set, CodeCache& cache, std::string& error);

}  // namespace canary::jit::x86
