// Timing for the JIT benchmarks: wall-clock sampling, medians and
// percentiles, and the one-thread re-execution every benchmark starts with.
#pragma once

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace canary::bench {

using Clock = std::chrono::steady_clock;

// Milliseconds taken by `calls` calls of f, divided by `calls`.
template <typename F>
double per_call_ms(int calls, F&& f) {
  const auto t0 = Clock::now();
  for (int i = 0; i < calls; ++i) f();
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / calls;
}

// Milliseconds of this thread's CPU time taken by one call of f (time the
// thread spent preempted by other processes is not counted).
template <typename F>
double thread_cpu_ms(F&& f) {
  timespec a{}, b{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  f();
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
  return static_cast<double>(b.tv_sec - a.tv_sec) * 1e3 + static_cast<double>(b.tv_nsec - a.tv_nsec) * 1e-6;
}

// Calls of f (at least 1) that take about `target_ms`, from one timed call.
template <typename F>
int calls_for(double target_ms, F&& f) {
  const double once = per_call_ms(1, f);
  return std::max(1, static_cast<int>(target_ms / std::max(once, 1e-6)));
}

// The q-quantile (0..1, nearest rank) of v.
inline double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// Median of v.
inline double median(const std::vector<double>& v) { return quantile(v, 0.5); }

// The --rounds R and --target-ms T arguments of the JIT benchmarks: rounds of
// interleaved calls, and about how long each contender runs per round.
struct RoundArgs {
  int rounds = 9;
  double target_ms = 15.0;
};

// Reads --rounds and --target-ms over `defaults`.
inline RoundArgs parse_round_args(int argc, char** argv, RoundArgs defaults) {
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--rounds") == 0) defaults.rounds = std::max(1, std::atoi(argv[i + 1]));
    else if (std::strcmp(argv[i], "--target-ms") == 0) defaults.target_ms = std::max(0.1, std::atof(argv[i + 1]));
  }
  return defaults;
}

// Re-executes the program with OMP_NUM_THREADS=1 unless that is already set,
// so oneDNN and the fused kernels run on the calling thread only.
inline void run_on_one_thread(char** argv) {
  const char* omp = std::getenv("OMP_NUM_THREADS");
  if (omp != nullptr && std::strcmp(omp, "1") == 0) return;
  setenv("OMP_NUM_THREADS", "1", 1);
  execv("/proc/self/exe", argv);
  std::perror("re-executing with OMP_NUM_THREADS=1 failed; continuing");
}

}  // namespace canary::bench
