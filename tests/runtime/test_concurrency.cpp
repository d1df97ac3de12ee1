// Concurrency: many threads, each with its own Session on one shared Model,
// shapes changing independently per thread, while the background compile
// thread records, compiles and installs variants under them. Every output
// must equal what a single-threaded interpreter session computes for the same
// inputs. CANARY_STRESS_CALLS raises the number of calls per thread (the long
// mode: 100000 calls in all is `CANARY_STRESS_CALLS=12500` with 8 threads).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "host_fused_device.h"
#include "jit_test_models.h"

using namespace canary;
using namespace canary::test;

namespace {

// Calls per thread: the environment's CANARY_STRESS_CALLS, else `fallback`.
int calls_per_thread(int fallback) {
  if (const char* env = std::getenv("CANARY_STRESS_CALLS")) {
    const int n = std::atoi(env);
    if (n > 0) return n;
  }
  return fallback;
}

std::string data_file(const std::string& name) { return std::string(CANARY_TEST_DATA_DIR) + "/" + name; }

// The inputs of call `i` of thread `t` for the mlp model: rows change with
// the thread and the call, so threads see different shapes at different times.
NamedTensors mlp_inputs(int t, int i) {
  const std::int64_t rows = 1 + (t * 7 + i / 5) % 13;
  return {{"x", random_tensor({rows, 4}, static_cast<std::uint32_t>(t * 100003 + i))}};
}

NamedTensors conv_inputs(int t, int i) {
  const std::int64_t n = 1 + t % 3, length = 4 * (4 + (t + i / 7) % 9);
  return {{"signal", random_tensor({n, 2, length}, static_cast<std::uint32_t>(t * 7919 + i))}};
}

NamedTensors chain_inputs(int t, int i) {
  const std::int64_t rows = 1 + (t + i / 3) % 6, cols = 8 * (1 + (t * 3 + i / 11) % 5);
  return {{"x", random_tensor({rows, cols}, static_cast<std::uint32_t>(t * 31 + i))},
          {"b", random_tensor({cols}, static_cast<std::uint32_t>(i))}};
}

// Runs `threads` sessions of `model` concurrently, checking every output
// against a fresh interpreter session of `reference` (same graph, JIT off),
// each thread with its own. Returns the number of mismatches and failures.
template <typename Inputs>
int stress(const Model& model, const Model& reference, int threads, int calls, Inputs inputs, double tolerance) {
  std::atomic<int> bad{0};
  std::mutex report_mu;
  std::string first_report;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      Session s = model.session();
      Session ref = reference.session();
      for (int i = 0; i < calls; ++i) {
        const NamedTensors in = inputs(t, i);
        try {
          const NamedTensors got = s.run(in);
          const NamedTensors want = ref.run(in);
          for (const auto& [name, tensor] : want) {
            const Tensor& g = got.at(name);
            if (g.shape() != tensor.shape() || max_relative_difference(g, tensor) > tolerance) {
              std::lock_guard lock(report_mu);
              if (first_report.empty())
                first_report = "thread " + std::to_string(t) + " call " + std::to_string(i) + " output " + name;
              ++bad;
            }
          }
        } catch (const std::exception& e) {
          std::lock_guard lock(report_mu);
          if (first_report.empty()) first_report = std::string("thread threw: ") + e.what();
          ++bad;
        }
      }
    });
  for (std::thread& th : pool) th.join();
  INFO(first_report);
  CHECK(bad == 0);
  return bad;
}

// The If's direction flips within each thread's stream (side traces may be
// recorded, compiled and installed while other threads exit into them).
NamedTensors branch_inputs(int t, int i) {
  const std::int64_t rows = 2 + (t + i / 9) % 3;
  return {{"x", random_tensor({rows, 4}, static_cast<std::uint32_t>(t * 131 + i))},
          {"flag", Tensor::scalar<bool>((i / (1 + t % 3)) % 2 == 0)}};
}

Options background_jit() {
  Options o;
  o.jit.hot_threshold = 3;  // compiles happen early and often, under the sessions
  o.jit.hot_time_us = 0;  // tier up by visits only: deterministic
  o.jit.synchronous = false;
  return o;
}

std::size_t compiled_events(const Model& m) {
  const std::vector<Event> events = m.events();
  return static_cast<std::size_t>(
      std::count_if(events.begin(), events.end(), [](const Event& e) { return e.kind == EventKind::Compiled; }));
}

}  // namespace

TEST_CASE("concurrency: 8 sessions on one model, independent shapes, compiles under them", "[unit][concurrency][api]") {
  Runtime jit_rt(background_jit());
  Runtime ref_rt(interpreter_options());
  const int calls = calls_per_thread(150);
  SECTION("mlp (MatMul, Gemm, Softmax)") {
    const Model m = jit_rt.load(data_file("mlp.cnr"));
    stress(m, ref_rt.load(data_file("mlp.cnr")), 8, calls, mlp_inputs, 1e-5);
    m.wait_for_compiles();
    CHECK(m.jit_report().anchors.front().compiles >= 1);
  }
  SECTION("conv1d (Conv, Relu, ReduceMean)") {
    const Model m = jit_rt.load(data_file("conv1d.cnr"));
    stress(m, ref_rt.load(data_file("conv1d.cnr")), 8, calls, conv_inputs, 1e-5);
  }
  SECTION("an If taking both directions (side traces)") {
    const Model m = jit_rt.load(data_file("if_select.cnr"));
    const Model ref = ref_rt.load(data_file("if_select.cnr"));
    // Whether a side trace is installed before the streams end depends on
    // the compile thread's timing (every output is checked either way);
    // further rounds of the same streams give it time to land.
    for (int round = 0; round < 8 && m.jit_report().anchors.front().side_traces.empty(); ++round) {
      stress(m, ref, 8, calls, branch_inputs, 0.0);
      m.wait_for_compiles();
    }
    CHECK_FALSE(m.jit_report().anchors.front().side_traces.empty());
  }
  SECTION("fused elementwise chain") {
    const Model m = elementwise_chain(jit_rt);
    const Model ref = elementwise_chain(ref_rt);
    // How many compiles land while the streams run depends on the compile
    // thread's share of the cores (on a loaded machine the first one may
    // finish after the streams end); further rounds of the same streams
    // give the retrace its guard failures.
    for (int round = 0; round < 8 && compiled_events(m) < 2; ++round) {
      stress(m, ref, 8, calls, chain_inputs, 1e-5);
      m.wait_for_compiles();
    }
    CHECK(compiled_events(m) >= 2);
  }
}

TEST_CASE("concurrency: the cost model's trials with sessions on several threads", "[unit][concurrency][cost][api]") {
  Options o = background_jit();
  o.cost.enabled = true;
  o.cost.trial_calls = 4;
  o.cost.noise_copies = 1;
  Runtime jit_rt(o);
  Runtime ref_rt(interpreter_options());
  const Model m = elementwise_chain(jit_rt);
  stress(m, elementwise_chain(ref_rt), 6, calls_per_thread(120), chain_inputs, 1e-5);
  m.wait_for_compiles();
  const std::vector<Event> events = m.events();
  // The cost model was at work (a trial started); whether it has decided by
  // now depends on how the threads' shapes and the shadow budget fell, and
  // what this test checks is that every output stayed right meanwhile.
  CHECK(std::any_of(events.begin(), events.end(), [](const Event& e) { return e.kind == EventKind::Decision; }));
}

TEST_CASE("concurrency: sessions on several threads run groups on a device that fails under them",
          "[unit][concurrency][device][api]") {
  // Runs 1..40 succeed, then every run fails: some threads are mid-call on
  // the device when another's failure turns it off for the trace.
  HostFusedDevice::Script script;
  script.fail_from_run = 41;
  auto device = std::make_shared<HostFusedDevice>(script);
  jit::ScopedDeviceOverride installed(device);
  Options o = background_jit();
  o.jit.synchronous = true;  // the symbolic retrace lands within the streams, on the thread that recorded it
  o.jit.device = "gpu";
  Runtime rt(o), ref_rt(interpreter_options());
  const Model model = elementwise_chain(rt), reference = elementwise_chain(ref_rt);
  const int calls = calls_per_thread(120);
  stress(model, reference, 8, calls, chain_inputs, 1e-5);
  JitStats stats;
  {
    Session s = model.session();
    s.run(chain_inputs(0, 0));
    stats = s.stats().jit;
  }
  INFO(event_messages(model));
  CHECK(device->runs() >= 41);  // the device ran, and failed
  // Each trace that met a failure reports it once, however many threads met it.
  std::map<std::uint32_t, int> failures_per_trace;
  for (const Event& e : model.events())
    if (e.kind == EventKind::Fallback && e.message.find("a step failed on host:0 test device") != std::string::npos)
      ++failures_per_trace[e.trace];
  CHECK_FALSE(failures_per_trace.empty());
  for (const auto& [trace, count] : failures_per_trace) {
    INFO("trace " << trace);
    CHECK(count == 1);
  }
  CHECK(failures_per_trace.size() == stats.device_fallbacks);
}
