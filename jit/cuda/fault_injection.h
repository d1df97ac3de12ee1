// Fault injection for the CUDA backend: CANARY_CUDA_FAULT=load|launch|oom
// makes module loading, kernel launch or device allocation fail, so tests
// and the GPU check can exercise every CPU fallback on a healthy machine.
#pragma once

namespace canary::jit::cuda {

enum class CudaFault { None, Load, Launch, Oom };

// The fault CANARY_CUDA_FAULT asks for; read on every call, so a test can
// set and clear it around one operation. Unknown values mean None.
CudaFault injected_cuda_fault();
// "load", "launch", "oom" or "none".
const char* cuda_fault_name(CudaFault fault);
// The fault a CANARY_CUDA_FAULT value names (nullptr and unknown: None).
CudaFault parse_cuda_fault(const char* text);

}  // namespace canary::jit::cuda
