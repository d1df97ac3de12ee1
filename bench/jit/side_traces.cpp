// Side traces: a model whose If takes either direction with the data,
// compiled with JitOptions::side_traces on (the exit at the branch
// continues in a side trace of the other direction) and off (the trace is
// cut before the branch and the interpreter runs the If), against the
// interpreter, measured side by side in one run.
//
//   OMP_NUM_THREADS=1 build/bench/canary_bench_jit_side_traces [--rounds R] [--target-ms T]
//
// Model, x f32[N, H], w [H, H]: m = x W; if sum(m) > 0 then
// y = tanh(m) * 0.5 + m, else y = sigmoid(m) * m - 0.5. Streams: the two
// directions alternating, and the else direction on 1 call in 8. Each round
// times single calls of the three sessions in rotating order over the same
// stream, about T ms of each; figures are medians of all samples, per call.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/jit/bench_tensors.h"
#include "bench/jit/timing.h"
#include "canary/canary.h"

namespace {

using canary::NamedTensors;
using canary::bench::max_abs_diff;
using canary::bench::median;
using canary::bench::uniform_tensor;

using Args = canary::bench::RoundArgs;

const char* kModel = R"(canary v1
graph main(x: f32[N, H], w: f32[H, H]) -> (y) {
  const half: f32[] = [0.5]
  const zero: f32[] = [0]
  m = MatMul(x, w)
  s = ReduceSum(m) {keepdims = 0}
  flag: bool[] = Greater(s, zero)
  y: f32[N, H] = If(flag) {
    else_branch = graph low() -> (z) {
      a = Sigmoid(m)
      b = Mul(a, m)
      z = Sub(b, half)
    },
    then_branch = graph high() -> (z) {
      a = Tanh(m)
      b = Mul(a, half)
      z = Add(b, m)
    }
  } "choose"
}
)";

canary::Options options(bool jit, bool side_traces) {
  canary::Options o = canary::bench::jit_bench_options(jit, 2);
  o.jit.side_traces = side_traces;
  return o;
}

struct Stream {
  const char* name;
  int period;  // the else direction on 1 call in `period`
};

// The inputs of call c: x positive (then) or negative (else), shared w.
const NamedTensors& inputs_of(int c, int period, const NamedTensors& high, const NamedTensors& low) {
  return c % period == period - 1 ? low : high;
}

void run_row(const Stream& stream, std::int64_t n, std::int64_t h, const Args& args) {
  canary::Runtime on_rt(options(true, true)), off_rt(options(true, false)), plain_rt(options(false, false));
  canary::Session on = on_rt.load_text(kModel).session(), off = off_rt.load_text(kModel).session();
  canary::Session plain = plain_rt.load_text(kModel).session();
  const float ws = 1.0f / std::sqrt(static_cast<float>(h));
  const canary::Tensor w = uniform_tensor({h, h}, 2, 0.0f, ws);
  const NamedTensors high{{"x", uniform_tensor({n, h}, 1, 0.1f, 1.0f)}, {"w", w}};
  const NamedTensors low{{"x", uniform_tensor({n, h}, 3, -1.0f, -0.1f)}, {"w", w}};
  // Warm-up: enough calls of the stream for both JIT sessions to settle.
  double diff = 0.0;
  for (int c = 0; c < 16 * stream.period; ++c) {
    const NamedTensors& in = inputs_of(c, stream.period, high, low);
    const canary::Tensor want = plain.run(in).at("y");
    diff = std::max({diff, max_abs_diff(on.run(in).at("y"), want), max_abs_diff(off.run(in).at("y"), want)});
  }
  const canary::JitStats before_on = on.stats().jit, before_off = off.stats().jit;
  const int calls = std::max(2 * stream.period, canary::bench::calls_for(args.target_ms, [&] { plain.run(high); }));
  std::vector<double> samples[3];
  canary::Session* const sessions[3] = {&on, &off, &plain};
  for (int r = 0; r < args.rounds; ++r)
    for (int c = 0; c < calls; ++c) {
      const NamedTensors& in = inputs_of(c, stream.period, high, low);
      for (std::size_t k = 0; k < 3; ++k) {
        const std::size_t i = (static_cast<std::size_t>(c) + k) % 3;
        samples[i].push_back(canary::bench::per_call_ms(1, [&] { sessions[i]->run(in); }));
      }
    }
  const canary::JitStats& j_on = on.stats().jit;
  const canary::JitStats& j_off = off.stats().jit;
  const double e = median(samples[0]), f = median(samples[1]), p = median(samples[2]);
  std::printf("| %s | [%lld, %lld] | %.4f | %.4f | %.4f | %.2f | %.2f | %.1e | %llu / %llu | %llu | %llu / %llu |\n",
              stream.name, static_cast<long long>(n), static_cast<long long>(h), e, f, p, f / e, p / e, diff,
              static_cast<unsigned long long>(j_on.deopts - before_on.deopts),
              static_cast<unsigned long long>(j_off.deopts - before_off.deopts),
              static_cast<unsigned long long>(j_on.side_trace_entries - before_on.side_trace_entries),
              static_cast<unsigned long long>(j_on.compiles), static_cast<unsigned long long>(j_off.compiles));
}

}  // namespace

int main(int argc, char** argv) {
  canary::bench::run_on_one_thread(argv);
  const Args args = canary::bench::parse_round_args(argc, argv, {9, 20.0});
  std::printf("| stream | x | on ms | off ms | interpreter ms | off/on | interp/on | max|diff| | deopts on / off "
              "| side-trace entries | compiles on / off |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Stream& stream : {Stream{"alternating", 2}, Stream{"else 1 in 8", 8}}) {
    run_row(stream, 64, 64, args);
    run_row(stream, 1024, 256, args);
  }
  return 0;
}
