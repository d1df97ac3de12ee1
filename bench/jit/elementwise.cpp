// A 10-op elementwise chain over 2^20 floats, fused by the JIT, against this
// machine's memory-bandwidth floor and against the interpreter, measured side
// by side in one run.
//
//   OMP_NUM_THREADS=1 build-bench/bench/canary_bench_jit_elementwise [--rounds R] [--target-ms T]
//
// x is f32[1024, 1024]; the chain reads x twice, a column bias f32[1024] and a
// row bias f32[1024, 1] (both constants), and four scalar constants:
//   "tanh"  : Mul(x, .5) Add(bias) Tanh Sub(row) Mul(1.5) Max(-.25) Sigmoid Add(x) Mul(.75) Relu
//   "arith" : the same with Tanh -> Min(2) and Sigmoid -> Abs (no transcendentals)
// The fused kernel must read x and write y once: 8 MiB (+ 8 KiB of biases).
// The floor is y[i] = x[i] * c over the same bytes (compiled -O3, vectorised
// for the best ISA this CPU has), with y preallocated and touched.
// Each row is one JitOptions configuration (synchronous, hot_threshold 1, the
// given isa and math mode), warmed up until compiled. Per round it times
// single calls of the floor and the compiled model alternately (A B A B ...,
// about T ms of each), then the interpreter (JitOptions::enabled = false) over
// about T ms; figures are medians over all samples of R rounds, per call. Rows
// "exact+c" turn the value canaries (non-finite and range) on. "jit%" is the share of timed calls that ran compiled code;
// "max|diff|" is the largest difference from the interpreter's output.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/jit/timing.h"
#include "canary/canary.h"

namespace {

using canary::DType;
using canary::Tensor;
using canary::bench::median;
using canary::bench::per_call_ms;

constexpr std::int64_t kRows = 1024, kCols = 1024, kElements = kRows * kCols;

using Args = canary::bench::RoundArgs;

// The bandwidth floor: one read and one write of every element.
__attribute__((target_clones("avx512f", "avx2", "default"), noinline)) void stream_scale(
    const float* __restrict x, float* __restrict y, std::size_t n, float c) {
  for (std::size_t i = 0; i < n; ++i) y[i] = x[i] * c;
}

// A tensor of the given shape with uniform values in [lo, hi].
Tensor random_tensor(std::mt19937& rng, std::vector<std::int64_t> shape, float lo, float hi) {
  Tensor t = Tensor::empty(DType::F32, shape);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

// The chain described at the top; `transcendental` picks "tanh" over "arith".
canary::Model build_chain(const canary::Runtime& rt, bool transcendental) {
  std::mt19937 rng(7);
  canary::ModelBuilder b("chain");
  b.input("x", DType::F32, {kRows, kCols});
  b.constant("bias", random_tensor(rng, {kCols}, -1.0f, 1.0f));
  b.constant("row", random_tensor(rng, {kRows, 1}, -1.0f, 1.0f));
  b.constant("half", Tensor::scalar(0.5f)).constant("scale", Tensor::scalar(1.5f));
  b.constant("floor", Tensor::scalar(-0.25f)).constant("quarter3", Tensor::scalar(0.75f));
  b.constant("ceiling", Tensor::scalar(2.0f));
  b.node("Mul", {"x", "half"}, {"t1"}).node("Add", {"t1", "bias"}, {"t2"});
  if (transcendental) b.node("Tanh", {"t2"}, {"t3"});
  else b.node("Min", {"t2", "ceiling"}, {"t3"});
  b.node("Sub", {"t3", "row"}, {"t4"}).node("Mul", {"t4", "scale"}, {"t5"}).node("Max", {"t5", "floor"}, {"t6"});
  if (transcendental) b.node("Sigmoid", {"t6"}, {"t7"});
  else b.node("Abs", {"t6"}, {"t7"});
  b.node("Add", {"t7", "x"}, {"t8"}).node("Mul", {"t8", "quarter3"}, {"t9"}).node("Relu", {"t9"}, {"y"});
  b.output("y");
  return rt.build(b);
}

// Options for one row: the JIT on (or off), synchronous, hot at the first call.
canary::Options row_options(bool jit, const std::string& isa, bool fast_math, bool canaries = false) {
  canary::Options o;
  o.jit.value_canaries = canaries;
  o.jit.range_canaries = canaries;
  o.intra_op_threads = 1;
  o.jit.enabled = jit;
  o.jit.synchronous = true;
  o.jit.hot_threshold = 1;
  o.jit.isa = isa;
  o.jit.fast_math = fast_math;
  return o;
}

// Whether this CPU runs the given JitOptions::isa tier natively.
bool host_has(const std::string& isa) {
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (isa == "avx512")
    return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  return avx2;
}

// Largest absolute difference between two f32 tensors of one shape.
double max_abs_diff(const Tensor& a, const Tensor& b) {
  double worst = 0.0;
  for (std::int64_t i = 0; i < a.numel(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(a.data<float>()[i]) - b.data<float>()[i]));
  return worst;
}

// Everything one chain's rows share: the input, the interpreter and its output.
struct ChainContext {
  std::string name;
  bool transcendental = false;
  canary::NamedTensors inputs;
  canary::Session* interpreter = nullptr;
  Tensor expected;
  std::vector<float> floor_out;
};

struct Row {
  double fused = 0, floor = 0, interp = 0, diff = 0, jit_share = 0;
};

// Warms one configuration up, then times floor, fused and interpreter round by round.
Row measure_row(ChainContext& c, const std::string& isa, bool fast_math, bool canaries, const Args& args) {
  const canary::Runtime rt(row_options(true, isa, fast_math, canaries));
  const canary::Model model = build_chain(rt, c.transcendental);
  canary::Session session = model.session();
  for (int i = 0; i < 3; ++i) session.run(c.inputs);
  model.wait_for_compiles();
  Row row;
  row.diff = max_abs_diff(session.run(c.inputs).at("y"), c.expected);
  const float* x = c.inputs.at("x").data<float>();
  float* y = c.floor_out.data();
  auto floor_call = [&] { stream_scale(x, y, static_cast<std::size_t>(kElements), 0.5f); };
  auto fused_call = [&] { session.run(c.inputs); };
  auto interp_call = [&] { c.interpreter->run(c.inputs); };
  // Floor and fused alternate call by call, so load from other processes
  // falls on both alike; the interpreter, far slower, runs after them.
  const int pairs = std::min(canary::bench::calls_for(args.target_ms, floor_call),
                             canary::bench::calls_for(args.target_ms, fused_call));
  const int interp_calls = canary::bench::calls_for(args.target_ms, interp_call);
  const canary::Stats before = session.stats();
  std::vector<double> floor_ms, fused_ms, interp_ms;
  for (int r = 0; r < args.rounds; ++r) {
    for (int k = 0; k < pairs; ++k) {
      floor_ms.push_back(per_call_ms(1, floor_call));
      fused_ms.push_back(per_call_ms(1, fused_call));
    }
    interp_ms.push_back(per_call_ms(interp_calls, interp_call));
  }
  const canary::Stats& after = session.stats();
  row.jit_share = 100.0 * static_cast<double>(after.jit.compiled_entries - before.jit.compiled_entries) /
                  static_cast<double>(after.calls - before.calls);
  row.floor = median(floor_ms);
  row.fused = median(fused_ms);
  row.interp = median(interp_ms);
  return row;
}

// Prints one row of the table.
void print_row(const std::string& chain, const std::string& isa, const char* math, const Row& r) {
  constexpr double kBytes = 2.0 * kElements * sizeof(float);
  std::printf("%-6s %-7s %-6s %9.3f %9.3f %9.1f %9.2f %7.2f %7.1f %10.1f %5.0f %10.2e\n", chain.c_str(), isa.c_str(),
              math, r.fused, r.floor, kBytes / (r.floor * 1e6), r.interp, r.fused / r.floor, r.interp / r.fused,
              kBytes / (r.fused * 1e6), r.jit_share, r.diff);
}

// Measures memcpy of the floor's bytes, for the header line.
double memcpy_gbps(const float* x, float* y) {
  auto call = [&] { std::memcpy(y, x, kElements * sizeof(float)); };
  std::vector<double> ms;
  for (int r = 0; r < 9; ++r) ms.push_back(per_call_ms(20, call));
  return 2.0 * kElements * sizeof(float) / (median(ms) * 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  canary::bench::run_on_one_thread(argv);
  const Args args = canary::bench::parse_round_args(argc, argv, {9, 15.0});
  std::mt19937 rng(11);
  const canary::NamedTensors inputs{{"x", random_tensor(rng, {kRows, kCols}, -3.0f, 3.0f)}};
  const canary::Runtime interp_rt(row_options(false, "auto", false));
  std::vector<float> out(kElements, 1.0f);
  std::printf("jit elementwise: 10-op chains over x f32[%lld, %lld] (2^20 floats), one thread, %d rounds\n",
              static_cast<long long>(kRows), static_cast<long long>(kCols), args.rounds);
  std::printf("bytes the fused kernel must move: 8 MiB (x in, y out); memcpy of them here: %.1f GB/s\n",
              memcpy_gbps(inputs.at("x").data<float>(), out.data()));
  std::printf("times in ms per call (medians); GB/s counts 8 MiB per call; aims: fused/floor <= 1.3, interp/fused >= 4\n");
  std::printf("%-6s %-7s %-6s %9s %9s %9s %9s %7s %7s %10s %5s %10s\n", "chain", "isa", "math", "fused", "floor",
              "floorGB/s", "interp", "f/floor", "i/f", "fused GB/s", "jit%", "max|diff|");
  for (const bool transcendental : {true, false}) {
    ChainContext c;
    c.name = transcendental ? "tanh" : "arith";
    c.transcendental = transcendental;
    c.inputs = inputs;
    c.floor_out = out;
    const canary::Model interp_model = build_chain(interp_rt, transcendental);
    canary::Session interp = interp_model.session();
    c.interpreter = &interp;
    c.expected = interp.run(c.inputs).at("y");
    for (const char* isa : {"avx512", "avx2", "scalar"}) {
      if (!host_has(isa)) {
        std::printf("%-6s %-7s (not supported by this CPU)\n", c.name.c_str(), isa);
        continue;
      }
      for (const bool fast : {false, true}) {
        if (fast && !transcendental) continue;  // no transcendental: both modes emit the same code
        print_row(c.name, isa, fast ? "fast" : "exact", measure_row(c, isa, fast, false, args));
        std::fflush(stdout);
      }
      if (!transcendental) {
        // The value canaries' cost: non-finite and range checks on the output.
        print_row(c.name, isa, "exact+c", measure_row(c, isa, false, true, args));
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
