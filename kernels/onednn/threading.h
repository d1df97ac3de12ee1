// How many OpenMP threads oneDNN primitives use on the calling thread.
#pragma once

namespace canary::kernels::onednn {

// The number of threads a oneDNN primitive created or run now on the calling
// thread would use (OpenMP's nthreads-var of this thread).
int current_threads();

}  // namespace canary::kernels::onednn
