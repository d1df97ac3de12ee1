// Fused elementwise groups whose innermost collapsed dim is short: a
// per-channel normalisation y = Relu((x - m) * s) * 0.5 + x of x f32[R, C]
// with m, s f32[C], at a fixed R * C = 2^20 and C from 5 to 1024.
//
//   OMP_NUM_THREADS=1 build/bench/canary_bench_jit_short_rows [--rounds R] [--target-ms T]
//
// Rows of 5 to 100 floats tile (not a multiple of 16 floats, under 128);
// rows of 16, 64 and 1024 floats do not and show the long-row time. The
// table repeats on the AVX-512 and AVX2 tiers.
//
// A second model scales each row by its own value (r f32[R, 1]) and takes
// tanh: its short rows tile through the group's per-element kernel, with r
// expanded for each chunk of tiles (fused_tiling.h).
//
// A third table measures the versions a symbolic compile holds
// (jit/plan_versions.h): the per-row scale model compiled symbolic from a
// call of long rows (300 floats), once after rows of C floats had been
// seen (the dim's facts reach down to C, so the compile holds the
// per-element kernel) and once when only long rows came before (it does
// not); then both run calls of rows of C floats.
//
// Every row count moves the same bytes, so the time per call shows what the
// kernel's per-row work costs against the same group over long rows. Sessions,
// in rotating order: the exact-shape variant (one shape seen), the symbolic
// one (R seen with two other values first), the symbolic one with
// JitOptions::short_row_tiles off (every call row by row), the interpreter.
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

const char* kNormalise = R"(canary v1
graph main(x: f32[R, C], m: f32[C], s: f32[C]) -> (y) {
  const h: f32[] = [0.5]
  a = Sub(x, m)
  b = Mul(a, s)
  c = Relu(b)
  d = Mul(c, h)
  y = Add(d, x)
}
)";

// A per-row scale instead: r holds one value per row, so rows do not tile;
// tanh makes the kernel compute-bound, so each row's tail shows.
const char* kScaled = R"(canary v1
graph main(x: f32[R, C], m: f32[C], r: f32[R, 1]) -> (y) {
  a = Sub(x, m)
  b = Mul(a, r)
  y = Tanh(b)
}
)";

constexpr std::int64_t kElements = std::int64_t{1} << 20;

NamedTensors normalise_inputs(std::int64_t rows, std::int64_t cols) {
  return {{"x", uniform_tensor({rows, cols}, 1, -1, 1)},
          {"m", uniform_tensor({cols}, 2, -0.1f, 0.1f)},
          {"s", uniform_tensor({cols}, 3, 0.5f, 2.0f)}};
}

NamedTensors scaled_inputs(std::int64_t rows, std::int64_t cols) {
  return {{"x", uniform_tensor({rows, cols}, 1, -1, 1)},
          {"m", uniform_tensor({cols}, 2, -0.1f, 0.1f)},
          {"r", uniform_tensor({rows, 1}, 3, 0.5f, 2.0f)}};
}

struct BenchModel {
  const char* name;
  const char* text;
  NamedTensors (*inputs)(std::int64_t rows, std::int64_t cols);
};

canary::Options tiles_options(bool jit, bool tiles, const char* isa) {
  canary::Options o = canary::bench::jit_bench_options(jit, 1);
  o.jit.short_row_tiles = tiles;
  o.jit.isa = isa;
  return o;
}

void row(const BenchModel& model, const char* isa, std::int64_t cols, const Args& args) {
  const std::int64_t rows = kElements / cols;
  canary::Runtime exact_rt(tiles_options(true, true, isa)), symbolic_rt(tiles_options(true, true, isa));
  canary::Runtime untiled_rt(tiles_options(true, false, isa)), plain_rt(tiles_options(false, false, isa));
  canary::Model exact_model = exact_rt.load_text(model.text), symbolic_model = symbolic_rt.load_text(model.text);
  canary::Model untiled_model = untiled_rt.load_text(model.text);
  canary::Session exact = exact_model.session(), symbolic = symbolic_model.session();
  canary::Session untiled = untiled_model.session(), plain = plain_rt.load_text(model.text).session();
  const NamedTensors in = model.inputs(rows, cols);
  for (int i = 0; i < 3; ++i) exact.run(in);
  // Two other row counts make R symbolic; then the timed shape runs compiled.
  for (canary::Session* s : {&symbolic, &untiled}) {
    for (int i = 0; i < 4; ++i) s->run(model.inputs(rows + 1 + i % 2, cols));
    for (int i = 0; i < 3; ++i) s->run(in);
  }
  const canary::Tensor want = plain.run(in).at("y");
  double diff = 0;
  for (canary::Session* s : {&exact, &symbolic, &untiled}) diff = std::max(diff, max_abs_diff(s->run(in).at("y"), want));
  const int calls = std::max(1, canary::bench::calls_for(args.target_ms, [&] { exact.run(in); }));
  std::vector<double> samples[4];
  canary::Session* const sessions[4] = {&exact, &symbolic, &untiled, &plain};
  canary::bench::rotating_samples(sessions, in, args.rounds, calls, samples);
  const double e = median(samples[0]), s = median(samples[1]), u = median(samples[2]), p = median(samples[3]);
  const double per_ns = 1e6 / static_cast<double>(kElements);
  std::printf("| %s | %s | [%lld, %lld] | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f | %.1f | %.1e |\n", model.name, isa,
              static_cast<long long>(rows), static_cast<long long>(cols), e, s, u, p, s * per_ns, u * per_ns, u / s,
              p / s, diff);
}

// Warms a session so that its symbolic compile records rows of 300 floats:
// exact at 200, then refused twice (by `first_refused` columns, then 300).
void learn_then_record_long_rows(canary::Session& s, std::int64_t first_refused) {
  for (int i = 0; i < 3; ++i) s.run(scaled_inputs(700, 200));
  s.run(scaled_inputs(640, first_refused));
  s.run(scaled_inputs(900, 300));
}

void seen_row(const char* isa, std::int64_t cols, const Args& args) {
  const std::int64_t rows = kElements / cols;
  canary::Runtime seen_rt(tiles_options(true, true, isa)), unseen_rt(tiles_options(true, true, isa));
  canary::Runtime plain_rt(tiles_options(false, false, isa));
  canary::Model seen_model = seen_rt.load_text(kScaled), unseen_model = unseen_rt.load_text(kScaled);
  canary::Session seen = seen_model.session(), unseen = unseen_model.session();
  canary::Session plain = plain_rt.load_text(kScaled).session();
  learn_then_record_long_rows(seen, cols);
  learn_then_record_long_rows(unseen, 250);
  const NamedTensors in = scaled_inputs(rows, cols);
  const canary::Tensor want = plain.run(in).at("y");
  const double diff = std::max(max_abs_diff(seen.run(in).at("y"), want), max_abs_diff(unseen.run(in).at("y"), want));
  const int calls = std::max(1, canary::bench::calls_for(args.target_ms, [&] { seen.run(in); }));
  std::vector<double> samples[2];
  canary::Session* const sessions[2] = {&seen, &unseen};
  canary::bench::rotating_samples(sessions, in, args.rounds, calls, samples);
  const double a = median(samples[0]), b = median(samples[1]);
  const auto compiles = [](const canary::Session& s) { return static_cast<unsigned long long>(s.stats().jit.compiles); };
  const auto tiled = [](const canary::Session& s) {
    return static_cast<unsigned long long>(s.stats().jit.tiled_fused_calls);
  };
  std::printf("| %s | [%lld, %lld] | %.3f | %.3f | %.2f | %llu / %llu | %llu / %llu | %.1e |\n", isa,
              static_cast<long long>(rows), static_cast<long long>(cols), a, b, b / a, compiles(seen), compiles(unseen),
              tiled(seen), tiled(unseen), diff);
}

}  // namespace

int main(int argc, char** argv) {
  canary::bench::run_on_one_thread(argv);
  const Args args = canary::bench::parse_round_args(argc, argv, {9, 15.0});
  std::printf("| model | isa | x | exact ms | symbolic ms | symbolic untiled ms | interp ms | symbolic ns/elem | untiled ns/elem | "
              "untiled/symbolic | interp/symbolic | max|diff| |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  const BenchModel normalise{"normalise", kNormalise, normalise_inputs}, scaled{"per-row scale", kScaled, scaled_inputs};
  for (const char* isa : {"avx512", "avx2"})
    for (std::int64_t cols : {5, 7, 8, 12, 20, 100, 16, 64, 1024}) row(normalise, isa, cols, args);
  for (const char* isa : {"avx512", "avx2"})
    for (std::int64_t cols : {5, 12, 20, 100, 1024}) row(scaled, isa, cols, args);
  std::printf("\n| isa | x | short rows seen ms | not seen ms | not seen/seen | compiles seen / not | tiled calls "
              "seen / not | max|diff| |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const char* isa : {"avx512", "avx2"})
    for (std::int64_t cols : {5, 12, 20}) seen_row(isa, cols, args);
  return 0;
}
