// Loop-invariant hoisting: an RNN cell written as a Loop the way exporters
// write it (the weights transposed and the biases summed inside the body, on
// every iteration), compiled with JitOptions::hoist_loop_invariants on and
// off, against the interpreter, measured side by side in one run.
//
//   OMP_NUM_THREADS=1 build/bench/canary_bench_jit_hoisting [--rounds R] [--target-ms T]
//
// Model: xs f32[T, N, I], h0 f32[N, H], wx f32[H, I], wh f32[H, H] and biases
// bx, bh f32[H] as inputs; per step h = tanh(x_t Wx^T + h Wh^T + bx + bh).
// Each round times single calls of the three sessions in rotating order,
// about T ms of each; figures are medians of all samples, per call.
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
using canary::Tensor;
using canary::bench::max_abs_diff;
using canary::bench::median;
using canary::bench::uniform_tensor;

using Args = canary::bench::RoundArgs;

const char* kRnnLoop = R"(canary v1
graph main(xs: f32[T, N, I], h0: f32[N, H], wx: f32[H, I], wh: f32[H, H], bx: f32[H], bh: f32[H]) -> (h_last) {
  const keep_going: bool[] = [true]
  steps: i64[1] = Shape(xs) {end = 1}
  h_last: f32[N, H] = Loop(steps, keep_going, h0) {
    body = graph step(i: i64[], cond: bool[], h: f32[N, H]) -> (cond, h_next) {
      wxt = Transpose(wx) {perm = [1, 0]}
      wht = Transpose(wh) {perm = [1, 0]}
      b = Add(bx, bh)
      x_t: f32[N, I] = Gather(xs, i) {axis = 0}
      a = MatMul(x_t, wxt)
      r = MatMul(h, wht)
      s = Add(a, r)
      s2 = Add(s, b)
      h_next: f32[N, H] = Tanh(s2)
    }
  } "rnn"
}
)";

canary::Options options(bool jit, bool hoist) {
  canary::Options o = canary::bench::jit_bench_options(jit, 2);
  o.jit.hoist_loop_invariants = hoist;
  return o;
}

// Steps marked hoisted in the model's variants.
int hoisted_steps(const canary::Model& m) {
  int n = 0;
  for (const auto& a : m.jit_report().anchors)
    for (const auto& v : a.variants)
      for (std::size_t at = v.listing.find("[hoisted"); at != std::string::npos; at = v.listing.find("[hoisted", at + 1))
        ++n;
  return n;
}

void run_row(std::int64_t t, std::int64_t n, std::int64_t i, std::int64_t h, const Args& args) {
  canary::Runtime on_rt(options(true, true)), off_rt(options(true, false)), plain_rt(options(false, false));
  canary::Model on_model = on_rt.load_text(kRnnLoop), off_model = off_rt.load_text(kRnnLoop);
  canary::Session on = on_model.session(), off = off_model.session(), plain = plain_rt.load_text(kRnnLoop).session();
  const float ws = 1.0f / std::sqrt(static_cast<float>(h));
  const NamedTensors in{{"xs", uniform_tensor({t, n, i}, 1, -1.0f, 1.0f)},
                        {"h0", uniform_tensor({n, h}, 2, -0.5f, 0.5f)},
                        {"wx", uniform_tensor({h, i}, 3, -ws, ws)},
                        {"wh", uniform_tensor({h, h}, 4, -ws, ws)},
                        {"bx", uniform_tensor({h}, 5, -0.1f, 0.1f)},
                        {"bh", uniform_tensor({h}, 6, -0.1f, 0.1f)}};
  for (int k = 0; k < 3; ++k) {  // recorded, compiled, then run compiled
    on.run(in);
    off.run(in);
  }
  const double diff = max_abs_diff(on.run(in).at("h_last"), plain.run(in).at("h_last"));
  const int calls = std::max(1, canary::bench::calls_for(args.target_ms, [&] { plain.run(in); }));
  std::vector<double> samples[3];
  canary::Session* const sessions[3] = {&on, &off, &plain};
  canary::bench::rotating_samples(sessions, in, args.rounds, calls, samples);
  const double e = median(samples[0]), f = median(samples[1]), p = median(samples[2]);
  std::printf("| %lld | %lld | %lld | %lld | %.4f | %.4f | %.4f | %.2f | %.2f | %.1e | %d |\n",
              static_cast<long long>(t), static_cast<long long>(n), static_cast<long long>(i),
              static_cast<long long>(h), e, f, p, f / e, p / e, diff, hoisted_steps(on_model));
}

}  // namespace

int main(int argc, char** argv) {
  canary::bench::run_on_one_thread(argv);
  const Args args = canary::bench::parse_round_args(argc, argv, {9, 20.0});
  std::printf("| T | N | I | H | hoisted ms | not hoisted ms | interpreter ms | not/hoisted | interp/hoisted | "
              "max|diff| | hoisted steps |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  run_row(64, 1, 8, 32, args);
  run_row(64, 16, 32, 64, args);
  run_row(32, 8, 64, 256, args);
  return 0;
}
