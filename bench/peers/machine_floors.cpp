// Machine floors for the peer benchmark: STREAM triad bandwidth and peak fp32
// FMA throughput per ISA and thread count, printed as one JSON object.
//
// Why: bench/peers compares Canary with ONNX Runtime and PyTorch on a shared
// VM whose speed drifts; these are the limits every contender's time is read
// against (an elementwise chain cannot beat the triad at its working set, a
// matmul cannot beat the FMA peak), measured in the same run.
//
//   canary_bench_machine_floors --threads 1,2 --triad-bytes 12582912,1610612736 [--rounds R] [--quick]
//
// Triad: a[i] = b[i] + s * c[i] over three float arrays of B/3 bytes each, one
// B per --triad-bytes value. Arrays are allocated once (2 MiB aligned, with
// madvise(MADV_HUGEPAGE) so setup does not pay ~15 us per 4 KiB page) and
// written before any timing: first touch is never timed. GB/s counts B bytes
// per sweep (2 reads + 1 write); the write-allocate read of a is NOT counted.
// FMA: each thread runs 16 (zmm), 12 (ymm) or 12 (scalar xmm) independent
// vfmadd chains, enough to cover FMA latency; GFLOP/s = 2 x lanes x FMAs,
// summed over threads. Results are kept live through a volatile sink.
// Threads: the calling thread is worker 0 and T-1 std::threads, started once
// per T, wait on a spinning start/finish barrier each repetition (T threads
// in all, so T=2 does not oversubscribe 2 cores). A repetition is timed from
// the release to the last worker's finish. Repetitions: at least R (default
// 5, --quick 3) and about 0.3 s per measurement (--quick 0.05 s); best and
// median over repetitions are reported. Progress goes to stderr.
#include <immintrin.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

using Clock = std::chrono::steady_clock;
using Job = std::function<void(int)>;
constexpr std::uint64_t kMaxThreads = 256, kHugePage = 2u << 20;
volatile float g_sink[kMaxThreads];  // FMA results, one slot per worker

struct ArgError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Args {
  std::vector<std::uint64_t> threads{1}, triad_bytes{12582912, 1610612736};
  int rounds = 0;  // 0: the default for the mode
  bool quick = false;
};

// Parses a comma-separated list of integers in [lo, hi]; `what` names the flag.
std::vector<std::uint64_t> parse_list(const std::string& text, std::uint64_t lo, std::uint64_t hi, const char* what) {
  std::vector<std::uint64_t> out;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    std::uint64_t v = 0;
    const auto [p, ec] = std::from_chars(text.data() + start, text.data() + end, v);
    if (ec != std::errc{} || p != text.data() + end || start == end || v < lo || v > hi)
      throw ArgError(std::string(what) + ": '" + text.substr(start, end - start) + "' is not an integer in [" +
                     std::to_string(lo) + ", " + std::to_string(hi) + "]");
    out.push_back(v);
    start = end + 1;
  }
  return out;
}

// Reads the command line; throws ArgError on anything it does not understand.
Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--quick") { a.quick = true; continue; }
    if (k != "--threads" && k != "--triad-bytes" && k != "--rounds") throw ArgError("unknown argument '" + k + "'");
    if (i + 1 >= argc) throw ArgError(k + " needs a value");
    const std::string v = argv[++i];
    if (k == "--threads") a.threads = parse_list(v, 1, kMaxThreads, "--threads");
    else if (k == "--triad-bytes") a.triad_bytes = parse_list(v, 3072, std::uint64_t{1} << 40, "--triad-bytes");
    else if (const auto r = parse_list(v, 1, 100000, "--rounds"); r.size() == 1) a.rounds = static_cast<int>(r[0]);
    else throw ArgError("--rounds takes one integer");
  }
  std::uint64_t total = 0;
  for (auto b : a.triad_bytes) total += b;
  const auto phys = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  if (total > phys / 4 * 3) throw ArgError("--triad-bytes total " + std::to_string(total) + " exceeds 3/4 of RAM");
  return a;
}

// Spins briefly until `word` leaves `seen`, then sleeps on it.
void wait_for_change(const std::atomic<std::uint64_t>& word, std::uint64_t seen) {
  for (int i = 0; i < 200000; ++i) {
    if (word.load(std::memory_order_acquire) != seen) return;
    _mm_pause();
  }
  while (word.load(std::memory_order_acquire) == seen) word.wait(seen, std::memory_order_acquire);
}

// T workers: the caller plus T-1 threads started once, released per repetition.
class Team {
 public:
  explicit Team(int threads) {
    try {
      for (int i = 1; i < threads; ++i) helpers_.emplace_back([this, i] { serve(i); });
    } catch (...) {
      stop();
      throw;
    }
  }
  ~Team() { stop(); }
  // Seconds from releasing every worker on job(index) to the last one finishing.
  double run(const Job& job) {
    job_ = &job;
    finished_.store(0, std::memory_order_relaxed);
    const auto t0 = Clock::now();
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    job(0);
    for (int spins = 0; finished_.load(std::memory_order_acquire) < static_cast<int>(helpers_.size()); ++spins)
      spins < 100000 ? _mm_pause() : std::this_thread::yield();  // yield: more threads than cores
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }

 private:
  // Releases the helpers with the stop flag set and joins them.
  void stop() {
    stop_ = true;
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    for (auto& t : helpers_) t.join();
  }
  // A helper's loop: wait for a new generation, run its part, report done.
  void serve(int index) {
    for (std::uint64_t seen = 0;;) {
      wait_for_change(generation_, seen);
      seen = generation_.load(std::memory_order_acquire);
      if (stop_) return;
      (*job_)(index);
      finished_.fetch_add(1, std::memory_order_release);
    }
  }
  std::vector<std::thread> helpers_;
  const Job* job_ = nullptr;
  bool stop_ = false;  // written before a generation bump, read after it
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<int> finished_{0};
};

// Per-repetition seconds of job: at least min_reps and about target_s in all.
std::vector<double> time_reps(Team& team, const Job& job, int min_reps, double target_s) {
  team.run(job);  // warm-up
  const double once = std::max(team.run(job), 1e-9);
  const int reps = std::clamp(static_cast<int>(std::ceil(target_s / once)), min_reps, 1000000);
  std::vector<double> s(static_cast<std::size_t>(reps));
  for (double& t : s) t = team.run(job);
  std::sort(s.begin(), s.end());
  return s;
}

// The triad kernel, vectorised for the best ISA present.
__attribute__((target_clones("avx512f", "avx2", "default"), noinline)) void triad(
    float* __restrict a, const float* __restrict b, const float* __restrict c, std::size_t n, float s) {
  for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

// One float array on 2 MiB-aligned, huge-page-advised memory, written once.
std::unique_ptr<float[], decltype(&std::free)> touched_array(std::size_t n, float value) {
  const std::size_t bytes = (n * sizeof(float) + kHugePage - 1) / kHugePage * kHugePage;
  auto* p = static_cast<float*>(std::aligned_alloc(kHugePage, bytes));
  if (p == nullptr) throw std::runtime_error("cannot allocate " + std::to_string(bytes) + " bytes");
  madvise(p, bytes, MADV_HUGEPAGE);  // advisory: 4 KiB pages still work
  std::fill(p, p + n, value);
  return {p, &std::free};
}

struct TriadArrays {
  std::size_t n;  // floats per array
  std::unique_ptr<float[], decltype(&std::free)> a, b, c;
};

// Triad over `arr` split into T contiguous 64-byte-aligned parts.
nlohmann::json measure_triad(Team& team, int threads, const TriadArrays& arr, int min_reps, double target_s) {
  const std::size_t n = arr.n, part = ((n + threads - 1) / threads + 15) / 16 * 16;
  const Job job = [&](int i) {
    const std::size_t begin = std::min(n, part * i), end = std::min(n, begin + part);
    triad(arr.a.get() + begin, arr.b.get() + begin, arr.c.get() + begin, end - begin, 3.0f);
  };
  const auto s = time_reps(team, job, min_reps, target_s);
  const std::uint64_t bytes = 3 * sizeof(float) * n;
  const double best = static_cast<double>(bytes) / s.front() / 1e9;
  const double median = static_cast<double>(bytes) / s[s.size() / 2] / 1e9;
  std::fprintf(stderr, "triad T=%d bytes=%llu: best %.1f GB/s, median %.1f GB/s (%zu reps)\n", threads,
               static_cast<unsigned long long>(bytes), best,
               median, s.size());
  return {{"threads", threads}, {"bytes", bytes}, {"gbps_best", best}, {"gbps_median", median}, {"reps", s.size()}};
}

// The sum of n floats.
float sum_of(const float* v, int n) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += v[i];
  return sum;
}

// 16 zmm FMA chains for `iters` iterations; returns their sum.
__attribute__((target("avx512f"))) float fma_zmm(long iters) {
  __m512 acc[16];
  const __m512 m = _mm512_set1_ps(0.999f), k = _mm512_set1_ps(0.001f);
  for (int j = 0; j < 16; ++j) acc[j] = _mm512_set1_ps(static_cast<float>(j));
  for (long i = 0; i < iters; ++i)
#pragma GCC unroll 16
    for (int j = 0; j < 16; ++j) acc[j] = _mm512_fmadd_ps(acc[j], m, k);
  for (int j = 1; j < 16; ++j) acc[0] = _mm512_add_ps(acc[0], acc[j]);
  alignas(64) float lanes[16];  // not _mm512_reduce_add_ps: GCC 12 warns inside it
  _mm512_store_ps(lanes, acc[0]);
  return sum_of(lanes, 16);
}

// 12 ymm FMA chains for `iters` iterations; returns their sum.
__attribute__((target("avx2,fma"))) float fma_ymm(long iters) {
  __m256 acc[12];
  const __m256 m = _mm256_set1_ps(0.999f), k = _mm256_set1_ps(0.001f);
  for (int j = 0; j < 12; ++j) acc[j] = _mm256_set1_ps(static_cast<float>(j));
  for (long i = 0; i < iters; ++i)
#pragma GCC unroll 12
    for (int j = 0; j < 12; ++j) acc[j] = _mm256_fmadd_ps(acc[j], m, k);
  for (int j = 1; j < 12; ++j) acc[0] = _mm256_add_ps(acc[0], acc[j]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc[0]);
  return sum_of(lanes, 8);
}

// 12 scalar xmm FMA chains (vfmadd...ss) for `iters` iterations; returns their sum.
__attribute__((target("fma"))) float fma_xmm(long iters) {
  __m128 acc[12];
  const __m128 m = _mm_set_ss(0.999f), k = _mm_set_ss(0.001f);
  for (int j = 0; j < 12; ++j) acc[j] = _mm_set_ss(static_cast<float>(j));
  for (long i = 0; i < iters; ++i)
#pragma GCC unroll 12
    for (int j = 0; j < 12; ++j) acc[j] = _mm_fmadd_ss(acc[j], m, k);
  for (int j = 1; j < 12; ++j) acc[0] = _mm_add_ss(acc[0], acc[j]);
  return _mm_cvtss_f32(acc[0]);
}

struct FmaIsa {
  const char* name;
  bool supported;
  float (*loop)(long);
  double flops_per_iter;  // chains x lanes x 2
};

// The FMA tiers, as the JIT defines them (avx512: F+DQ+BW+VL; avx2: AVX2+FMA; scalar: FMA).
std::vector<FmaIsa> fma_isas() {
  __builtin_cpu_init();
  const bool fma = __builtin_cpu_supports("fma");
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  return {{"avx512", avx512, fma_zmm, 16 * 16 * 2},
          {"avx2", fma && __builtin_cpu_supports("avx2"), fma_ymm, 12 * 8 * 2},
          {"scalar", fma, fma_xmm, 12 * 1 * 2}};
}

// Peak FMA throughput of one ISA with T threads, each running its own loop.
nlohmann::json measure_fma(Team& team, int threads, const FmaIsa& isa, long iters, int min_reps, double target_s) {
  const Job job = [&](int i) { g_sink[i] = isa.loop(iters); };
  const auto s = time_reps(team, job, min_reps, target_s);
  const double flops = isa.flops_per_iter * static_cast<double>(iters) * threads;
  const double best = flops / s.front() / 1e9, median = flops / s[s.size() / 2] / 1e9;
  std::fprintf(stderr, "fma T=%d %s: best %.1f GFLOP/s, median %.1f GFLOP/s (%zu reps)\n", threads, isa.name, best,
               median, s.size());
  return {{"threads", threads}, {"isa", isa.name}, {"gflops_best", best}, {"gflops_median", median}, {"reps", s.size()}};
}

// CPU model, logical cores, kernel release and the FMA tiers present.
nlohmann::json describe_machine(const std::vector<FmaIsa>& isas) {
  std::string model = "unknown", line;
  std::ifstream cpuinfo("/proc/cpuinfo");
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  utsname u{};
  uname(&u);
  nlohmann::json names = nlohmann::json::array();
  for (const auto& isa : isas)
    if (isa.supported) names.push_back(isa.name);
  return {{"cpu", model}, {"logical_cores", std::thread::hardware_concurrency()}, {"kernel", u.release}, {"isas", names}};
}

// Allocates the triad arrays, then measures triad and FMA for every thread count.
nlohmann::json measure_all(const Args& args) {
  const int min_reps = args.rounds > 0 ? args.rounds : (args.quick ? 3 : 5);
  const double target_s = args.quick ? 0.05 : 0.3;
  const long iters = args.quick ? 1L << 20 : 1L << 22;
  const auto isas = fma_isas();
  std::vector<TriadArrays> arrays;
  for (auto bytes : args.triad_bytes) {
    const std::size_t n = bytes / (3 * sizeof(float));
    std::fprintf(stderr, "allocating and touching 3 x %zu floats\n", n);
    arrays.push_back({n, touched_array(n, 0.0f), touched_array(n, 1.0f), touched_array(n, 2.0f)});
  }
  nlohmann::json out = {{"machine", describe_machine(isas)}, {"triad", nlohmann::json::array()},
                        {"fma", nlohmann::json::array()},
                        {"triad_counting", "3 arrays x bytes/3 per sweep (2 reads + 1 write); write-allocate not counted"}};
  for (auto t : args.threads) {
    Team team(static_cast<int>(t));
    for (const auto& arr : arrays) out["triad"].push_back(measure_triad(team, static_cast<int>(t), arr, min_reps, target_s));
    for (const auto& isa : isas)
      if (isa.supported) out["fma"].push_back(measure_fma(team, static_cast<int>(t), isa, iters, min_reps, target_s));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  try {
    args = parse_args(argc, argv);
  } catch (const ArgError& e) {
    std::fprintf(stderr,
                 "canary_bench_machine_floors: %s\nusage: canary_bench_machine_floors --threads 1,2 "
                 "--triad-bytes 12582912,1610612736 [--rounds R] [--quick]\n",
                 e.what());
    return 2;
  }
  try {
    std::cout << measure_all(args).dump() << std::endl;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "canary_bench_machine_floors: %s\n", e.what());
    return 1;
  }
  return 0;
}
