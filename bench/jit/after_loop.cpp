// The ops after a loop: an RNN written as a Loop, then a head of
// elementwise ops and a MatMul over its last state, with the JIT on against
// the interpreter, side by side in one run. Also reports the bytecode
// instructions the interpreter still runs per call: before the graph had a
// continuation anchor after the loop, the head was always among them.
//
//   OMP_NUM_THREADS=1 build/bench/canary_bench_jit_after_loop [--rounds R] [--target-ms T]
//
// Model, h f32[N, H], T steps, then over h_last:
//   z = h_last * s + b; r = relu(z); g = sigmoid(z); m = r * g + h_last; n = m * m;
//   logits = (n - m) V; score = sigmoid(logits)
#include <algorithm>
#include <cmath>
#include <cstdio>
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

const char* kRnnWithHead = R"(canary v1
graph main(h0: f32[N, H], w: f32[H, H], s: f32[H], b: f32[H], v: f32[H, 4], steps: i64[]) -> (score) {
  const keep_going: bool[] = [true]
  h_last: f32[N, H] = Loop(steps, keep_going, h0) {
    body = graph step(i: i64[], cond: bool[], h: f32[N, H]) -> (cond, h_next) {
      a = MatMul(h, w)
      h_next: f32[N, H] = Tanh(a)
    }
  } "rnn"
  zs = Mul(h_last, s)
  z = Add(zs, b)
  r = Relu(z)
  g = Sigmoid(z)
  rg = Mul(r, g)
  m = Add(rg, h_last)
  n = Mul(m, m)
  d = Sub(n, m)
  logits = MatMul(d, v)
  score = Sigmoid(logits)
}
)";

NamedTensors inputs(std::int64_t t, std::int64_t n, std::int64_t h) {
  const float ws = 1.0f / std::sqrt(static_cast<float>(h));
  return {{"h0", uniform_tensor({n, h}, 1, -1.0f, 1.0f)},   {"w", uniform_tensor({h, h}, 2, -ws, ws)},
          {"s", uniform_tensor({h}, 3, 0.5f, 1.5f)},        {"b", uniform_tensor({h}, 4, -0.1f, 0.1f)},
          {"v", uniform_tensor({h, 4}, 5, -ws, ws)},        {"steps", canary::Tensor::scalar<std::int64_t>(t)}};
}

// Instructions the session's interpreter runs for one call.
std::uint64_t interpreted_per_call(canary::Session& s, const NamedTensors& in) {
  const std::uint64_t before = s.stats().instructions_executed;
  s.run(in);
  return s.stats().instructions_executed - before;
}

}  // namespace

int main(int argc, char** argv) {
  canary::bench::run_on_one_thread(argv);
  const auto args = canary::bench::parse_round_args(argc, argv, {9, 20.0});
  std::printf("| T | [N, H] | jit ms | interpreter ms | interp/jit | max|diff| "
              "| instructions interpreted per call: jit / interpreter |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const auto& [t, n, h] : {std::tuple{8, 1, 32}, std::tuple{8, 16, 64}, std::tuple{4, 256, 256}}) {
    const NamedTensors in = inputs(t, n, h);
    canary::Runtime jit_rt(canary::bench::jit_bench_options(true, 2)),
        plain_rt(canary::bench::jit_bench_options(false, 2));
    canary::Session jit = jit_rt.load_text(kRnnWithHead).session(), plain = plain_rt.load_text(kRnnWithHead).session();
    for (int k = 0; k < 4; ++k) jit.run(in);  // recorded, compiled, then run compiled
    const double diff = max_abs_diff(jit.run(in).at("score"), plain.run(in).at("score"));
    const std::uint64_t interpreted = interpreted_per_call(jit, in), all = interpreted_per_call(plain, in);
    const int calls = std::max(1, canary::bench::calls_for(args.target_ms, [&] { plain.run(in); }));
    std::vector<double> samples[2];
    canary::Session* const sessions[2] = {&jit, &plain};
    canary::bench::rotating_samples(sessions, in, args.rounds, calls, samples);
    const double j = median(samples[0]), p = median(samples[1]);
    std::printf("| %lld | [%lld, %lld] | %.4f | %.4f | %.2f | %.1e | %llu / %llu |\n", static_cast<long long>(t),
                static_cast<long long>(n), static_cast<long long>(h), j, p, p / j, diff,
                static_cast<unsigned long long>(interpreted), static_cast<unsigned long long>(all));
  }
  return 0;
}
