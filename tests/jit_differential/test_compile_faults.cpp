// Forced compile failures, through JitOptions::fault_injection and through the
// CANARY_JIT_FAULT environment variable: nothing throws, CompileFailed events
// are recorded, and the outputs are those of the interpreter, bit for bit.
// Forced kernel failures in compiled code: the exit and the interpreter's
// run from there agree with the interpreter.
#include <catch2/catch.hpp>

#include <array>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/fault_injection.h"
#include "tests/jit_differential/differential_harness.h"
#include "tests/jit_differential/seeded_rng.h"

using namespace canary::differential;
using canary::DType;
using canary::EventKind;
using canary::Tensor;

namespace {

// Sets an environment variable for a scope and restores the previous state.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// An elementwise + matmul + reduction model over x: f32[N, 3].
const char* const kFaultModel = R"(canary v1
symbols {
  N in [1, 4096]
}
graph main(x: f32[N, 3]) -> (y, total) {
  const w: f32[3, 4] = [0.5, -0.25, 0.125, 1, 0, -1, 0.25, 0.5, 0.75, -0.5, 0.25, 1]
  const one: f32[] = [1]
  const axis: i64[1] = [1]
  h = MatMul(x, w)
  c = Clip(h, _, one)
  e = Exp(c)
  a = Abs(h)
  p = Add(a, one)
  l = Log(p)
  d = Sub(e, l)
  t = Tanh(d)
  y = Softmax(t) {axis = -1}
  total = ReduceSum(t, axis) {keepdims = 0}
}
)";

// An [n, 3] input with values uniform in [-2, 2].
Tensor random_rows(SeededRng& rng, std::int64_t n) {
  Tensor t = Tensor::empty(DType::F32, {n, 3});
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(rng.uniform(-2.0, 2.0));
  return t;
}

struct FaultRun {
  std::vector<canary::Event> events;
  canary::JitStats stats;
};

// Runs 40 calls with changing batch sizes on jit_rt and on the interpreter;
// every output must be identical (tolerance 0, same NaN/Inf positions).
FaultRun run_identical(const canary::Runtime& jit_rt) {
  canary::Runtime interp_rt(interpreter_options());
  canary::Model model = jit_rt.load_text(kFaultModel), plain = interp_rt.load_text(kFaultModel);
  canary::Session jit = model.session(), interp = plain.session();
  SeededRng rng(77);
  const std::int64_t sizes[] = {5, 5, 5, 5, 64, 64, 5, 1, 300, 5, 2, 2, 4096, 5};
  for (int i = 0; i < 40; ++i) {
    canary::NamedTensors in{{"x", random_rows(rng, sizes[i % 14])}};
    canary::NamedTensors a, b;
    REQUIRE_NOTHROW(a = jit.run(in));
    b = interp.run(in);
    for (const char* name : {"y", "total"}) {
      CompareResult c = compare_tensors(a.at(name), b.at(name), Tolerance{});
      INFO("call " << i + 1 << ", output " << name);
      REQUIRE(c.difference == "");
    }
  }
  return FaultRun{model.events(), jit.stats().jit};
}

// Requires the JIT's events when it is active, or warns that it is not.
bool jit_active(const std::vector<canary::Event>& events) {
  if (events.empty()) FAIL("Model::events() is empty: the JIT is not active");
  return true;
}

// Every compile failed: CompileFailed events and counters, nothing compiled or entered.
void check_every_compile_failed(const FaultRun& r) {
  if (!jit_active(r.events)) return;
  INFO("events:\n" << describe_events(r.events, 40));
  std::array<std::size_t, kEventKinds> counts = count_events(r.events);
  REQUIRE(counts[static_cast<std::size_t>(EventKind::CompileFailed)] >= 1);
  REQUIRE(counts[static_cast<std::size_t>(EventKind::Compiled)] == 0);
  REQUIRE(r.stats.compile_failures >= 1);
  REQUIRE(r.stats.compiled_entries == 0);
  REQUIRE(r.stats.variants_installed == 0);
}

}  // namespace

TEST_CASE("faults: fault_injection \"compile\" leaves outputs identical to the interpreter",
          "[differential][jit][faults]") {
  canary::Runtime rt(jit_options(1, false, "compile"));
  check_every_compile_failed(run_identical(rt));
}

TEST_CASE("faults: CANARY_JIT_FAULT=compile set before the Runtime has the same effect", "[differential][jit][faults]") {
  ScopedEnv fault("CANARY_JIT_FAULT", "compile");
  canary::Runtime rt(jit_options(1));
  check_every_compile_failed(run_identical(rt));
}

TEST_CASE("faults: fault_injection \"compile:1\" fails only the first compile", "[differential][jit][faults]") {
  canary::Runtime jit_rt(jit_options(1, false, "compile:1")), interp_rt(interpreter_options());
  canary::Model model = jit_rt.load_text(kFaultModel), plain = interp_rt.load_text(kFaultModel);
  canary::Session jit = model.session(), interp = plain.session();
  SeededRng rng(78);
  for (int i = 0; i < 60; ++i) {
    canary::NamedTensors in{{"x", random_rows(rng, i < 30 ? 8 : 3)}};
    canary::NamedTensors a, b;
    REQUIRE_NOTHROW(a = jit.run(in));
    b = interp.run(in);
    // Softmax rows and sums of Tanh over 4 entries: a few ulp of fused math apart at most.
    CHECK(compare_tensors(a.at("y"), b.at("y"), Tolerance{2e-6, 0}).difference == "");
    CHECK(compare_tensors(a.at("total"), b.at("total"), Tolerance{4e-6, 0}).difference == "");
  }
  std::vector<canary::Event> events = model.events();
  if (!jit_active(events)) return;
  INFO("events:\n" << describe_events(events, 40));
  std::optional<EventKind> first;
  for (const canary::Event& e : events)
    if (!first && (e.kind == EventKind::Compiled || e.kind == EventKind::CompileFailed)) first = e.kind;
  REQUIRE(first == EventKind::CompileFailed);
  REQUIRE(count_events(events)[static_cast<std::size_t>(EventKind::CompileFailed)] == 1);
  REQUIRE(jit.stats().jit.compile_failures == 1);
}

TEST_CASE("faults: random graphs under fault injection match the interpreter bit for bit", "[differential][jit][faults]") {
  DifferentialRunner runner;
  std::size_t failed_compiles = 0, compiled = 0, any_events = 0;
  for (std::uint64_t seed = 500000; seed < 500100; ++seed) {
    RandomGraph graph = generate_random_graph(seed);
    HarnessOptions options;
    options.hot_threshold = 1;
    options.fault_injection = "compile";
    options.identical_to_interpreter = true;
    options.compare_reference = false;
    DifferentialReport r = runner.run(graph, generate_shape_stream(graph, seed), options);
    if (!r.ok()) FAIL_CHECK(r.failure);
    CHECK(r.error_calls == 0);
    failed_compiles += r.count(EventKind::CompileFailed);
    compiled += r.count(EventKind::Compiled);
    for (std::size_t n : r.events) any_events += n;
  }
  CHECK(compiled == 0);
  REQUIRE(any_events > 0);
  REQUIRE(failed_compiles > 0);
}

TEST_CASE("faults: random graphs whose compiled code fails one kernel call mid-stream agree with the interpreter",
          "[differential][jit][faults]") {
  // The exit lands on a random step of a random call: where fused groups
  // were sunk past that step, the exit replays their ops first (Step::replay).
  DifferentialRunner runner;
  std::size_t deopts = 0, faults = 0;
  for (std::uint64_t seed = 510000; seed < 510200; ++seed) {
    RandomGraph graph = generate_random_graph(seed);
    HarnessOptions options;
    options.hot_threshold = 1;
    canary::configure_faults("kernel@" + std::to_string(1 + seed % 12));
    DifferentialReport r = runner.run(graph, generate_shape_stream(graph, seed), options);
    faults += canary::faults_taken(canary::FaultPoint::KernelExecution);
    canary::configure_faults("");
    if (!r.ok()) FAIL_CHECK(r.failure);
    CHECK(r.error_calls == 0);
    deopts += r.jit.deopts;
  }
  INFO(faults << " kernel calls failed, " << deopts << " deopts");
  CHECK(faults > 100);
  CHECK(deopts >= faults);
}

