// The GPU check's engine rows: compiled traces with JitOptions::device "gpu"
// through the public API, against the interpreter and the CPU JIT, on a
// dynamic-shape stream; and a launch fault (CANARY_CUDA_FAULT=launch)
// mid-stream, after which the trace must finish on its x86 kernels with
// their bits and stay there.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "bench/gpu/api_values.h"
#include "bench/gpu/check_table.h"
#include "canary/canary.h"

namespace canary::gpu_check {
namespace {

// Two fused groups (one with transcendentals) around a MatMul: three device
// steps per compiled call (the product through FusedDevice::run_matmul).
const char* kModel = R"(canary v1
graph main(x: f32[N, 256], w: f32[256, 256], b: f32[256]) -> (y) {
  a = Add(x, b)
  t = Tanh(a)
  m = MatMul(t, w)
  s = Sigmoid(m)
  y = Mul(s, x)
}
)";

NamedTensors call_inputs(std::int64_t rows, std::uint32_t seed) {
  std::mt19937 rng(seed);
  return {{"x", uniform({rows, 256}, rng, -2.0f, 2.0f)},
          {"w", uniform({256, 256}, rng, -0.1f, 0.1f)},
          {"b", uniform({256}, rng, -1.0f, 1.0f)}};
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::equal(a.data<float>(), a.data<float>() + a.numel(), b.data<float>());
}

}  // namespace

void check_engine_stream(std::vector<Row>& rows, std::int64_t max_batch) {
  Runtime gpu_rt(engine_options("gpu")), cpu_rt(engine_options("cpu"));
  Options interp;
  interp.jit.enabled = false;
  Runtime ref_rt(interp);
  const Model gpu_model = gpu_rt.load_text(kModel);
  Session gpu = gpu_model.session(), cpu = cpu_rt.load_text(kModel).session(),
          ref = ref_rt.load_text(kModel).session();
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::int64_t> batch(1, max_batch);
  double worst = 0.0;
  std::vector<double> gpu_us, cpu_us;
  for (int call = 0; call < 200; ++call) {
    const NamedTensors in = call_inputs(batch(rng), static_cast<std::uint32_t>(call));
    const auto t0 = std::chrono::steady_clock::now();
    const Tensor g = gpu.run(in).at("y");
    const auto t1 = std::chrono::steady_clock::now();
    cpu.run(in);
    const auto t2 = std::chrono::steady_clock::now();
    worst = std::max(worst, max_relative(g, ref.run(in).at("y")));
    gpu_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    cpu_us.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
  }
  const JitStats& j = gpu.stats().jit;
  const std::string device = gpu_model.jit_report().device;
  char text[400];
  std::snprintf(text, sizeof text,
                "200 calls, batch 1..%lld on %s: %llu compiled entries, %llu steps run on the GPU (%.1f MB moved), "
                "%llu fallbacks, %llu compiles; max rel diff vs interpreter %.2e; p50 %.0f us (CPU JIT %.0f us)",
                static_cast<long long>(max_batch), device.empty() ? "no device" : device.c_str(), static_cast<unsigned long long>(j.compiled_entries),
                static_cast<unsigned long long>(j.device_fused_calls), static_cast<double>(j.device_bytes) / 1e6,
                static_cast<unsigned long long>(j.device_fallbacks), static_cast<unsigned long long>(j.compiles),
                worst, median(gpu_us), median(cpu_us));
  const bool ok = !device.empty() && j.device_fused_calls > 0 && j.device_fallbacks == 0 && worst <= 1e-5;
  rows.push_back({"engine: traces on the GPU", text, ok});
}

void check_engine_fallback(std::vector<Row>& rows) {
  Runtime gpu_rt(engine_options("gpu")), cpu_rt(engine_options("cpu"));
  const Model gpu_model = gpu_rt.load_text(kModel);
  Session gpu = gpu_model.session(), cpu = cpu_rt.load_text(kModel).session();
  bool bits = true;
  std::uint64_t device_runs_before_fault = 0;
  for (int call = 0; call < 12; ++call) {
    if (call == 6) {
      device_runs_before_fault = gpu.stats().jit.device_fused_calls;
      setenv("CANARY_CUDA_FAULT", "launch", 1);
    }
    const NamedTensors in = call_inputs(512, 100 + static_cast<std::uint32_t>(call));
    const Tensor g = gpu.run(in).at("y"), c = cpu.run(in).at("y");
    if (call >= 6) bits = bits && same_bits(g, c);
  }
  unsetenv("CANARY_CUDA_FAULT");
  const JitStats& j = gpu.stats().jit;
  std::size_t events = 0;
  for (const Event& e : gpu_model.events())
    if (e.kind == EventKind::Fallback && e.message.find("a step failed on") != std::string::npos) ++events;
  const bool ok = device_runs_before_fault > 0 && j.device_fused_calls == device_runs_before_fault &&
                  j.device_fallbacks == 1 && events == 1 && bits && gpu.stats().failed_calls == 0;
  char text[300];
  std::snprintf(text, sizeof text,
                "launch fault at call 7: %llu GPU runs before, none after, %llu fallback, %zu event, CPU bits after: %s",
                static_cast<unsigned long long>(device_runs_before_fault),
                static_cast<unsigned long long>(j.device_fallbacks), events, bits ? "yes" : "NO");
  rows.push_back({"engine: fault falls back", text, ok});
}

}  // namespace canary::gpu_check
