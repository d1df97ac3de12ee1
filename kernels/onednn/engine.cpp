// The oneDNN CPU engine and per-thread streams.
//
// Threading model: one engine is shared by the whole process (creating and
// executing primitives on it is thread-safe in oneDNN), while each thread gets
// its own stream, so sessions running on different threads never share
// mutable oneDNN state. Parallelism inside a primitive is oneDNN's OpenMP
// runtime (OMP_NUM_THREADS). Both objects throw dnnl::error when oneDNN cannot
// create them; callers in kernels/onednn turn that into "does not apply".
#include "kernels/onednn/engine.h"

namespace canary::kernels::onednn {

// The shared CPU engine, created once (thread-safe static initialisation).
const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// The calling thread's stream, created on the thread's first oneDNN call.
dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

}  // namespace canary::kernels::onednn
