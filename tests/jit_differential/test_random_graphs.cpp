// Differential tests over seeded random graphs: every output of every call
// agrees between the JIT, the interpreter and the fp64 reference; with NaN/Inf
// inputs, the JIT and the interpreter put non-finite values in the same places
// and both agree with the reference wherever it is finite (except where an
// infinity was clamped to the f32 limits: see differential_harness.h).
//
// CANARY_LONG_TESTS=1 runs 20 times as many graphs (20,000 instead of 1,000).
// CANARY_DIFF_SEED=<seed> replays one graph (the seed a failure prints) in
// whichever test case is selected, e.g.
//   CANARY_DIFF_SEED=129 canary_jit_differential_tests "differential: 1000*"
//   CANARY_DIFF_SEED=900025 canary_jit_differential_tests "differential: with NaN*".
// CANARY_DIFF_MAX_FAILURES=<n> reports up to n failing graphs (default 3).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "tests/gpu_expectation.h"
#include "tests/jit_differential/differential_harness.h"
#include "tests/jit_differential/seeded_rng.h"

using namespace canary::differential;
using canary::EventKind;

namespace {

// Stop after this many failing graphs (each failure prints its graph);
// CANARY_DIFF_MAX_FAILURES=<n> raises it to survey many failures at once.
int max_reported_failures() {
  const char* env = std::getenv("CANARY_DIFF_MAX_FAILURES");
  return env ? std::atoi(env) : 3;
}

// The seeds to run: CANARY_DIFF_SEED alone, or `count` from first (20 times
// as many with CANARY_LONG_TESTS=1).
std::vector<std::uint64_t> suite_seeds(std::uint64_t first, std::size_t count) {
  if (const char* replay = std::getenv("CANARY_DIFF_SEED")) return {std::strtoull(replay, nullptr, 10)};
  const char* long_tests = std::getenv("CANARY_LONG_TESTS");
  if (long_tests && std::string(long_tests) == "1") count *= 20;
  std::vector<std::uint64_t> seeds;
  for (std::size_t i = 0; i < count; ++i) seeds.push_back(first + i);
  return seeds;
}

// The harness settings of a seed: hot threshold 1 or 2, value canaries on a
// quarter of the graphs, the vector tiers in turn (the host's best, AVX2,
// scalar: every tier the JIT may pick on some machine), and a fifth of the
// graphs with their fused groups on a device (the host stand-in).
HarnessOptions options_for(std::uint64_t seed) {
  HarnessOptions o;
  o.hot_threshold = seed % 2 == 0 ? 1 : 2;
  o.value_canaries = seed % 4 == 3;
  static const char* const kIsas[] = {"auto", "avx2", "scalar"};
  o.isa = kIsas[seed % 3];
  o.device = seed % 5 == 2;  // a fifth of the graphs run their fused groups on the host stand-in device
  return o;
}

// Totals over a suite run.
struct Totals {
  std::size_t graphs = 0, calls = 0, error_calls = 0, failures = 0;
  std::size_t if_graphs = 0, if_both_branches = 0;
  std::size_t compiled = 0, compile_failed = 0, compiled_entries = 0, side_trace_entries = 0, tiled_calls = 0;
  std::size_t device_calls = 0, device_row_runs = 0, device_chains = 0, device_fallbacks = 0;
  std::int64_t compared = 0, non_finite = 0, saturated = 0;
  double worst_jit = 0, worst_reference = 0;
  std::string device, device_absent;  // of the last graph

  // Adds one graph's report.
  void add(const DifferentialReport& r) {
    ++graphs;
    device = r.device;
    device_absent = r.device_absent;
    calls += r.calls;
    error_calls += r.error_calls;
    failures += r.ok() ? 0 : 1;
    if (r.then_calls + r.else_calls > 0) {
      ++if_graphs;
      if_both_branches += (r.then_calls > 0 && r.else_calls > 0) ? 1 : 0;
    }
    compiled += r.count(EventKind::Compiled);
    compile_failed += r.count(EventKind::CompileFailed);
    compiled_entries += r.jit.compiled_entries;
    side_trace_entries += r.jit.side_trace_entries;
    tiled_calls += r.jit.tiled_fused_calls;
    device_calls += r.jit.device_fused_calls;
    device_row_runs += r.device_row_runs;
    device_chains += r.jit.device_chain_calls;
    device_fallbacks += r.jit.device_fallbacks;
    compared += r.compared;
    non_finite += r.non_finite;
    saturated += r.saturated;
    worst_jit = std::max(worst_jit, r.worst_jit_ratio);
    worst_reference = std::max(worst_reference, r.worst_reference_ratio);
  }
};

// Runs the seeds through the harness, failing (with the replay description)
// on every bad graph; with cuda_device, every graph's fused groups are
// offered to the CUDA backend instead of a fifth of them to the stand-in.
Totals run_suite(const std::vector<std::uint64_t>& seeds, const ValueOptions& values, bool compare_reference,
                 bool cuda_device = false) {
  DifferentialRunner runner;
  Totals totals;
  for (std::uint64_t seed : seeds) {
    RandomGraph graph = generate_random_graph(seed);
    std::vector<StreamCall> stream = generate_shape_stream(graph, SeededRng::mix(seed));
    HarnessOptions options = options_for(seed);
    options.values = values;
    options.compare_reference = compare_reference;
    if (cuda_device) {
      options.device = false;
      options.cuda_device = true;
    }
    DifferentialReport report = runner.run(graph, stream, options);
    totals.add(report);
    if (!report.ok()) {
      FAIL_CHECK(report.failure);
      if (static_cast<int>(totals.failures) >= max_reported_failures()) break;
    }
  }
  return totals;
}

// Checks that the JIT compiled something, or says that it is not active yet.
void check_jit_was_active(const Totals& t) {
  INFO("Compiled events " << t.compiled << ", CompileFailed " << t.compile_failed << ", compiled entries "
                          << t.compiled_entries);
  if (t.compiled + t.compile_failed == 0) FAIL("the JIT recorded no compile at all: it is not active");
  CHECK(t.compiled > 0);
  CHECK(t.compiled_entries > 0);
}

}  // namespace

TEST_CASE("differential: 1000 random graphs agree across the JIT and the interpreter and the fp64 reference", "[differential][jit]") {
  std::vector<std::uint64_t> seeds = suite_seeds(1, 1000);
  Totals t = run_suite(seeds, ValueOptions{}, true);
  INFO(t.graphs << " graphs, " << t.calls << " calls, " << t.compared << " elements; worst JIT/tolerance "
                << t.worst_jit << ", worst reference/tolerance " << t.worst_reference);
  CHECK(t.failures == 0);
  CHECK(t.error_calls == 0);  // generated graphs are valid for every call of their stream
  CHECK(t.calls >= 6 * t.graphs);
  if (seeds.size() > 1) {
    CHECK(t.if_graphs > t.graphs / 10);
    CHECK(t.if_both_branches * 10 >= t.if_graphs * 7);  // the data-driven If takes both branches over a stream
    INFO(t.side_trace_entries << " exits continued in side traces");
    CHECK(t.side_trace_entries > 0);  // so the comparisons cover side traces too
    INFO(t.tiled_calls << " fused calls ran short rows as long tiles");
    CHECK(t.tiled_calls > 0);  // and fused calls that tile their short rows
    INFO(t.device_calls << " fused calls ran on the stand-in device, " << t.device_row_runs << " of them row kernels, "
                        << t.device_chains << " chains of them as one call");
    CHECK(t.device_calls > 0);        // and groups placed on a device
    CHECK(t.device_row_runs > 0);     // row kernels among them
    CHECK(t.device_chains > 0);       // and chains, whose values left on the device read as NaN on the host
    CHECK(t.device_fallbacks == 0);   // which never fails
  }
  CHECK(t.non_finite == 0);  // well-conditioned graphs never overflow
  check_jit_was_active(t);
}

TEST_CASE("differential: random graphs agree with their fused groups on the CUDA backend",
          "[differential][jit][gpu]") {
  // Each graph's fused groups and row kernels go through the real backend:
  // placement, the module cache, the arena, staging, parameter blocks,
  // grids and device chains. Without a GPU this runs on the PTX emulator
  // (ctest's "jit_differential-emulated/") or skips.
  std::vector<std::uint64_t> seeds = suite_seeds(500000, 300);
  Totals t = run_suite(seeds, ValueOptions{}, true, true);
  if (t.device.empty()) {
    if (canary::test::gpu_expected()) FAIL("CANARY_EXPECT_GPU is set but no GPU is usable: " << t.device_absent);
    WARN("skipped: no usable GPU (" << t.device_absent << ")");
    CHECK_FALSE(t.device_absent.empty());
    return;
  }
  INFO(t.graphs << " graphs on " << t.device << ", " << t.calls << " calls; " << t.device_calls
                << " fused calls on the device, " << t.device_chains << " chains; worst JIT/tolerance " << t.worst_jit
                << ", worst reference/tolerance " << t.worst_reference);
  CHECK(t.failures == 0);
  CHECK(t.error_calls == 0);
  CHECK(t.device_calls > 0);
  CHECK(t.device_chains > 0);
  CHECK(t.device_fallbacks == 0);  // no launch failed, faulted or was refused by the driver
  check_jit_was_active(t);
}

TEST_CASE("differential: with NaN/Inf inputs the JIT and the interpreter agree on non-finite positions",
          "[differential][jit][non_finite]") {
  std::vector<std::uint64_t> seeds = suite_seeds(900000, 300);
  ValueOptions values;
  values.non_finite_fraction = 0.05;
  Totals t = run_suite(seeds, values, true);
  INFO(t.graphs << " graphs, " << t.calls << " calls, " << t.non_finite << " non-finite output elements, "
                << t.compared << " compared, " << t.saturated << " left out as dependent on a clamped infinity");
  CHECK(t.failures == 0);
  CHECK(t.error_calls == 0);
  if (seeds.size() > 1) {
    CHECK(t.non_finite > 1000);            // the injected values do reach the outputs
    CHECK(t.saturated < t.compared / 100);  // the clamped-infinity mask leaves almost everything compared
  }
  check_jit_was_active(t);
}
