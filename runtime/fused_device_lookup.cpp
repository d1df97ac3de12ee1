// open_fused_device: the runtime knows every layer, so it is the one place
// that opens the CUDA backend for the JIT (canary_jit cannot depend on it).
#include "runtime/fused_device_lookup.h"

#if CANARY_HAVE_CUDA
#include "jit/cuda/cuda_fused_device.h"
#endif

namespace canary {

jit::DeviceChoice open_fused_device(const JitOptions& options) {
  jit::DeviceChoice choice;
  if (options.device == "cpu") return choice;
  choice.device = jit::device_override();
  if (choice.device) return choice;
#if CANARY_HAVE_CUDA
  choice.device = jit::cuda::open_cuda_fused_device(choice.absent_reason);
#else
  choice.absent_reason = "this build has no CUDA backend (the CUDA toolkit's headers were not found)";
#endif
  return choice;
}

}  // namespace canary
