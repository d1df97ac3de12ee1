// A dynamic shape stream through the JIT: the flow-meter style conv net on
// 300 calls of random batch and length against the same number of calls at
// one fixed shape, with compilations, guard failures and deopts counted.
//
//   OMP_NUM_THREADS=1 build-bench/bench/canary_bench_jit_dynamic [--calls K] [--rounds R] [--seed S]
//
// Net: x f32[N, 7, T] -> Conv(16 filters, k5, pads 2) -> Relu -> Conv(16, k3,
// pads 1) -> Relu -> GlobalAveragePool -> Flatten -> Gemm(transB, bias) ->
// y f32[N, 3]; random constant weights; N and T symbolic.
// Stream: K calls (default 300), N uniform in 1..64, T uniform in 16..256,
// seeded. Fixed: K calls at the stream's median-size shape (the call whose
// N*T is the median), so the work is comparable; each call gets its own
// input tensor both ways. Because the stream's total N*T is not exactly K
// times the median's, the ratio is also given per element (pass time divided
// by the sum of N*T over its calls).
// JIT models use JitOptions synchronous (deterministic; compiles are on the
// calling thread, inside the calls that trigger them) with the default
// hot_threshold and limits. The first pass of each model is the cold pass
// (shown for the dynamic JIT model: it contains every compile); then R rounds
// alternate dynamic JIT, fixed JIT, dynamic interpreter, fixed interpreter,
// and the table shows median pass times; a fifth model, "jit no-epi", is the
// JIT with JitOptions::contraction_epilogues off (each Relu a fused kernel
// after its Conv instead of a oneDNN post-op), on the dynamic stream. Counters: "compiles" is
// Stats::jit.compiles, "guardF" Stats::jit.guard_failures, "deopts"
// Stats::jit.deopts, "compiled" the share of calls that ran compiled code;
// "dnnl new" counts oneDNN primitives created (primitive cache misses; the
// cache holds 256 per thread): a new (N, T) needs new Conv and pool
// primitives in the JIT and the interpreter alike.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench/jit/timing.h"
#include "canary/canary.h"
#include "kernels/onednn.h"

namespace {

using canary::DType;
using canary::Tensor;
using canary::bench::median;
using canary::bench::per_call_ms;

struct Args {
  int calls = 300;
  int rounds = 5;
  std::uint32_t seed = 42;
};

// Reads --calls, --rounds and --seed.
Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--calls") a.calls = std::max(3, std::atoi(argv[i + 1]));
    else if (k == "--rounds") a.rounds = std::max(1, std::atoi(argv[i + 1]));
    else if (k == "--seed") a.seed = static_cast<std::uint32_t>(std::atoll(argv[i + 1]));
  }
  return a;
}

// A tensor of the given shape with uniform values in [-scale, scale].
Tensor random_tensor(std::mt19937& rng, std::vector<std::int64_t> shape, float scale) {
  Tensor t = Tensor::empty(DType::F32, shape);
  std::uniform_real_distribution<float> dist(-scale, scale);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

// The conv net described at the top, with weights from a fixed seed.
canary::Model build_net(const canary::Runtime& rt) {
  std::mt19937 rng(5);
  using Ints = std::vector<std::int64_t>;
  canary::ModelBuilder b("flow_conv");
  b.input("x", DType::F32, {"N", 7, "T"});
  b.constant("w1", random_tensor(rng, {16, 7, 5}, 0.3f)).constant("b1", random_tensor(rng, {16}, 0.1f));
  b.constant("w2", random_tensor(rng, {16, 16, 3}, 0.25f)).constant("b2", random_tensor(rng, {16}, 0.1f));
  b.constant("w3", random_tensor(rng, {3, 16}, 0.5f)).constant("b3", random_tensor(rng, {3}, 0.1f));
  b.node("Conv", {"x", "w1", "b1"}, {"c1"}, {{"kernel_shape", Ints{5}}, {"pads", Ints{2, 2}}});
  b.node("Relu", {"c1"}, {"r1"});
  b.node("Conv", {"r1", "w2", "b2"}, {"c2"}, {{"kernel_shape", Ints{3}}, {"pads", Ints{1, 1}}});
  b.node("Relu", {"c2"}, {"r2"}).node("GlobalAveragePool", {"r2"}, {"p"});
  b.node("Flatten", {"p"}, {"f"}, {{"axis", std::int64_t{1}}});
  b.node("Gemm", {"f", "w3", "b3"}, {"y"}, {{"transB", std::int64_t{1}}});
  b.output("y");
  return rt.build(b);
}

// One stream of calls: their inputs and the sum of N*T.
struct Stream {
  std::vector<canary::NamedTensors> inputs;
  double elements = 0;
};

// The random (N, T) shapes of the dynamic stream.
std::vector<std::pair<std::int64_t, std::int64_t>> random_shapes(const Args& args) {
  std::mt19937 rng(args.seed);
  std::uniform_int_distribution<std::int64_t> batch(1, 64), time(16, 256);
  std::vector<std::pair<std::int64_t, std::int64_t>> shapes;
  for (int i = 0; i < args.calls; ++i) {
    const std::int64_t n = batch(rng);
    shapes.emplace_back(n, time(rng));
  }
  return shapes;
}

// The shape whose N*T is the median of the stream's.
std::pair<std::int64_t, std::int64_t> median_shape(std::vector<std::pair<std::int64_t, std::int64_t>> shapes) {
  std::sort(shapes.begin(), shapes.end(), [](auto a, auto b) { return a.first * a.second < b.first * b.second; });
  return shapes[shapes.size() / 2];
}

// A stream with one input tensor per shape.
Stream make_stream(const std::vector<std::pair<std::int64_t, std::int64_t>>& shapes, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Stream s;
  for (const auto& [n, t] : shapes) {
    s.inputs.push_back({{"x", random_tensor(rng, {n, 7, t}, 1.0f)}});
    s.elements += static_cast<double>(n * t);
  }
  return s;
}

// One model and session under test, with its pass times and counters.
struct Runner {
  const char* stream_name;
  const char* tier;
  const Stream* stream;
  canary::Model model;
  canary::Session session;
  std::vector<double> pass_ms;
  double cold_ms = 0;
  canary::JitStats cold, timed;       // counters of the cold pass and of all timed passes
  std::uint64_t cold_misses = 0, timed_misses = 0;

  // Runs the stream once; returns milliseconds and adds the counters' growth to `into`.
  double pass(canary::JitStats& into, std::uint64_t& misses) {
    const canary::JitStats before = session.stats().jit;
    const std::uint64_t misses_before = canary::kernels::onednn_cache_stats().misses;
    const double ms = per_call_ms(1, [&] {
      for (const canary::NamedTensors& in : stream->inputs) session.run(in);
    });
    const canary::JitStats& after = session.stats().jit;
    into.compiles += after.compiles - before.compiles;
    into.guard_failures += after.guard_failures - before.guard_failures;
    into.deopts += after.deopts - before.deopts;
    into.compiled_entries += after.compiled_entries - before.compiled_entries;
    misses += canary::kernels::onednn_cache_stats().misses - misses_before;
    return ms;
  }
};

// Options: one intra-op thread; the JIT on (synchronous) or off, with or without contraction epilogues.
canary::Options net_options(bool jit, bool epilogues = true) {
  canary::Options o;
  o.intra_op_threads = 1;
  o.jit.enabled = jit;
  o.jit.synchronous = true;
  o.jit.contraction_epilogues = epilogues;
  return o;
}

// Prints one runner's row: cold pass or the median of the timed passes.
void print_row(const Runner& r, bool cold, int rounds, int calls) {
  const double ms = cold ? r.cold_ms : median(r.pass_ms);
  const canary::JitStats& j = cold ? r.cold : r.timed;
  const double passes = cold ? 1.0 : rounds;
  const double misses = static_cast<double>(cold ? r.cold_misses : r.timed_misses);
  std::printf("%-8s %-11s %9.1f %9.1f %8.2f %9llu %7llu %7llu %9.0f%% %9.0f\n", r.stream_name,
              cold ? (std::string(r.tier) + " cold").c_str() : r.tier, ms, ms * 1e3 / calls,
              ms * 1e6 / r.stream->elements, static_cast<unsigned long long>(j.compiles),
              static_cast<unsigned long long>(j.guard_failures), static_cast<unsigned long long>(j.deopts),
              100.0 * static_cast<double>(j.compiled_entries) / (passes * calls), misses);
}

}  // namespace

int main(int argc, char** argv) {
  canary::bench::run_on_one_thread(argv);
  const Args args = parse_args(argc, argv);
  const auto shapes = random_shapes(args);
  const auto [fixed_n, fixed_t] = median_shape(shapes);
  const Stream dynamic = make_stream(shapes, args.seed + 1);
  const Stream fixed = make_stream(std::vector(static_cast<std::size_t>(args.calls), std::pair{fixed_n, fixed_t}),
                                   args.seed + 2);
  const canary::Runtime jit_rt(net_options(true)), interp_rt(net_options(false));
  const canary::Runtime no_epilogue_rt(net_options(true, false));
  std::vector<Runner> runners;
  runners.reserve(5);
  for (const auto& [name, tier, stream, rt] :
       {std::tuple{"dynamic", "jit", &dynamic, &jit_rt}, std::tuple{"fixed", "jit", &fixed, &jit_rt},
        std::tuple{"dynamic", "interp", &dynamic, &interp_rt}, std::tuple{"fixed", "interp", &fixed, &interp_rt},
        std::tuple{"dynamic", "jit no-epi", &dynamic, &no_epilogue_rt}}) {
    canary::Model model = build_net(*rt);
    canary::Session session = model.session();
    runners.push_back(Runner{name, tier, stream, std::move(model), std::move(session), {}, 0, {}, {}, 0, 0});
  }
  for (Runner& r : runners) r.cold_ms = r.pass(r.cold, r.cold_misses);
  for (int round = 0; round < args.rounds; ++round)
    for (Runner& r : runners) r.pass_ms.push_back(r.pass(r.timed, r.timed_misses));

  std::printf("jit dynamic stream: conv net x f32[N, 7, T], %d calls, N in 1..64, T in 16..256 (seed %u), one thread\n",
              args.calls, args.seed);
  std::printf("fixed shape: [%lld, 7, %lld] (median N*T = %lld); elements = sum of N*T: dynamic %.0f, fixed %.0f\n",
              static_cast<long long>(fixed_n), static_cast<long long>(fixed_t),
              static_cast<long long>(fixed_n * fixed_t), dynamic.elements, fixed.elements);
  std::printf("pass = all %d calls; timed rows: median of %d passes, counters summed over those passes\n",
              args.calls, args.rounds);
  std::printf("%-8s %-11s %9s %9s %8s %9s %7s %7s %10s %9s\n", "stream", "tier", "pass ms", "us/call", "ns/elem",
              "compiles", "guardF", "deopts", "compiled", "dnnl new");
  print_row(runners[0], true, args.rounds, args.calls);
  for (const Runner& r : runners) print_row(r, false, args.rounds, args.calls);
  const double jd = median(runners[0].pass_ms), jf = median(runners[1].pass_ms);
  const double id = median(runners[2].pass_ms), inf = median(runners[3].pass_ms);
  const double per_elem = fixed.elements / dynamic.elements;
  std::printf("jit    dynamic/fixed: %.2fx per pass, %.2fx per element (aim <= 1.2)\n", jd / jf, jd / jf * per_elem);
  std::printf("interp dynamic/fixed: %.2fx per pass, %.2fx per element\n", id / inf, id / inf * per_elem);
  std::printf("interp/jit: dynamic %.2fx, fixed %.2fx\n", id / jd, inf / jf);
  std::printf("contraction epilogues: jit without / with on the dynamic stream %.2fx\n",
              median(runners[4].pass_ms) / jd);
  return 0;
}
