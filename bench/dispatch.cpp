// Interpreter dispatch overhead: a chain of 200 elementwise ops on 16 floats,
// so the kernels themselves cost almost nothing and the figure is the price
// of one bytecode instruction (dispatch, shape work, buffer reuse).
//
//   canary_bench_dispatch [--ops N] [--elements E] [--seconds S] [--repeats R]
//
// Prints the median and min/max ns per instruction over R timed repeats.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "canary/canary.h"

namespace {

struct Args {
  int ops = 200;
  std::int64_t elements = 16;
  double seconds = 0.3;
  int repeats = 7;
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--ops") a.ops = std::atoi(argv[i + 1]);
    else if (k == "--elements") a.elements = std::atoll(argv[i + 1]);
    else if (k == "--seconds") a.seconds = std::atof(argv[i + 1]);
    else if (k == "--repeats") a.repeats = std::atoi(argv[i + 1]);
  }
  return a;
}

// x → Add(c) → Mul(c) → Relu → Add(c) ... `ops` nodes in all.
canary::Model build_chain(const canary::Runtime& rt, int ops, std::int64_t elements) {
  canary::ModelBuilder b("chain");
  b.input("x", canary::DType::F32, {elements});
  b.constant("c_add", canary::Tensor::from_vector(std::vector<float>(static_cast<std::size_t>(elements), 0.5f), {elements}));
  b.constant("c_mul", canary::Tensor::from_vector(std::vector<float>(static_cast<std::size_t>(elements), 0.9f), {elements}));
  std::string prev = "x";
  for (int i = 0; i < ops; ++i) {
    std::string out = "v" + std::to_string(i);
    switch (i % 3) {
      case 0: b.node("Add", {prev, "c_add"}, {out}); break;
      case 1: b.node("Mul", {prev, "c_mul"}, {out}); break;
      default: b.node("Relu", {prev}, {out}); break;
    }
    prev = out;
  }
  b.output(prev);
  return rt.build(b);
}

// Calls per timed repeat, chosen so a repeat lasts about `seconds`.
int calibrate(canary::Session& s, const canary::NamedTensors& in, double seconds) {
  int calls = 1;
  for (;;) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) s.run(in);
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (dt > seconds / 4 || calls > (1 << 24)) return std::max(1, static_cast<int>(calls * seconds / std::max(dt, 1e-9)));
    calls *= 2;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  canary::Runtime rt;
  canary::Model model = build_chain(rt, args.ops, args.elements);
  canary::Session session = model.session();
  canary::NamedTensors in{{"x", canary::Tensor::from_vector(std::vector<float>(static_cast<std::size_t>(args.elements), 1.0f),
                                                            {args.elements})}};
  const int calls = calibrate(session, in, args.seconds);
  const std::uint64_t instr_before = session.stats().instructions_executed;
  const std::uint64_t calls_before = session.stats().calls;
  std::vector<double> ns_per_instr;
  for (int r = 0; r < args.repeats; ++r) {
    const std::uint64_t i0 = session.stats().instructions_executed;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) session.run(in);
    double dt = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    ns_per_instr.push_back(dt / static_cast<double>(session.stats().instructions_executed - i0));
  }
  std::sort(ns_per_instr.begin(), ns_per_instr.end());
  const double per_call = static_cast<double>(session.stats().instructions_executed - instr_before) /
                          static_cast<double>(session.stats().calls - calls_before);
  std::printf("dispatch: %d-op chain on %lld floats, %.0f instructions per call, %d calls x %d repeats\n", args.ops,
              static_cast<long long>(args.elements), per_call, calls, args.repeats);
  std::printf("ns per instruction: median %.1f  min %.1f  max %.1f\n", ns_per_instr[ns_per_instr.size() / 2],
              ns_per_instr.front(), ns_per_instr.back());
  return 0;
}
