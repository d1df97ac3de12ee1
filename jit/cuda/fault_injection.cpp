// CANARY_CUDA_FAULT parsing.
#include "jit/cuda/fault_injection.h"

#include <cstdlib>
#include <cstring>

namespace canary::jit::cuda {

CudaFault parse_cuda_fault(const char* text) {
  if (text == nullptr) return CudaFault::None;
  if (std::strcmp(text, "load") == 0) return CudaFault::Load;
  if (std::strcmp(text, "launch") == 0) return CudaFault::Launch;
  if (std::strcmp(text, "oom") == 0) return CudaFault::Oom;
  return CudaFault::None;
}

CudaFault injected_cuda_fault() { return parse_cuda_fault(std::getenv("CANARY_CUDA_FAULT")); }

const char* cuda_fault_name(CudaFault fault) {
  switch (fault) {
    case CudaFault::Load: return "load";
    case CudaFault::Launch: return "launch";
    case CudaFault::Oom: return "oom";
    case CudaFault::None: break;
  }
  return "none";
}

}  // namespace canary::jit::cuda
