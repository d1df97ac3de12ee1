// Contraction epilogues: a Conv, Gemm or MatMul followed by unary ops, with
// the ops as oneDNN post-ops of the contraction (JitOptions::
// contraction_epilogues on) against the same ops as a fused kernel after it
// (off), and against the interpreter, measured side by side in one run.
//
//   OMP_NUM_THREADS=1 build/bench/canary_bench_jit_epilogue [--rounds R] [--target-ms T]
//
// Models:
//   "conv+relu"  : Relu(Conv(x, w, b)), x f32[N, C, T], w [M, C, 5], pads 2
//                  (the tiled channels-last path)
//   "gemm+relu"  : Relu(Gemm(x, w, b)), x f32[N, K], w [K, M]
//   "matmul+tanh": Tanh(MatMul(x, w)), x f32[N, K], w [K, M]
//   "matmul+bias+relu": Relu(MatMul(x, w) + b), b [M] (a binary post-op, then relu)
//   "matmul+residual": MatMul(x, w) + x, K = M (a binary post-op alone)
// Each round times single calls of the three sessions in turn (epilogue,
// separate kernel, interpreter; the order rotates call by call), about T ms
// of each; figures are medians of all samples of R rounds, per call.
// "planned" says the JIT planned the epilogue (with the option on only); the
// driver still runs post-ops only on results of at least the L2 cache size
// in floats (JitOptions::epilogue_min_elements 0; 327,680 on a 1.25 MiB L2),
// and for Relu only when the operands are no larger than the result, so rows
// outside that take the same path both ways. "max|diff|" compares the epilogue
// session's output with the interpreter's.
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
using canary::bench::uniform_tensor;

using Args = canary::bench::RoundArgs;

const char* kConvRelu = R"(canary v1
graph main(x: f32[N, C, T], w: f32[M, C, 5], b: f32[M]) -> (y) {
  h = Conv(x, w, b) {pads = [2, 2]}
  y = Relu(h)
}
)";

const char* kGemmRelu = R"(canary v1
graph main(x: f32[N, K], w: f32[K, M], b: f32[M]) -> (y) {
  h = Gemm(x, w, b)
  y = Relu(h)
}
)";

const char* kMatmulTanh = R"(canary v1
graph main(x: f32[N, K], w: f32[K, M], b: f32[M]) -> (y) {
  h = MatMul(x, w)
  y = Tanh(h)
}
)";

const char* kMatmulBiasRelu = R"(canary v1
graph main(x: f32[N, K], w: f32[K, M], b: f32[M]) -> (y) {
  h = MatMul(x, w)
  a = Add(h, b)
  y = Relu(a)
}
)";

const char* kMatmulResidual = R"(canary v1
graph main(x: f32[N, K], w: f32[K, M], b: f32[M]) -> (y) {
  h = MatMul(x, w)
  y = Add(h, x)
}
)";

canary::Options options(bool jit, bool epilogues) {
  canary::Options o = canary::bench::jit_bench_options(jit, 1);
  o.jit.contraction_epilogues = epilogues;
  return o;
}

// True when a session's model holds a variant whose listing names a post-op.
bool uses_epilogue(const canary::Model& m) {
  for (const auto& a : m.jit_report().anchors)
    for (const auto& v : a.variants)
      if (v.listing.find("(oneDNN post-ops") != std::string::npos) return true;
  return false;
}

void run_row(const char* name, const char* text, const NamedTensors& in, const std::string& shape, const Args& args) {
  canary::Runtime on_rt(options(true, true)), off_rt(options(true, false)), plain_rt(options(false, false));
  canary::Model on_model = on_rt.load_text(text), off_model = off_rt.load_text(text);
  canary::Session on = on_model.session(), off = off_model.session(), plain = plain_rt.load_text(text).session();
  for (int i = 0; i < 3; ++i) {  // recorded, compiled, then run compiled
    on.run(in);
    off.run(in);
  }
  const double diff = max_abs_diff(on.run(in).at("y"), plain.run(in).at("y"));
  const int calls = std::max(1, canary::bench::calls_for(args.target_ms, [&] { plain.run(in); }));
  std::vector<double> samples[3];
  canary::Session* const sessions[3] = {&on, &off, &plain};
  canary::bench::rotating_samples(sessions, in, args.rounds, calls, samples);
  const double e = median(samples[0]), s = median(samples[1]), p = median(samples[2]);
  std::printf("| %s | %s | %.4f | %.4f | %.4f | %.2f | %.2f | %.1e | %s |\n", name, shape.c_str(), e, s, p, s / e,
              p / e, diff, uses_epilogue(on_model) && !uses_epilogue(off_model) ? "yes" : "NO");
}

void conv_row(std::int64_t n, std::int64_t c, std::int64_t m, std::int64_t t, const Args& args) {
  const NamedTensors in{{"x", uniform_tensor({n, c, t}, 1, -1, 1)}, {"w", uniform_tensor({m, c, 5}, 2, -0.3f, 0.3f)},
                        {"b", uniform_tensor({m}, 3, -0.1f, 0.1f)}};
  run_row("conv+relu", kConvRelu, in,
          "x [" + std::to_string(n) + ", " + std::to_string(c) + ", " + std::to_string(t) + "], M " + std::to_string(m),
          args);
}

void dense_row(const char* name, const char* text, std::int64_t n, std::int64_t k, std::int64_t m, const Args& args) {
  const NamedTensors in{{"x", uniform_tensor({n, k}, 1, -1, 1)}, {"w", uniform_tensor({k, m}, 2, -0.3f, 0.3f)},
                        {"b", uniform_tensor({m}, 3, -0.1f, 0.1f)}};
  run_row(name, text, in, "[" + std::to_string(n) + ", " + std::to_string(k) + "] x [" + std::to_string(k) + ", " +
                              std::to_string(m) + "]",
          args);
}

}  // namespace

int main(int argc, char** argv) {
  canary::bench::run_on_one_thread(argv);
  const Args args = canary::bench::parse_round_args(argc, argv, {9, 20.0});
  std::printf("| model | shape | epilogue ms | separate ms | interpreter ms | separate/epilogue | interp/epilogue | "
              "max|diff| | planned |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  conv_row(8, 7, 32, 64, args);
  conv_row(64, 7, 32, 256, args);
  conv_row(64, 32, 32, 256, args);
  dense_row("gemm+relu", kGemmRelu, 64, 32, 32, args);
  dense_row("gemm+relu", kGemmRelu, 1024, 256, 256, args);
  dense_row("matmul+tanh", kMatmulTanh, 64, 32, 32, args);
  dense_row("matmul+tanh", kMatmulTanh, 1024, 256, 256, args);
  dense_row("matmul+bias+relu", kMatmulBiasRelu, 64, 32, 32, args);
  dense_row("matmul+bias+relu", kMatmulBiasRelu, 1024, 64, 256, args);
  dense_row("matmul+bias+relu", kMatmulBiasRelu, 4096, 64, 256, args);
  dense_row("matmul+residual", kMatmulResidual, 1024, 256, 256, args);
  dense_row("matmul+residual", kMatmulResidual, 4096, 256, 256, args);
  return 0;
}
