// Options: what a Runtime may do and the limits it enforces on every call.
#pragma once

#include <cstddef>
#include <cstdint>

namespace canary {

struct Options {
  // Largest single tensor a call may allocate; a larger request is an
  // Error(Resource) naming the node, never an out-of-memory crash.
  std::size_t max_tensor_bytes = std::size_t{16} << 30;
  // Upper bound on the iterations of one Loop or Scan per call, so that a model
  // whose loop never terminates gets an Error(Resource) instead of hanging.
  std::int64_t max_loop_iterations = std::int64_t{1} << 24;
  // Reject NaN or Inf in floating-point inputs with an Error(Input) naming the
  // input and the first bad element. Off by default: sensor streams carry NaN
  // on purpose and models may handle it.
  bool reject_non_finite_inputs = false;
  // Threads used by the oneDNN kernels inside one call (a MatMul, Conv, LSTM,
  // ... may split its work); 0 = the library default (OMP_NUM_THREADS or the
  // core count). Set on the calling thread for the call only. Small ops are
  // usually fastest on one thread.
  int intra_op_threads = 1;
};

}  // namespace canary
