// compile_row: checks a fused row spec, finds its kernel in the code cache or
// emits it with the AsmJit Compiler and installs it.
#include "jit/x86/row_codegen.h"

#include "jit/x86/row_codegen_stages.h"

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
std::string cache_key(const FusedRowSpec& spec, Isa isa) { return std::string(isa_name(isa)) + " " + spec.key(); }

// Emits and finalizes the kernel into `code`; false with `error` set on failure.
bool emit_kernel(const FusedRowSpec& spec, Isa isa, asmjit::CodeHolder& code, std::string& error) {
  FirstErrorHandler handler;
  code.init(asmjit::Environment::host());
  code.setErrorHandler(&handler);
  asmjit::x86::Compiler cc(&code);
  const bool emitted = emit_row_function(cc, spec, isa, error);
  if (emitted && handler.error.empty()) cc.finalize();
  code.setErrorHandler(nullptr);
  if (!emitted) return false;
  if (!handler.error.empty()) {
    error = "row kernel: " + handler.error;
    return false;
  }
  return true;
}

}  // namespace

// Checks, then finds the kernel in the cache or emits and installs it.
CompiledRow compile_row(const FusedRowSpec& spec, Isa isa, CodeCache& cache, std::string& error) {
  if (std::string why = check_row_spec(spec); !why.empty()) {
    error = "row kernel: " + why;
    return {};
  }
  if (!host_supports(isa)) {
    error = "row kernel: this CPU cannot run " + std::string(isa_name(isa)) + " code";
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
  CompiledRow out;
  out.fn = reinterpret_cast<RowFn>(const_cast<void*>(block->entry()));
  out.code_bytes = block->code_bytes();
  out.code = std::move(block);
  return out;
}

}  // namespace canary::jit::x86
