// Loops that stack a scan output: an RNN written as a Loop that also
// returns every step's state, and the same cell as a Scan over x, with the
// JIT on against the interpreter, measured side by side in one run. Also
// reports the bytecode instructions the interpreter still runs per call
// (what the compiled loop leaves to it).
//
//   OMP_NUM_THREADS=1 build/bench/canary_bench_jit_scan_loops [--rounds R] [--target-ms T]
//
// Models, h f32[N, H], weights [H, H], T steps:
//   loop: h = tanh(h W + b), hs[t] = h      (Loop with a scan output)
//   scan: h = tanh(x_t U + h W), ys[t] = h  (Scan over x f32[T, N, H])
// Each round times single calls of the two sessions in rotating order,
// about T ms of each; figures are medians of all samples, per call.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
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

const char* kLoop = R"(canary v1
graph main(h0: f32[N, H], w: f32[H, H], b: f32[H], steps: i64[]) -> (h_last, hs) {
  const keep_going: bool[] = [true]
  h_last: f32[N, H], hs: f32[T, N, H] = Loop(steps, keep_going, h0) {
    body = graph step(i: i64[], cond: bool[], h: f32[N, H]) -> (cond, h_next, y) {
      a = MatMul(h, w)
      s = Add(a, b)
      h_next: f32[N, H] = Tanh(s)
      y: f32[N, H] = Identity(h_next)
    }
  } "rnn"
}
)";

const char* kScan = R"(canary v1
graph main(h0: f32[N, H], xs: f32[T, N, H], u: f32[H, H], w: f32[H, H]) -> (h_last, ys) {
  h_last: f32[N, H], ys: f32[T, N, H] = Scan(h0, xs) {
    body = graph step(h: f32[N, H], x_t: f32[N, H]) -> (h_next, y) captures (u, w) {
      a = MatMul(x_t, u)
      r = MatMul(h, w)
      s = Add(a, r)
      h_next: f32[N, H] = Tanh(s)
      y: f32[N, H] = Identity(h_next)
    },
    num_scan_inputs = 1
  } "rnn"
}
)";

NamedTensors loop_inputs(std::int64_t t, std::int64_t n, std::int64_t h) {
  const float ws = 1.0f / std::sqrt(static_cast<float>(h));
  return {{"h0", uniform_tensor({n, h}, 1, -1.0f, 1.0f)},
          {"w", uniform_tensor({h, h}, 2, -ws, ws)},
          {"b", uniform_tensor({h}, 3, -0.1f, 0.1f)},
          {"steps", canary::Tensor::scalar<std::int64_t>(t)}};
}

NamedTensors scan_inputs(std::int64_t t, std::int64_t n, std::int64_t h) {
  const float ws = 1.0f / std::sqrt(static_cast<float>(h));
  return {{"h0", uniform_tensor({n, h}, 1, -1.0f, 1.0f)},
          {"xs", uniform_tensor({t, n, h}, 4, -1.0f, 1.0f)},
          {"u", uniform_tensor({h, h}, 5, -ws, ws)},
          {"w", uniform_tensor({h, h}, 2, -ws, ws)}};
}

void run_row(const char* name, const char* text, const NamedTensors& in, std::int64_t t, std::int64_t n,
             std::int64_t h, const Args& args) {
  canary::Runtime jit_rt(canary::bench::jit_bench_options(true, 2)),
      plain_rt(canary::bench::jit_bench_options(false, 2));
  canary::Session jit = jit_rt.load_text(text).session(), plain = plain_rt.load_text(text).session();
  for (int k = 0; k < 3; ++k) jit.run(in);  // recorded, compiled, then run compiled
  const NamedTensors got = jit.run(in), want = plain.run(in);
  double diff = 0.0;
  for (const auto& [output, tensor] : want) diff = std::max(diff, max_abs_diff(got.at(output), tensor));
  const std::uint64_t before = jit.stats().instructions_executed;
  jit.run(in);
  const std::uint64_t interpreted = jit.stats().instructions_executed - before;
  const std::uint64_t plain_before = plain.stats().instructions_executed;
  plain.run(in);
  const std::uint64_t plain_instructions = plain.stats().instructions_executed - plain_before;
  const int calls = std::max(1, canary::bench::calls_for(args.target_ms, [&] { plain.run(in); }));
  std::vector<double> samples[2];
  canary::Session* const sessions[2] = {&jit, &plain};
  canary::bench::rotating_samples(sessions, in, args.rounds, calls, samples);
  const double j = median(samples[0]), p = median(samples[1]);
  std::printf("| %s | %lld | [%lld, %lld] | %.4f | %.4f | %.2f | %.1e | %llu / %llu |\n", name,
              static_cast<long long>(t), static_cast<long long>(n), static_cast<long long>(h), j, p, p / j, diff,
              static_cast<unsigned long long>(interpreted), static_cast<unsigned long long>(plain_instructions));
}

}  // namespace

int main(int argc, char** argv) {
  canary::bench::run_on_one_thread(argv);
  const Args args = canary::bench::parse_round_args(argc, argv, {9, 20.0});
  std::printf("| model | T | [N, H] | jit ms | interpreter ms | interp/jit | max|diff| "
              "| instructions interpreted per call: jit / interpreter |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const auto& [t, n, h] : {std::tuple{64, 1, 32}, std::tuple{64, 16, 64}, std::tuple{32, 8, 256}}) {
    run_row("loop", kLoop, loop_inputs(t, n, h), t, n, h, args);
    run_row("scan", kScan, scan_inputs(t, n, h), t, n, h, args);
  }
  return 0;
}
