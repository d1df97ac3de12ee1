// compile_elementwise: checks a fused elementwise spec, finds its kernel in
// the code cache or emits it with the AsmJit Compiler and installs it.
#include "jit/x86/elementwise_codegen.h"

#include "jit/x86/elementwise_codegen_stages.h"

namespace canary::jit::x86 {
namespace {

// Records the first AsmJit error instead of letting emission continue silently.
class FirstErrorHandler : public asmjit::ErrorHandler {
 public:
  void handleError(asmjit::Error err, const char* message, asmjit::BaseEmitter*) override {
    if (error.empty()) error = std::string("AsmJit error ") + std::to_string(err) + ": " + message;
  }
  std::string error;
};

// The cache key: the tier and the spec's text form.
std::string cache_key(const FusedElementwiseSpec& spec, Isa isa) {
  return std::string(isa_name(isa)) + " " + spec.key();
}

// Emits and finalizes the kernel into `code`; false with `error` set on failure.
bool emit_kernel(const FusedElementwiseSpec& spec, Isa isa, asmjit::CodeHolder& code, std::string& error) {
  FirstErrorHandler handler;
  code.init(asmjit::Environment::host());
  code.setErrorHandler(&handler);
  asmjit::x86::Compiler cc(&code);
  const bool emitted = emit_elementwise_function(cc, spec, isa, error);
  if (emitted && handler.error.empty()) cc.finalize();
  code.setErrorHandler(nullptr);
  if (!emitted) return false;
  if (!handler.error.empty()) {
    error = "elementwise kernel: " + handler.error;
    return false;
  }
  return true;
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
  const std::string key = cache_key(spec, isa);
  std::shared_ptr<const CodeBlock> block = cache.find(key);
  if (!block) {
    asmjit::CodeHolder code;
    if (!emit_kernel(spec, isa, code, error)) return {};
    block = cache.install(key, code, error);
    if (!block) return {};
  }
  CompiledElementwise out;
  out.fn = reinterpret_cast<FusedFn>(const_cast<void*>(block->entry()));
  out.code_bytes = block->code_bytes();
  out.code = std::move(block);
  return out;
}

}  // namespace canary::jit::x86
