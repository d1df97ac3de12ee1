// emit_cached: the find / emit / install sequence every x86 generator uses.
#include "jit/x86/cached_emission.h"

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

}  // namespace

std::shared_ptr<const CodeBlock> emit_cached(CodeCache& cache, const std::string& key, const std::string& what,
                                             const CodeEmitter& emit, std::string& error) {
  if (std::shared_ptr<const CodeBlock> block = cache.find(key)) return block;
  asmjit::CodeHolder code;
  FirstErrorHandler handler;
  code.init(asmjit::Environment::host());
  code.setErrorHandler(&handler);
  const bool emitted = emit(code, error);
  code.setErrorHandler(nullptr);
  if (!emitted) return nullptr;
  if (!handler.error.empty()) {
    error = what + ": " + handler.error;
    return nullptr;
  }
  return cache.install(key, code, error);
}

}  // namespace canary::jit::x86
