// Intra-op threading of the oneDNN kernels: this oneDNN build runs primitives
// on OpenMP, whose thread count for a parallel region is the nthreads-var of
// the thread that starts it. omp_set_num_threads changes only the calling
// thread's value, so a scope set on one session's thread leaves other threads
// (and their sessions) alone, and restoring it on exit leaves the host
// application's own OpenMP setting as it was.
#include "kernels/onednn/threading.h"

#include <algorithm>
#include <exception>

#include <omp.h>

#include "kernels/onednn.h"

namespace canary::kernels::onednn {

// OpenMP's current thread count for the calling thread.
int current_threads() { return omp_get_max_threads(); }

// One thread for small work when the thread would otherwise use more.
SerialWhenSmall::SerialWhenSmall(double work, double threshold) {
  if (work < threshold && omp_get_max_threads() > 1) scope_.emplace(1);
}

void for_row_blocks(std::int64_t rows, double work, const std::function<void(std::int64_t, std::int64_t)>& body) {
  const int threads = static_cast<int>(std::min<std::int64_t>(omp_get_max_threads(), rows));
  if (threads <= 1 || work < kParallelMinFlops) {
    body(0, rows);
    return;
  }
  std::exception_ptr failure;
#pragma omp parallel num_threads(threads)
  {
    const std::int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
    try {
      const OnednnThreadScope one_thread(1);
      body(rows * t / n, rows * (t + 1) / n);
    } catch (...) {
#pragma omp critical(canary_row_blocks_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace canary::kernels::onednn

namespace canary::kernels {

// Saves the calling thread's OpenMP thread count and sets `threads` when > 0.
OnednnThreadScope::OnednnThreadScope(int threads) : previous_(omp_get_max_threads()), changed_(threads > 0) {
  if (changed_ && threads != previous_) omp_set_num_threads(threads);
}

// Restores the saved thread count.
OnednnThreadScope::~OnednnThreadScope() {
  if (changed_ && omp_get_max_threads() != previous_) omp_set_num_threads(previous_);
}

}  // namespace canary::kernels
