// How many OpenMP threads oneDNN primitives use on the calling thread, and
// the rule that keeps small ops on one thread.
#pragma once

#include <optional>

#include "kernels/onednn.h"

namespace canary::kernels::onednn {

// The number of threads a oneDNN primitive created or run now on the calling
// thread would use (OpenMP's nthreads-var of this thread).
int current_threads();

// Work below which a second thread costs more than it saves. Waking an
// OpenMP worker for one primitive costs about 6 us on the 2-core machines
// this was measured on (`canary run` of one MatMul, 1 vs 2 threads: 32^3
// 1.3 vs 8.2 us, 64^3 3.9 vs 7.8, 128^3 20 vs 26, 256^3 148 vs 103), so
// compute-bound ops go parallel from 8 Mflop per parallel section, and
// memory-bound ones from 2^18 elements (as the JIT's fused groups do).
inline constexpr double kParallelMinFlops = 8e6;
inline constexpr double kParallelMinElements = 262144.0;

// While alive, the calling thread's oneDNN ops run on one thread when
// `work` is below `threshold`; otherwise nothing changes. Primitives are
// keyed by thread count (PrimitiveKey), so a small op's primitive is created
// for one thread and never partitions its work for more.
class SerialWhenSmall {
 public:
  explicit SerialWhenSmall(double work, double threshold = kParallelMinFlops);

 private:
  std::optional<OnednnThreadScope> scope_;
};

}  // namespace canary::kernels::onednn
