// Non-adjacent fusion: elementwise ops that the exporter's order splits
// around a MatMul, compiled with JitOptions::nonadjacent_fusion on (one
// fused group after the MatMul, the earlier ops sunk into it) and off (one
// group before the MatMul, one after), against the interpreter, measured
// side by side in one run.
//
//   OMP_NUM_THREADS=1 build/bench/canary_bench_jit_nonadjacent [--rounds R] [--target-ms T]
//
// Models, x f32[N, H] and weights [H, H]:
//   gated:    y = sigmoid(x W) * tanh(x V)   (Sigmoid recorded before the second MatMul)
//   residual: y = x W + tanh(x) * 0.5        (Tanh recorded before the MatMul)
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
using canary::bench::max_abs_diff;
using canary::bench::median;
using canary::bench::uniform_tensor;

using Args = canary::bench::RoundArgs;

const char* kGated = R"(canary v1
graph main(x: f32[N, H], w: f32[H, H], v: f32[H, H]) -> (y) {
  g = MatMul(x, w)
  s = Sigmoid(g)
  h = MatMul(x, v)
  t = Tanh(h)
  y = Mul(s, t)
}
)";

const char* kResidual = R"(canary v1
graph main(x: f32[N, H], w: f32[H, H], v: f32[H, H]) -> (y) {
  const half: f32[] = [0.5]
  a = Tanh(x)
  m = MatMul(x, w)
  b = Mul(a, half)
  y = Add(m, b)
}
)";

canary::Options options(bool jit, bool nonadjacent) {
  canary::Options o = canary::bench::jit_bench_options(jit, 2);
  o.jit.nonadjacent_fusion = nonadjacent;
  return o;
}

// Fused groups in the model's variants.
int fused_groups(const canary::Model& m) {
  int n = 0;
  for (const auto& a : m.jit_report().anchors)
    for (const auto& v : a.variants) n += static_cast<int>(v.groups.size());
  return n;
}

void run_row(const char* name, const char* text, std::int64_t n, std::int64_t h, const Args& args) {
  canary::Runtime on_rt(options(true, true)), off_rt(options(true, false)), plain_rt(options(false, false));
  canary::Model on_model = on_rt.load_text(text), off_model = off_rt.load_text(text);
  canary::Session on = on_model.session(), off = off_model.session(), plain = plain_rt.load_text(text).session();
  const float ws = 1.0f / std::sqrt(static_cast<float>(h));
  const NamedTensors in{{"x", uniform_tensor({n, h}, 1, -1.0f, 1.0f)},
                        {"w", uniform_tensor({h, h}, 2, -ws, ws)},
                        {"v", uniform_tensor({h, h}, 3, -ws, ws)}};
  for (int k = 0; k < 3; ++k) {  // recorded, compiled, then run compiled
    on.run(in);
    off.run(in);
  }
  const double diff = max_abs_diff(on.run(in).at("y"), plain.run(in).at("y"));
  const int calls = std::max(1, canary::bench::calls_for(args.target_ms, [&] { plain.run(in); }));
  std::vector<double> samples[3];
  canary::Session* const sessions[3] = {&on, &off, &plain};
  canary::bench::rotating_samples(sessions, in, args.rounds, calls, samples);
  const double e = median(samples[0]), f = median(samples[1]), p = median(samples[2]);
  std::printf("| %s | [%lld, %lld] | %.4f | %.4f | %.4f | %.2f | %.2f | %.1e | %d / %d |\n", name,
              static_cast<long long>(n), static_cast<long long>(h), e, f, p, f / e, p / e, diff,
              fused_groups(on_model), fused_groups(off_model));
}

}  // namespace

int main(int argc, char** argv) {
  canary::bench::run_on_one_thread(argv);
  const Args args = canary::bench::parse_round_args(argc, argv, {9, 20.0});
  std::printf("| model | x | on ms | off ms | interpreter ms | off/on | interp/on | max|diff| | groups on / off |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& [name, text] : {std::pair{"gated", kGated}, std::pair{"residual", kResidual}}) {
    run_row(name, text, 256, 64, args);
    run_row(name, text, 4096, 256, args);
    run_row(name, text, 16384, 256, args);
  }
  return 0;
}
