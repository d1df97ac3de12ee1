// What the JIT costs besides the kernels: compile latency per trace, the cost
// of the emitted entry guards, and the per-call cost of a compiled entry on a
// model too small for fusion to pay.
//
//   OMP_NUM_THREADS=1 build-bench/bench/canary_bench_jit_compile [--traces N] [--guard-calls C] [--rounds R]
//
// 1. Compile latency: N traces (default 198, a third each of 5-, 10- and
//    30-op elementwise chains over f32[rows, 64], random ops including
//    transcendentals and broadcast biases, seeded). Each trace is a fresh
//    Model (JitOptions synchronous, hot_threshold 1) with its own row count, so
//    every compile is a real one. The figure is the Compiled event's
//    duration_ms (guard and kernel code generation, installation in the code
//    cache; wall clock); "1st call" is the whole first call (interpreted run,
//    recording, planning, compiling), in wall and in thread CPU time (the
//    latter leaves out time the thread was preempted by other processes),
//    medians; "interp" a later call of the same model with the JIT off, for
//    scale.
// 2. Guard cost: a GuardSet over 3 rank-3 tensors (exact: rank, dtype,
//    alignment and three dims each, plus two cross-tensor dim equalities = 20
//    guards; symbolic: dim0 a range plus a capture and dim2 divisible by 16 =
//    23), compiled with compile_guards and called C times on ready headers;
//    also the C++ evaluator on the same set. Median over 100 batches.
// 3. Entry cost end to end: x f32[16] -> Add -> Mul -> Relu through
//    Session::run with the JIT off, with the JIT on but never hot (hooks only)
//    and compiled (steady state); R * 20 chunks of 1000 calls alternate between
//    the three, median ns/call over the chunks.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/jit/timing.h"
#include "canary/canary.h"
#include "canary/dtype.h"
#include "jit/guard.h"
#include "jit/x86/code_cache.h"
#include "jit/x86/guard_codegen.h"

namespace {

using canary::DType;
using canary::Tensor;
using canary::bench::median;
using canary::bench::per_call_ms;
using canary::bench::quantile;
namespace cj = canary::jit;

struct Args {
  int traces = 198;
  int guard_calls = 10'000'000;
  int rounds = 7;
};

// Reads --traces, --guard-calls and --rounds.
Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--traces") a.traces = std::max(3, std::atoi(argv[i + 1]));
    else if (k == "--guard-calls") a.guard_calls = std::max(1000, std::atoi(argv[i + 1]));
    else if (k == "--rounds") a.rounds = std::max(1, std::atoi(argv[i + 1]));
  }
  return a;
}

// A tensor of the given shape with uniform values in [-1, 1].
Tensor random_tensor(std::mt19937& rng, std::vector<std::int64_t> shape) {
  Tensor t = Tensor::empty(DType::F32, shape);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

// A random `ops`-op elementwise chain over x f32[rows, 64]: binary ops take a
// scalar, a column bias [64] or a row bias [rows, 1]; unary ops include
// transcendentals.
canary::Model build_random_chain(const canary::Runtime& rt, std::mt19937& rng, int ops, std::int64_t rows) {
  static const char* const kBinary[] = {"Add", "Mul", "Sub", "Max", "Min"};
  static const char* const kUnary[] = {"Relu", "Tanh", "Sigmoid", "Exp", "Abs", "Neg"};
  static const char* const kOperand[] = {"s", "col", "row"};
  canary::ModelBuilder b("chain");
  b.input("x", DType::F32, {rows, 64});
  b.constant("s", Tensor::scalar(0.5f)).constant("col", random_tensor(rng, {64}));
  b.constant("row", random_tensor(rng, {rows, 1}));
  std::string prev = "x";
  for (int i = 0; i < ops; ++i) {
    const std::string out = "v" + std::to_string(i);
    if (rng() % 2 == 0) b.node(kBinary[rng() % 5], {prev, kOperand[rng() % 3]}, {out});
    else b.node(kUnary[rng() % 6], {prev}, {out});
    prev = out;
  }
  b.output(prev);
  return rt.build(b);
}

struct CompileSample {
  double compile_ms = 0, first_call_ms = 0, first_call_cpu_ms = 0, interp_ms = 0, code_bytes = 0;
};

// Builds, runs and compiles one random chain (compile_ms is -1 when nothing compiled).
CompileSample sample_compile(std::mt19937& rng, int ops, std::int64_t rows) {
  canary::Options o;
  o.intra_op_threads = 1;
  o.jit.synchronous = true;
  o.jit.hot_threshold = 1;
  const std::uint32_t seed = static_cast<std::uint32_t>(rng());
  std::mt19937 model_rng(seed);
  const canary::Model model = build_random_chain(canary::Runtime(o), model_rng, ops, rows);
  const canary::NamedTensors in{{"x", random_tensor(rng, {rows, 64})}};
  canary::Session s = model.session();
  CompileSample out;
  out.first_call_cpu_ms = canary::bench::thread_cpu_ms([&] { out.first_call_ms = per_call_ms(1, [&] { s.run(in); }); });
  model.wait_for_compiles();
  out.compile_ms = -1;
  for (const canary::Event& e : model.events())
    if (e.kind == canary::EventKind::Compiled) {
      out.compile_ms = e.duration_ms;
      out.code_bytes = static_cast<double>(e.code_bytes);
    }
  o.jit.enabled = false;
  std::mt19937 same_rng(seed);
  canary::Session interp = build_random_chain(canary::Runtime(o), same_rng, ops, rows).session();
  interp.run(in);
  out.interp_ms = per_call_ms(1, [&] { interp.run(in); });
  return out;
}

// Part 1: the compile latency table.
void bench_compile_latency(const Args& args) {
  std::mt19937 rng(2024);
  const int sizes[] = {5, 10, 30};
  const int per_size = args.traces / 3;
  std::printf("\ncompile latency: %d traces per size, fresh model each, f32[rows in 8..%d, 64]\n", per_size,
              8 + per_size - 1);
  std::printf("%-5s %7s %10s %10s %10s %8s %12s %14s %10s\n", "ops", "traces", "median ms", "p90 ms", "max ms",
              "code B", "1st call ms", "1st call cpu", "interp ms");
  std::vector<double> all;
  for (const int ops : sizes) {
    std::vector<double> ms, bytes, first, first_cpu, interp;
    int failed = 0;
    for (int i = 0; i < per_size; ++i) {
      const CompileSample s = sample_compile(rng, ops, 8 + i);
      if (s.compile_ms < 0) {
        ++failed;
        continue;
      }
      ms.push_back(s.compile_ms);
      bytes.push_back(s.code_bytes);
      first.push_back(s.first_call_ms);
      first_cpu.push_back(s.first_call_cpu_ms);
      interp.push_back(s.interp_ms);
    }
    all.insert(all.end(), ms.begin(), ms.end());
    std::printf("%-5d %7zu %10.3f %10.3f %10.3f %8.0f %12.3f %14.3f %10.4f%s\n", ops, ms.size(), median(ms),
                quantile(ms, 0.9), quantile(ms, 1.0), median(bytes), median(first), median(first_cpu), median(interp),
                failed ? "  (some traces did not compile)" : "");
  }
  std::printf("%-5s %7zu %10.3f %10.3f %10.3f   (aim: median < 1 ms)\n", "all", all.size(), median(all),
              quantile(all, 0.9), quantile(all, 1.0));
}

// Guards of one rank-3 f32 tensor; symbolic: dim0 by range + capture, dim2 by divisibility.
void add_tensor_guards(std::vector<cj::Guard>& g, std::uint32_t t, const std::int64_t* dims, bool symbolic) {
  using K = cj::GuardKind;
  g.push_back({K::Rank, t, 0, 0, 0, 3, 0});
  g.push_back({K::DType, t, 0, 0, 0, static_cast<std::int64_t>(DType::F32), 0});
  g.push_back({K::Aligned, t, 0, 0, 0, 64, 0});
  if (symbolic) {
    g.push_back({K::DimRange, t, 0, 0, 0, 2, std::int64_t{1} << 31});
    g.push_back({K::CaptureDim, t, 0, 0, 0, t, 0});
    g.push_back({K::DimEquals, t, 1, 0, 0, dims[1], 0});
    g.push_back({K::DimDivisible, t, 2, 0, 0, 16, 0});
  } else {
    for (std::uint32_t axis = 0; axis < 3; ++axis) g.push_back({K::DimEquals, t, axis, 0, 0, dims[axis], 0});
  }
}

// The guard set described at the top, for tensors whose dims are all `dims`.
cj::GuardSet make_guard_set(const std::int64_t* dims, bool symbolic) {
  cj::GuardSet set;
  set.num_tensors = 3;
  set.num_symbols = symbolic ? 3 : 0;
  for (std::uint32_t t = 0; t < 3; ++t) add_tensor_guards(set.guards, t, dims, symbolic);
  set.guards.push_back({cj::GuardKind::DimsEqual, 0, 2, 1, 2, 0, 0});
  set.guards.push_back({cj::GuardKind::DimsEqual, 0, 0, 2, 0, 0, 0});
  return set;
}

// Nanoseconds per call of check(): C calls in 100 batches, median over the
// batches (a batch that another process preempted does not move the median).
template <typename F>
double guard_ns(const Args& args, F&& check) {
  constexpr int kBatches = 100;
  const int per_batch = args.guard_calls / kBatches;
  std::uint32_t sink = 0;
  std::vector<double> ns;
  for (int r = 0; r < kBatches; ++r)
    ns.push_back(per_call_ms(1, [&] {
                   for (int i = 0; i < per_batch; ++i) sink |= check();
                 }) * 1e6 / per_batch);
  if (sink != 0) std::printf("(a guard failed: the figure below measures the failure path)\n");
  return median(ns);
}

// Part 2: the guard cost table.
void bench_guards(const Args& args) {
  static const std::int64_t dims[3] = {32, 7, 256};
  alignas(64) static float data[3][16];
  std::vector<cj::TensorHeader> headers(3);
  for (int t = 0; t < 3; ++t) headers[t] = {data[t], dims, 3, static_cast<std::int64_t>(DType::F32)};
  std::int64_t symbols[4] = {};
  cj::x86::CodeCache cache(std::size_t{1} << 20);
  std::printf("\nguard check per trace entry: 3 tensors f32[32, 7, 256], %d calls in 100 batches, headers ready\n",
              args.guard_calls);
  std::printf("%-9s %7s %12s %14s   (aim: emitted < 20 ns)\n", "set", "guards", "emitted ns", "evaluator ns");
  for (const bool symbolic : {false, true}) {
    const cj::GuardSet set = make_guard_set(dims, symbolic);
    std::string error;
    const cj::x86::CompiledGuards compiled = cj::x86::compile_guards(set, cache, error);
    if (!compiled.fn) {
      std::printf("%-9s compile_guards failed: %s\n", symbolic ? "symbolic" : "exact", error.c_str());
      continue;
    }
    const cj::TensorHeader* h = headers.data();
    const double emitted = guard_ns(args, [&] { return compiled.fn(h, symbols); });
    const double evaluated = guard_ns(args, [&] { return cj::evaluate_guards(set, h, symbols); });
    std::printf("%-9s %7zu %12.2f %14.2f\n", symbolic ? "symbolic" : "exact", set.guards.size(), emitted, evaluated);
  }
}

// x f32[16] -> Add -> Mul -> Relu.
canary::Model build_tiny(const canary::Runtime& rt) {
  canary::ModelBuilder b("tiny");
  b.input("x", DType::F32, {16});
  b.constant("a", Tensor::scalar(0.5f)).constant("m", Tensor::scalar(1.5f));
  b.node("Add", {"x", "a"}, {"t1"}).node("Mul", {"t1", "m"}, {"t2"}).node("Relu", {"t2"}, {"y"});
  b.output("y");
  return rt.build(b);
}

// Part 3: end-to-end Session::run on the tiny model, three ways.
void bench_entry(const Args& args) {
  struct Way {
    const char* name;
    bool jit;
    std::uint64_t threshold;
  };
  const Way ways[] = {{"interpreter (JIT off)", false, 1}, {"JIT on, never hot", true, ~std::uint64_t{0}},
                      {"compiled (steady state)", true, 1}};
  const canary::NamedTensors in{{"x", Tensor::from_vector(std::vector<float>(16, 0.25f), {16})}};
  std::vector<canary::Model> models;
  std::vector<canary::Session> sessions;
  for (const Way& w : ways) {
    canary::Options o;
    o.jit.enabled = w.jit;
    o.jit.synchronous = true;
    o.jit.hot_threshold = w.threshold;
    models.push_back(build_tiny(canary::Runtime(o)));
    sessions.push_back(models.back().session());
    for (int i = 0; i < 1000; ++i) sessions.back().run(in);
    models.back().wait_for_compiles();
  }
  constexpr int kChunk = 1000, kChunks = 20;
  std::vector<std::vector<double>> ns(3);
  std::vector<std::uint64_t> entries0(3);
  for (int i = 0; i < 3; ++i) entries0[i] = sessions[i].stats().jit.compiled_entries;
  for (int r = 0; r < args.rounds * kChunks; ++r)
    for (int i = 0; i < 3; ++i) ns[i].push_back(per_call_ms(kChunk, [&] { sessions[i].run(in); }) * 1e6);
  const int calls = args.rounds * kChunks * kChunk;
  std::printf("\nentry cost end to end: x f32[16] -> Add -> Mul -> Relu, %d calls each in chunks of %d, alternating\n",
              calls, kChunk);
  std::printf("%-24s %10s %12s %16s\n", "way", "ns/call", "vs JIT off", "compiled calls");
  for (int i = 0; i < 3; ++i) {
    const double m = median(ns[i]);
    std::printf("%-24s %10.1f %+12.1f %15.0f%%\n", ways[i].name, m, m - median(ns[0]),
                100.0 * static_cast<double>(sessions[i].stats().jit.compiled_entries - entries0[i]) /
                    static_cast<double>(calls));
  }
}

}  // namespace

int main(int argc, char** argv) {
  canary::bench::run_on_one_thread(argv);
  const Args args = parse_args(argc, argv);
  std::printf("jit compile and entry costs, one thread\n");
  bench_compile_latency(args);
  bench_guards(args);
  bench_entry(args);
  return 0;
}
