// How many OpenMP threads oneDNN primitives use on the calling thread, and
// the rule that keeps small ops on one thread.
#pragma once

#include <cstdint>
#include <functional>
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

// Runs body(begin, end) over [0, rows) in contiguous blocks, one per
// OpenMP thread of the calling thread's count, each block's oneDNN calls on
// one thread (no nested parallelism); or body(0, rows) on the calling thread
// when `work` (the flops of the whole job) is below kParallelMinFlops or
// there is one thread or one row. For jobs whose rows never meet, such as a
// recurrence's batch entries: one parallel region for the whole sequence
// instead of one per step. An exception in a block is rethrown here once
// every block has finished.
void for_row_blocks(std::int64_t rows, double work, const std::function<void(std::int64_t, std::int64_t)>& body);

}  // namespace canary::kernels::onednn
