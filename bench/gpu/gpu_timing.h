// Timing of asynchronous device work for the GPU check's throughput rows.
#pragma once

#include <algorithm>
#include <chrono>

#include "jit/cuda/driver.h"

namespace canary::gpu_check {

using Clock = std::chrono::steady_clock;

// Seconds per call of `enqueue` (asynchronous), best of three batches of
// `repeats` calls after one warm-up call; *ok turns false when a call or a
// synchronisation fails.
template <class F>
double seconds_per_call(const jit::cuda::CudaDriver& driver, F enqueue, bool* ok, int repeats = 20) {
  *ok = *ok && enqueue() && driver.synchronize().ok();  // warm-up
  double best = 1e30;
  for (int batch = 0; batch < 3; ++batch) {
    const auto start = Clock::now();
    for (int i = 0; i < repeats; ++i) *ok = *ok && enqueue();
    *ok = *ok && driver.synchronize().ok();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count() / repeats);
  }
  return best;
}

}  // namespace canary::gpu_check
