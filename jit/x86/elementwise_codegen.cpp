// compile_elementwise: checks a fused elementwise spec, finds its kernel in
// the code cache or emits it with the AsmJit Compiler and installs it.
#include "jit/x86/elementwise_codegen.h"

#include "jit/x86/cached_emission.h"
#include "jit/x86/elementwise_codegen_stages.h"

namespace canary::jit::x86 {
namespace {

// The cache key: the tier and the spec's text form.
std::string cache_key(const FusedElementwiseSpec& spec, Isa isa) {
  return std::string(isa_name(isa)) + " " + spec.key();
}

}  // namespace

// Checks, then finds the kernel in the cache or emits and installs it.
CompiledElementwise compile_elementwise(const FusedElementwiseSpec& spec, Isa isa, CodeCache& cache,
                                        std::string& error) {
  if (std::string why = check_fused_spec(spec); !why.empty()) {
    error = "elementwise kernel: " + why;
    return {};
  }
  if (!host_supports(isa)) {
    error = "elementwise kernel: this CPU cannot run " + std::string(isa_name(isa)) + " code";
    return {};
  }
  auto emit = [&](asmjit::CodeHolder& code, std::string& err) {
    asmjit::x86::Compiler cc(&code);
    if (!emit_elementwise_function(cc, spec, isa, err)) return false;
    cc.finalize();
    return true;
  };
  std::shared_ptr<const CodeBlock> block = emit_cached(cache, cache_key(spec, isa), "elementwise kernel", emit, error);
  if (!block) return {};
  CompiledElementwise out;
  out.fn = reinterpret_cast<FusedFn>(const_cast<void*>(block->entry()));
  out.code_bytes = block->code_bytes();
  out.code = std::move(block);
  return out;
}

}  // namespace canary::jit::x86
