// Softmax and LayerNormalization over the last axis with an elementwise
// prologue, fused by the JIT into one row kernel, against the interpreter
// (an interpreted prologue, then oneDNN's softmax / layer normalisation),
// measured side by side in one run.
//
//   OMP_NUM_THREADS=1 build/bench/canary_bench_jit_rows [--rounds R] [--target-ms T]
//
// Models (x f32[N, T], s and b f32[T]):
//   "softmax"   : Softmax(x * 0.5 - b)
//   "layernorm" : LayerNormalization(x + b, s, b)
//   "2 softmax" : Softmax(x - b) and Softmax(x + b), two outputs
// Each round times single calls of the compiled model and of the interpreter
// alternately (A B A B ..., about T ms of each); figures are medians over all
// samples of R rounds, per call. "max|diff|" is the largest difference of the
// two tiers' outputs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/jit/bench_tensors.h"
#include "bench/jit/timing.h"
#include "canary/canary.h"

namespace {

using canary::DType;
using canary::NamedTensors;
using canary::Tensor;
using canary::bench::max_abs_diff;
using canary::bench::median;
using canary::bench::per_call_ms;
using canary::bench::uniform_tensor;

using Args = canary::bench::RoundArgs;

const char* kSoftmax = R"(canary v1
graph main(x: f32[N, T], s: f32[T], b: f32[T]) -> (y) {
  const half: f32[] = [0.5]
  h = Mul(x, half)
  t = Sub(h, b)
  y = Softmax(t) {axis = -1}
}
)";

const char* kLayerNorm = R"(canary v1
graph main(x: f32[N, T], s: f32[T], b: f32[T]) -> (y) {
  u = Add(x, b)
  y = LayerNormalization(u, s, b) {axis = -1, epsilon = 0.00001}
}
)";

// Two row ops in a row: the VM gives u the register t held, and each
// Softmax still takes its elementwise op as its prologue.
const char* kTwoSoftmax = R"(canary v1
graph main(x: f32[N, T], s: f32[T], b: f32[T]) -> (y, z) {
  t = Sub(x, b)
  y = Softmax(t) {axis = -1}
  u = Add(x, b)
  z = Softmax(u) {axis = -1}
}
)";

canary::Options options(bool jit) {
  canary::Options o;
  o.jit.enabled = jit;
  o.jit.synchronous = true;
  o.jit.hot_threshold = 1;
  return o;
}

void run_row(const char* name, const char* text, std::int64_t n, std::int64_t t, const Args& args) {
  canary::Runtime jit_rt(options(true)), plain_rt(options(false));
  canary::Model jit_model = jit_rt.load_text(text);
  canary::Session jit = jit_model.session();
  canary::Session plain = plain_rt.load_text(text).session();
  const NamedTensors in{{"x", uniform_tensor({n, t}, 1, -4, 4)},
                        {"s", uniform_tensor({t}, 2, 0.5f, 1.5f)},
                        {"b", uniform_tensor({t}, 3, -1, 1)}};
  for (int i = 0; i < 3; ++i) jit.run(in);  // recorded, compiled, then run compiled
  const double diff = max_abs_diff(jit.run(in).at("y"), plain.run(in).at("y"));
  const int calls = std::max(1, canary::bench::calls_for(args.target_ms, [&] { plain.run(in); }));
  std::vector<double> jit_ms, plain_ms;
  for (int r = 0; r < args.rounds; ++r)
    for (int c = 0; c < calls; ++c) {
      jit_ms.push_back(per_call_ms(1, [&] { jit.run(in); }));
      plain_ms.push_back(per_call_ms(1, [&] { plain.run(in); }));
    }
  const double j = median(jit_ms), p = median(plain_ms);
  const bool compiled = jit.stats().jit.compiled_entries > 0;
  std::printf("| %s | [%lld, %lld] | %.4f | %.4f | %.2f | %.1e | %s |\n", name, static_cast<long long>(n),
              static_cast<long long>(t), j, p, p / j, diff, compiled ? "yes" : "NO");
}

}  // namespace

int main(int argc, char** argv) {
  canary::bench::run_on_one_thread(argv);
  const Args args = canary::bench::parse_round_args(argc, argv, {9, 20.0});
  std::printf("| model | x | fused ms | interpreter ms | interp/fused | max|diff| | compiled |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {{64, 256}, {1024, 64}, {32, 1024}, {4096, 12}};
  for (const auto& [n, t] : shapes) run_row("softmax", kSoftmax, n, t, args);
  for (const auto& [n, t] : shapes) run_row("layernorm", kLayerNorm, n, t, args);
  for (const auto& [n, t] : shapes) run_row("2 softmax", kTwoSoftmax, n, t, args);
  return 0;
}
